#!/usr/bin/env python3
"""CumSum along static axes longer than the unrolled scans (256 steps: a
loop over the axis carrying the running slice) against ONNX Runtime, for
this CPU and for x86-64-v3: f32 over 384 columns, exclusive and reverse
over 300 rows, and RoBERTa's position ids over 512 tokens (a mask's int64
CumSum, times the mask, plus the padding index); also 200 steps (still
unrolled).

  check_scans.py --kiln K --kiln-run R --work DIR
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import ortcheck


def scan(path, shape, axis, exclusive=0, reverse=0):
    graph = helper.make_graph(
        [helper.make_node("CumSum", ["X", "axis"], ["Y"], exclusive=exclusive, reverse=reverse)],
        "scan", [helper.make_tensor_value_info("X", TensorProto.FLOAT, list(shape))],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array(axis, np.int64), "axis")])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, path)
    return np.random.default_rng(sum(shape)).standard_normal(shape).astype(np.float32)


def position_ids(path, batch=2, tokens=512, padding=1):
    """create_position_ids_from_input_ids: cumsum(ids != pad) * (ids != pad) + pad."""
    graph = helper.make_graph(
        [helper.make_node("Equal", ["ids", "pad"], ["is_pad"]),
         helper.make_node("Not", ["is_pad"], ["keep"]),
         helper.make_node("Cast", ["keep"], ["mask"], to=TensorProto.INT64),
         helper.make_node("CumSum", ["mask", "axis"], ["count"]),
         helper.make_node("Mul", ["count", "mask"], ["kept"]),
         helper.make_node("Add", ["kept", "pad"], ["Y"])],
        "position_ids", [helper.make_tensor_value_info("ids", TensorProto.INT64, [batch, tokens])],
        [helper.make_tensor_value_info("Y", TensorProto.INT64, None)],
        [numpy_helper.from_array(np.array(padding, np.int64), "pad"),
         numpy_helper.from_array(np.array(1, np.int64), "axis")])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, path)
    ids = np.random.default_rng(5).integers(2, 50000, size=(batch, tokens), dtype=np.int64)
    ids[0, 400:] = padding  # a padded tail
    ids[1, 7] = padding
    return ids


def main():
    args = ortcheck.parse_args()
    results = [
        ortcheck.case(args, "f32_384_columns", "X", lambda p: scan(p, (2, 5, 384), 2), tol=1e-5),
        ortcheck.case(args, "f32_300_rows_exclusive_reverse", "X",
                      lambda p: scan(p, (1, 300, 17), 1, exclusive=1, reverse=1), tol=1e-5),
        ortcheck.case(args, "f32_200_unrolled", "X", lambda p: scan(p, (3, 200), 1), tol=1e-5),
        ortcheck.case(args, "roberta_position_ids_512", "ids", position_ids, tol=0.0),
    ]
    return ortcheck.summary(results)


if __name__ == "__main__":
    sys.exit(main())
