#!/usr/bin/env python3
"""A batched MatMul with shared weights and a Relu after it:
x [4, 8, 512] x W [512, 256] -> Relu. The batch folds into the matmul's
rows, which makes it large enough for cache tiles that split k; the Relu
must then not be fused into the tiles (it would see partial sums).

  make_batched_matmul.py OUT.onnx DIR   (writes DIR/x.npy, DIR/expected_y.npy)
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out, data = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(7)
w = rng.standard_normal((512, 256)).astype(np.float32) * 0.05
x = rng.standard_normal((4, 8, 512)).astype(np.float32)
graph = helper.make_graph(
    [helper.make_node("MatMul", ["x", "w"], ["m"], name="mm"),
     helper.make_node("Relu", ["m"], ["y"], name="relu")],
    "batched_matmul",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8, 512])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8, 256])],
    [numpy_helper.from_array(w, "w")])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
onnx.save(model, out)
os.makedirs(data, exist_ok=True)
np.save(os.path.join(data, "x.npy"), x)
np.save(os.path.join(data, "expected_y.npy"), np.maximum(x @ w, 0).astype(np.float32))
