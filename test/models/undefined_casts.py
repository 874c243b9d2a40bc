#!/usr/bin/env python3
"""Float -> integer casts where ONNX leaves the result undefined give kiln's
documented answer (docs/ops.md, "Results ONNX leaves undefined").

Builds one model that casts float32 and float16 inputs, and a float32
constant (folded at -O2, a run-time op at -O0), to every integer dtype,
with values out of range, infinite and NaN. The expected outputs follow the
documentation: saturate to the target's bounds, NaN gives 0, in range round
toward zero (4- and 2-bit targets: to nearest-even). Compiles it at -O0 and
-O2 for --target-cpu and checks kiln's outputs exactly. Exit 77 (ctest SKIP)
when this machine cannot run code for that CPU.

  undefined_casts.py --kiln K --kiln-run R --out DIR [--target-cpu CPU]
"""
import argparse
import math
import os
import subprocess
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper
import onnx

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import host_cpu  # noqa: E402

VALUES = [-1e20, -1.9e19, -3e9, -70000, -300, -129, -128.5, -9, -8.5, -3, -2.5, -1.5,
          -0.7, -0.0, 0.0, 0.5, 1.5, 2.5, 3, 7.5, 8, 15.5, 16, 127.9, 128, 255.5, 256,
          40000, 70000, 3e9, 5e9, 9.3e18, 1.9e19, 1e20, math.inf, -math.inf, math.nan]

# ONNX dtype -> (bits, signed)
TARGETS = {
    TensorProto.INT8: (8, True), TensorProto.UINT8: (8, False),
    TensorProto.INT16: (16, True), TensorProto.UINT16: (16, False),
    TensorProto.INT32: (32, True), TensorProto.UINT32: (32, False),
    TensorProto.INT64: (64, True), TensorProto.UINT64: (64, False),
    TensorProto.INT4: (4, True), TensorProto.UINT4: (4, False),
    TensorProto.INT2: (2, True), TensorProto.UINT2: (2, False),
}
SUB_BYTE = (TensorProto.INT4, TensorProto.UINT4, TensorProto.INT2, TensorProto.UINT2)


def documented(x, dtype):
    """kiln's answer for float `x` cast to `dtype`, as Python ints."""
    bits, signed = TARGETS[dtype]
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    out = []
    for v in np.asarray(x, np.float64).ravel():
        if math.isnan(v):
            out.append(0)
        elif math.isinf(v):
            out.append(hi if v > 0 else lo)
        else:
            r = int(np.rint(v)) if dtype in SUB_BYTE else int(v)  # int(): toward zero
            out.append(min(max(r, lo), hi))
    return out


def tensor(name, dtype, values):
    if dtype in SUB_BYTE:
        return helper.make_tensor(name, dtype, [len(values)], values)
    np_type = helper.tensor_dtype_to_np_dtype(dtype)
    return numpy_helper.from_array(np.array(values, dtype=np_type), name)


def build(folder):
    n = len(VALUES)
    x32 = np.array(VALUES, np.float32)
    with np.errstate(over="ignore"):
        x16 = np.array(VALUES, np.float16)  # large values become +-inf
    nodes = [helper.make_node("Constant", [], ["c"],
                              value=numpy_helper.from_array(x32, "c_value"))]
    outputs, expected = [], []
    for dtype in TARGETS:
        dname = TensorProto.DataType.Name(dtype).lower()
        for src, values in (("x32", x32), ("x16", x16), ("c", x32)):
            out = f"{src}_to_{dname}"
            nodes.append(helper.make_node("Cast", [src], [out], to=dtype, name=out))
            outputs.append(helper.make_tensor_value_info(out, dtype, [n]))
            expected.append(tensor(out, dtype, documented(values, dtype)))
    graph = helper.make_graph(
        nodes, "undefined_casts",
        [helper.make_tensor_value_info("x32", TensorProto.FLOAT, [n]),
         helper.make_tensor_value_info("x16", TensorProto.FLOAT16, [n])],
        outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 25)])
    model.ir_version = 11
    onnx.checker.check_model(model)
    os.makedirs(os.path.join(folder, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(folder, "model.onnx"))
    ds = os.path.join(folder, "test_data_set_0")
    for i, t in enumerate([numpy_helper.from_array(x32, "x32"),
                           numpy_helper.from_array(x16, "x16")]):
        with open(os.path.join(ds, f"input_{i}.pb"), "wb") as f:
            f.write(t.SerializeToString())
    for i, t in enumerate(expected):
        with open(os.path.join(ds, f"output_{i}.pb"), "wb") as f:
            f.write(t.SerializeToString())
    return os.path.join(folder, "model.onnx"), ds


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--kiln-run", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--target-cpu", default="native")
    args = ap.parse_args()
    ok, why = host_cpu.can_run(args.target_cpu)
    if not ok:
        print(f"SKIPPED: {why}")
        return 77
    folder = os.path.join(args.out, f"undefined_casts.{args.target_cpu}")
    model, ds = build(folder)
    failed = False
    for opt in ("-O0", "-O2"):
        prefix = os.path.join(folder, opt.lstrip("-"))
        cmd = [args.kiln, "compile", model, "-o", prefix, "-q", opt,
               f"--target-cpu={args.target_cpu}"]
        print("+", " ".join(cmd), flush=True)
        if subprocess.call(cmd) != 0:
            return 1
        lib = os.path.join(folder, f"lib{opt.lstrip('-')}.so")
        cmd = [args.kiln_run, lib, "--check-dir", ds, "--rtol", "0", "--atol", "0"]
        print("+", " ".join(cmd), flush=True)
        failed |= subprocess.call(cmd) != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
