#!/usr/bin/env python3
"""Constant matmul weights packed into panels, against ONNX Runtime: Gemm
and MatMul with one, two, three and eight rows (the GEMV's 64- or 32-wide
panels, the others' 16 or 32), and 75 and 128 rows, whose threads take
blocks of rows (75: nine blocks of 8 and 3 rows after them), columns
that fill whole panels and columns that leave the last one zero-padded,
B as it lies and transposed (Gemm's transB). Compiled for the build machine's CPU and for x86-64-v3 (AVX2
panel widths on any machine that runs them).

  check_panels.py --kiln K --kiln-run R --work DIR
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import ortcheck


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
    args = ortcheck.parse_args()
    # Columns: 4 whole 64-wide panels (256) or 8 of 32 or 16 of 16; and
    # the same plus a few columns (a padded last panel).
    # (k = 128 for the blocks of rows: enough work for threads.)
    variants = [(m, 40 if m <= 8 else 128, n, trans_b, gemm)
                for m in (1, 2, 3, 8, 75, 128) for n in (256, 259)
                for trans_b, gemm in ((False, False), (True, True), (False, True))]
    return ortcheck.summary(
        ortcheck.case(args, f"m{m}_n{n}_{'gemm' if gemm else 'matmul'}{'_tb' if tb else ''}",
                      "A", lambda path, m=m, k=k, n=n, tb=tb, g=gemm: make(path, m, k, n, tb, g))
        for m, k, n, tb, gemm in variants)


if __name__ == "__main__":
    sys.exit(main())
