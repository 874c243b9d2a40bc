#!/usr/bin/env python3
"""Writes the bundled example model: a tiny CNN digit classifier with
seeded random weights (Conv -> BatchNormalization -> Relu -> MaxPool ->
Flatten -> Gemm -> Softmax), and a reference input/output computed by ONNX
Runtime when it is installed.

  python3 examples/make_model.py examples/tiny_cnn.onnx
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def build():
    rng = np.random.default_rng(7)
    w = lambda *s: rng.standard_normal(s).astype(np.float32) * 0.3
    inits = [
        numpy_helper.from_array(w(4, 1, 3, 3), "conv.weight"),
        numpy_helper.from_array(w(4), "conv.bias"),
        numpy_helper.from_array(np.abs(w(4)) + 0.5, "bn.scale"),
        numpy_helper.from_array(w(4), "bn.bias"),
        numpy_helper.from_array(w(4), "bn.mean"),
        numpy_helper.from_array(np.abs(w(4)) + 0.5, "bn.var"),
        numpy_helper.from_array(w(10, 64), "fc.weight"),
        numpy_helper.from_array(w(10), "fc.bias"),
    ]
    nodes = [
        helper.make_node("Conv", ["image", "conv.weight", "conv.bias"], ["c"],
                         name="conv", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization",
                         ["c", "bn.scale", "bn.bias", "bn.mean", "bn.var"], ["b"],
                         name="bn", epsilon=1e-5),
        helper.make_node("Relu", ["b"], ["r"], name="relu"),
        helper.make_node("MaxPool", ["r"], ["p"], name="pool",
                         kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Flatten", ["p"], ["f"], name="flatten", axis=1),
        helper.make_node("Gemm", ["f", "fc.weight", "fc.bias"], ["logits"],
                         name="fc", transB=1),
        helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=1),
    ]
    graph = helper.make_graph(
        nodes, "tiny_cnn",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 1, 8, 8])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, [1, 10])],
        inits)
    model = helper.make_model(graph, producer_name="kiln-examples",
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(__file__), "tiny_cnn.onnx")
    onnx.save(build(), out)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
