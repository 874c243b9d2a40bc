#!/usr/bin/env python3
"""Convolutions whose output plane is a few positions past whole vectors
(7x7 = 49, 5x5 = 25), which kiln computes as patches x weights^T and writes
back transposed, against ONNX Runtime: 3x3 and 1x1 kernels, stride 1 and
2, with a bias or none, batch 1 and 2, with a fused Relu or Sigmoid or no
activation. Compiled for the build machine's CPU and for x86-64-v3 (AVX2's
8-lane remainder on any machine that runs it).

  check_conv_planes.py --kiln K --kiln-run R --work DIR
"""
import argparse
import os
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

# name: batch, in channels, out channels, kernel, stride, input size, bias,
# activation
CASES = {
    "k3_c64_m512_relu": (1, 64, 512, 3, 1, 7, True, "Relu"),
    "k3_c64_m512_nobias_n2": (2, 64, 512, 3, 1, 7, False, None),
    "k1_c320_m1280_sigmoid": (1, 320, 1280, 1, 1, 7, True, "Sigmoid"),
    "k3_s2_c128_m256": (1, 128, 256, 3, 2, 14, True, None),
    "k3_c256_m256_5x5_relu": (1, 256, 256, 3, 1, 5, True, "Relu"),
}


def make(path, n, c, m, k, s, size, bias, act):
    rng = np.random.default_rng(m * 100 + c)
    w = (rng.standard_normal((m, c, k, k)) / np.sqrt(c * k * k)).astype(np.float32)
    inits = [numpy_helper.from_array(w, "W")]
    inputs = ["X", "W"]
    if bias:
        inits.append(numpy_helper.from_array(rng.standard_normal(m, dtype=np.float32), "B"))
        inputs.append("B")
    nodes = [helper.make_node("Conv", inputs, ["C" if act else "Y"], kernel_shape=[k, k],
                              strides=[s, s], pads=[k // 2] * 4)]
    if act:
        nodes.append(helper.make_node(act, ["C"], ["Y"]))
    graph = helper.make_graph(
        nodes, "conv", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [n, c, size, size])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)
    return rng.standard_normal((n, c, size, size), dtype=np.float32)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--kiln-run", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    failures = cases = 0
    for name, shape in CASES.items():
        d = os.path.join(args.work, name)
        data = os.path.join(d, "test_data_set_0")
        os.makedirs(data, exist_ok=True)
        model = os.path.join(d, "model.onnx")
        x = make(model, *shape)
        y = ort.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, {"X": x})[0]
        for i, t in (("input_0", x), ("output_0", y)):
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
