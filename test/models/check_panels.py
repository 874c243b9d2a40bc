#!/usr/bin/env python3
"""Constant matmul weights packed into panels, against ONNX Runtime: Gemm
and MatMul with one, two, three and eight rows (the GEMV's 64- or 32-wide
panels, the others' 16 or 32), columns that fill whole panels and columns
that leave the last one zero-padded, B as it lies and transposed (Gemm's
transB). Compiled for the build machine's CPU and for x86-64-v3 (AVX2
panel widths on any machine that runs them).

  check_panels.py --kiln K --kiln-run R --work DIR
"""
import argparse
import os
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper


def make(path, m, k, n, trans_b, gemm):
    rng = np.random.default_rng(m * 1000 + n)
    w = rng.standard_normal((n, k) if trans_b else (k, n), dtype=np.float32)
    inits = [numpy_helper.from_array(w, "W")]
    if gemm:
        inits.append(numpy_helper.from_array(rng.standard_normal(n, dtype=np.float32), "bias"))
        node = helper.make_node("Gemm", ["A", "W", "bias"], ["Y"], transB=int(trans_b))
    else:
        node = helper.make_node("MatMul", ["A", "W"], ["Y"])
    graph = helper.make_graph(
        [node], "panels", [helper.make_tensor_value_info("A", TensorProto.FLOAT, [m, k])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [m, n])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)
    return rng.standard_normal((m, k), dtype=np.float32)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--kiln-run", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    failures = 0
    cases = 0
    # Columns: 4 whole 64-wide panels (256) or 8 of 32 or 16 of 16; and
    # the same plus a few columns (a padded last panel).
    for m in (1, 2, 3, 8):
        for n in (256, 259):
            for trans_b, gemm in ((False, False), (True, True), (False, True)):
                name = f"m{m}_n{n}_{'gemm' if gemm else 'matmul'}{'_tb' if trans_b else ''}"
                d = os.path.join(args.work, name)
                data = os.path.join(d, "test_data_set_0")
                os.makedirs(data, exist_ok=True)
                model = os.path.join(d, "model.onnx")
                a = make(model, m, 40, n, trans_b, gemm)
                y = ort.InferenceSession(model, providers=["CPUExecutionProvider"]).run(
                    None, {"A": a})[0]
                for i, t in (("input_0", a), ("output_0", y)):
                    with open(os.path.join(data, f"{i}.pb"), "wb") as f:
                        f.write(numpy_helper.from_array(t).SerializeToString())
                for cpu in ("native", "x86-64-v3"):
                    cases += 1
                    out = os.path.join(d, cpu.replace("-", "_"))
                    flags = [] if cpu == "native" else [f"--target-cpu={cpu}"]
                    c = subprocess.run([args.kiln, "compile", model, "-o", out, "-q"] + flags,
                                       capture_output=True, text=True)
                    r = c if c.returncode else subprocess.run(
                        [args.kiln_run, os.path.join(d, f"lib{os.path.basename(out)}.so"),
                         "--check-dir", data, "--atol", "1e-4", "--rtol", "1e-4"],
                        capture_output=True, text=True)
                    if r.returncode:
                        failures += 1
                        print(f"FAIL {name} ({cpu}): {r.stdout}{r.stderr}")
    print(f"{cases - failures} of {cases} cases match ONNX Runtime")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
