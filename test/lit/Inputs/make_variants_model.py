#!/usr/bin/env python3
"""Models with a symbolic sequence length "T" for kiln compile --dim-values.

  make_variants_model.py softmax OUT.onnx --data DIR N,T [N,T ...]
      x [N, T] -> y = Concat(Softmax(x, axis 1), x) [N, 2T], z = ReduceSum(x, 1) [N];
      writes DIR/x_NxT.{npy,bin} and DIR/expected_{y,z,yz}_NxT.npy per shape
  make_variants_model.py reshape-pairs OUT.onnx
      x [T] -> Reshape to [2, -1]: compiles only for an even T
  make_variants_model.py flatten OUT.onnx
      x [N, T] -> Reshape to [-1]: the batch folded with T
"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper

F = TensorProto.FLOAT


def model(kind):
    if kind == "softmax":
        nodes = [helper.make_node("Softmax", ["x"], ["s"], name="softmax_t", axis=1),
                 helper.make_node("Concat", ["s", "x"], ["y"], name="concat_t", axis=1),
                 helper.make_node("ReduceSum", ["x", "axes"], ["z"], name="sum_t", keepdims=0)]
        inits = [helper.make_tensor("axes", TensorProto.INT64, [1], [1])]
        ins = [helper.make_tensor_value_info("x", F, ["N", "T"])]
        outs = [helper.make_tensor_value_info("y", F, ["N", "T2"]),
                helper.make_tensor_value_info("z", F, ["N"])]
    elif kind == "flatten":
        nodes = [helper.make_node("Reshape", ["x", "shape"], ["y"], name="flat")]
        inits = [helper.make_tensor("shape", TensorProto.INT64, [1], [-1])]
        ins = [helper.make_tensor_value_info("x", F, ["N", "T"])]
        outs = [helper.make_tensor_value_info("y", F, ["NT"])]
    else:
        nodes = [helper.make_node("Reshape", ["x", "shape"], ["y"], name="pairs")]
        inits = [helper.make_tensor("shape", TensorProto.INT64, [2], [2, -1])]
        ins = [helper.make_tensor_value_info("x", F, ["T"])]
        outs = [helper.make_tensor_value_info("y", F, [2, "H"])]
    graph = helper.make_graph(nodes, kind, ins, outs, inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kind", choices=["softmax", "reshape-pairs", "flatten"])
    ap.add_argument("out")
    ap.add_argument("--data")
    ap.add_argument("shapes", nargs="*")
    args = ap.parse_intermixed_args()
    onnx.save(model(args.kind), args.out)
    for spec in args.shapes:
        n, t = (int(v) for v in spec.split(","))
        x = np.random.default_rng(n * 100 + t).standard_normal((n, t)).astype(np.float32)
        e = np.exp(x - x.max(axis=1, keepdims=True))
        y = np.concatenate([e / e.sum(axis=1, keepdims=True), x], axis=1)
        tag = f"{n}x{t}"
        os.makedirs(args.data, exist_ok=True)
        np.save(os.path.join(args.data, f"x_{tag}.npy"), x)
        x.tofile(os.path.join(args.data, f"x_{tag}.bin"))
        np.save(os.path.join(args.data, f"expected_y_{tag}.npy"), y.astype(np.float32))
        np.save(os.path.join(args.data, f"expected_z_{tag}.npy"), x.sum(axis=1))
        # What app_variants.cpp prints: y, then z.
        np.save(os.path.join(args.data, f"expected_yz_{tag}.npy"),
                np.concatenate([y.ravel(), x.sum(axis=1)]).astype(np.float32))


if __name__ == "__main__":
    main()
