#!/usr/bin/env python3
"""com.microsoft's float ops that ONNX Runtime's transformer optimizer
writes (Gelu, BiasGelu, FastGelu with and without a bias, QuickGelu,
SkipLayerNormalization with a bias and its input_skip_bias_sum output,
SkipSimplifiedLayerNormalization, FusedMatMul with transposes and alpha),
imported as their definitions in default-domain ops, against ONNX Runtime
(which runs them natively), for this CPU and for x86-64-v3; and one clear
error for an op kiln does not import (Attention).

  check_microsoft_float.py --kiln K --kiln-run R --work DIR
"""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import ortcheck

MS = "com.microsoft"


def save(path, nodes, inputs, inits=()):
    graph = helper.make_graph(nodes, "ms", [helper.make_tensor_value_info(n, TensorProto.FLOAT, s)
                                            for n, s in inputs],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
                              list(inits))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                helper.make_opsetid(MS, 1)])
    m.ir_version = 8
    onnx.save(m, path)


def const(name, a):
    return numpy_helper.from_array(np.asarray(a, np.float32), name)


R = np.random.default_rng(3)
H = 64
X = (2, 7, H)


def x_of(shape=X):
    return R.standard_normal(shape).astype(np.float32)


def gelu(path, op, bias):
    inputs = ["X", "B"] if bias else ["X"]
    save(path, [helper.make_node(op, inputs, ["Y"], domain=MS)], [("X", list(X))],
         [const("B", R.standard_normal(H))] if bias else [])
    return x_of()


def quick_gelu(path):
    save(path, [helper.make_node("QuickGelu", ["X"], ["Y"], domain=MS, alpha=1.5)],
         [("X", list(X))])
    return x_of()


def skip_layer_norm(path, simplified=False):
    """Y = the normalized output + input_skip_bias_sum (both outputs used)."""
    op = "SkipSimplifiedLayerNormalization" if simplified else "SkipLayerNormalization"
    ins = ["X", "S", "G"] + ([] if simplified else ["Be"]) + ["Bi"]
    inits = [const("S", R.standard_normal(X)), const("G", R.standard_normal(H)),
             const("Bi", R.standard_normal(H))]
    if not simplified:
        inits.append(const("Be", R.standard_normal(H)))
    save(path, [helper.make_node(op, ins, ["N", "", "", "Sum"], domain=MS, epsilon=1e-5),
                helper.make_node("Add", ["N", "Sum"], ["Y"])], [("X", list(X))], inits)
    return x_of()


def fused_matmul(path):
    save(path, [helper.make_node("FusedMatMul", ["X", "W"], ["Y"], domain=MS, alpha=0.125,
                                 transA=1, transB=1)],
         [("X", [3, 16, 5])], [const("W", R.standard_normal((3, 9, 16)))])
    return x_of((3, 16, 5))


def attention_refused(args):
    """An Attention node: compile fails with one line naming node and op."""
    d = os.path.join(args.work, "attention_refused")
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "model.onnx")
    save(path, [helper.make_node("Attention", ["X", "W", "B"], ["Y"], domain=MS, num_heads=2)],
         [("X", [1, 4, 8])], [const("W", R.standard_normal((8, 24))), const("B", R.standard_normal(24))])
    r = subprocess.run([args.kiln, "compile", path, "-o", os.path.join(d, "m"), "-q"],
                       capture_output=True, text=True)
    ok = r.returncode != 0 and "Attention" in r.stderr and "not supported" in r.stderr
    if not ok:
        print(f"FAIL attention_refused: rc {r.returncode}: {r.stderr}")
    return 1, 0 if ok else 1


def main():
    args = ortcheck.parse_args()
    cases = {
        "gelu": lambda p: gelu(p, "Gelu", False),
        "bias_gelu": lambda p: gelu(p, "BiasGelu", True),
        "fast_gelu_bias": lambda p: gelu(p, "FastGelu", True),
        "fast_gelu": lambda p: gelu(p, "FastGelu", False),
        "quick_gelu": quick_gelu,
        "skip_layer_norm": skip_layer_norm,
        "skip_simplified_layer_norm": lambda p: skip_layer_norm(p, True),
        "fused_matmul": fused_matmul,
    }
    results = [ortcheck.case(args, name, "X", make, tol=1e-4) for name, make in cases.items()]
    results.append(attention_refused(args))
    return ortcheck.summary(results)


if __name__ == "__main__":
    sys.exit(main())
