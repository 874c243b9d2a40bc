#!/usr/bin/env python3
"""make_index_model.py OUT.onnx DIR [INPUT=V,V,... ...]

One model whose ops index data by run-time values: Gather (int64 and int32
indices), GatherElements, GatherND, ScatterElements, ScatterND and OneHot,
each with its own index input. Writes the model, its inputs to DIR/<name>.npy
(valid indices unless INPUT=... replaces an input's values, same shape),
kiln-run's --input flags for them to DIR/args and,
when every index is in range, the outputs of ONNX's reference evaluator to
DIR/expected_<output>.npy.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

F, I64, I32 = TensorProto.FLOAT, TensorProto.INT64, TensorProto.INT32

# name: (dtype, shape, valid values, bound per element for the range check)
INPUTS = {
    "gi": (np.int64, [2], [3, -4], 4),
    "gj": (np.int32, [2], [-1, 2], 3),
    "ei": (np.int64, [2, 3], [0, 3, -1, 2, -4, 1], 4),
    "ni": (np.int64, [2, 2], [3, 2, -4, -3], (4, 3)),
    "si": (np.int64, [1, 3], [3, -1, 0], 4),
    "sn": (np.int64, [1, 1], [-2], 4),
    "oi": (np.int64, [3], [1, 7, -5], None),  # OneHot: out of range is all off
}


def model():
    nodes = [
        helper.make_node("Gather", ["x", "gi"], ["g"], name="gather_rows", axis=0),
        helper.make_node("Gather", ["x", "gj"], ["h"], name="gather_cols", axis=1),
        helper.make_node("GatherElements", ["x", "ei"], ["e"], name="gather_elts", axis=0),
        helper.make_node("GatherND", ["x", "ni"], ["n"], name="gather_nd"),
        helper.make_node("ScatterElements", ["x", "si", "u"], ["s"], name="scatter_elts",
                         axis=0),
        helper.make_node("ScatterND", ["x", "sn", "u"], ["t"], name="scatter_nd"),
        helper.make_node("OneHot", ["oi", "depth", "vals"], ["o"], name="one_hot", axis=-1),
    ]
    inits = [helper.make_tensor("depth", I64, [], [4]),
             helper.make_tensor("vals", F, [2], [0.0, 1.0])]
    vi = helper.make_tensor_value_info
    ins = [vi("x", F, [4, 3]), vi("u", F, [1, 3])]
    for name, (dt, shape, _, _) in INPUTS.items():
        ins.append(vi(name, I32 if dt == np.int32 else I64, shape))
    outs = [vi("g", F, [2, 3]), vi("h", F, [4, 2]), vi("e", F, [2, 3]), vi("n", F, [2]),
            vi("s", F, [4, 3]), vi("t", F, [4, 3]), vi("o", F, [3, 4])]
    graph = helper.make_graph(nodes, "index_ops", ins, outs, inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def in_range(name, values):
    bound = INPUTS[name][3]
    if bound is None:
        return True
    bounds = bound if isinstance(bound, tuple) else (bound,)
    return all(-bounds[i % len(bounds)] <= v < bounds[i % len(bounds)]
               for i, v in enumerate(values))


def main():
    out, d = sys.argv[1], sys.argv[2]
    os.makedirs(d, exist_ok=True)
    m = model()
    onnx.save(m, out)
    feeds = {"x": np.arange(12, dtype=np.float32).reshape(4, 3),
             "u": np.array([[-1.0, -2.0, -3.0]], np.float32)}
    values = {name: spec[2] for name, spec in INPUTS.items()}
    for arg in sys.argv[3:]:
        name, vals = arg.split("=")
        values[name] = [int(v) for v in vals.split(",")]
    valid = True
    for name, (dt, shape, _, _) in INPUTS.items():
        feeds[name] = np.array(values[name], dt).reshape(shape)
        valid = valid and in_range(name, values[name])
    for k, v in feeds.items():
        np.save(os.path.join(d, k + ".npy"), v)
    with open(os.path.join(d, "args"), "w") as f:
        f.write(" ".join("--input %s=%s" % (k, os.path.join(d, k + ".npy")) for k in feeds))
    if valid:
        results = ReferenceEvaluator(m).run(None, feeds)
        for o, r in zip(m.graph.output, results):
            np.save(os.path.join(d, "expected_" + o.name + ".npy"), r)


if __name__ == "__main__":
    main()
