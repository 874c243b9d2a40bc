#!/usr/bin/env python3
"""Transposes that move the innermost dim (run as 16x16 tiles transposed in
registers on AVX-512: whole tiles, partial ones of 1 to 15 rows or lanes,
rows from 4 to 15 lanes by the smaller shuffles) against NumPy, bit for
bit, for this CPU and for x86-64-v3 (the scalar loops): rank 2 to 5, f32
and int32, odd sizes, large ones split across threads, a batch dim, one
behind a Relu (a view of a planned buffer) and one that keeps its inner
dim.

  check_transposes.py --kiln K --kiln-run R --work DIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

import ortcheck

# name: input shape, permutation, element type, Relu before
CASES = {
    "r2_37x23": ((37, 23), (1, 0), np.float32, False),
    "r2_256x512_threads": ((256, 512), (1, 0), np.float32, False),
    "vit_tokens_1x192x196": ((1, 192, 196), (0, 2, 1), np.float32, False),
    "nchw_to_nhwc_2x64x20x20": ((2, 64, 20, 20), (0, 2, 3, 1), np.float32, False),
    "nhwc_to_nchw_1x9x11x21": ((1, 9, 11, 21), (0, 3, 1, 2), np.float32, False),
    "yolo_head_1x3x85x40x40": ((1, 3, 85, 40, 40), (0, 1, 3, 4, 2), np.float32, False),
    "rows5_lanes4_1x4x5x7": ((1, 4, 5, 7), (0, 3, 1, 2), np.float32, False),
    "int32_33x18x4": ((33, 18, 4), (2, 0, 1), np.int32, False),
    "int32_5x70x31": ((5, 70, 31), (2, 1, 0), np.int32, False),
    "after_relu_1x48x30x17": ((1, 48, 30, 17), (0, 3, 2, 1), np.float32, True),
    "inner_kept_1x2x58x28x28": ((1, 2, 58, 28, 28), (0, 2, 1, 3, 4), np.float32, False),
}


def make(path, shape, perm, dtype, relu):
    elem = TensorProto.FLOAT if dtype == np.float32 else TensorProto.INT32
    nodes = [helper.make_node("Transpose", ["R" if relu else "X"], ["Y"], perm=list(perm))]
    if relu:
        nodes.insert(0, helper.make_node("Relu", ["X"], ["R"]))
    out_shape = [shape[p] for p in perm]
    graph = helper.make_graph(nodes, "transpose",
                              [helper.make_tensor_value_info("X", elem, list(shape))],
                              [helper.make_tensor_value_info("Y", elem, out_shape)])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                                ir_version=8), path)
    rng = np.random.default_rng(len(shape) * 1000 + shape[-1])
    if dtype == np.float32:
        x = rng.standard_normal(shape).astype(np.float32)
    else:
        x = rng.integers(-2**31, 2**31 - 1, size=shape, dtype=np.int64).astype(np.int32)
    y = np.transpose(np.maximum(x, 0) if relu else x, perm)
    return x, np.ascontiguousarray(y)


def main():
    args = ortcheck.parse_args()
    results = []
    for name, spec in CASES.items():
        d = os.path.join(args.work, name)
        os.makedirs(d, exist_ok=True)
        model = os.path.join(d, "model.onnx")
        data = os.path.join(d, "test_data_set_0")
        x, y = make(model, *spec)
        ortcheck.write_data(data, (("input_0", x), ("output_0", y)))
        # Bit for bit: a transpose copies.
        results.append(ortcheck.check_each_cpu(args.kiln, args.kiln_run, model, data, name,
                                               tol=0.0))
    return ortcheck.summary(results, "NumPy")


if __name__ == "__main__":
    sys.exit(main())
