"""Shared fixtures: every test gets its own compile cache, and small ONNX
models built with onnx.helper."""
import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
EXPORTED = os.path.join(ROOT, "test", "models", "exported")


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    """A fresh compile cache per test (KILN_CACHE_DIR)."""
    d = tmp_path / "kiln-cache"
    monkeypatch.setenv("KILN_CACHE_DIR", str(d))
    return d


def save(model, path):
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return str(path)


def mlp_model(batch="N"):
    """x [N, 4] float -> Gemm -> Relu -> y [N, 3]; an int64 'count' output."""
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((4, 3)).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.standard_normal(3).astype(np.float32), "b")
    nodes = [helper.make_node("Gemm", ["x", "w", "b"], ["h"], name="gemm"),
             helper.make_node("Relu", ["h"], ["y"], name="relu"),
             helper.make_node("Shape", ["x"], ["count"], name="shape", start=0, end=1)]
    g = helper.make_graph(
        nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, 3]),
         helper.make_tensor_value_info("count", TensorProto.INT64, [1])], [w, b])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)],
                          producer_name="kiln-tests")
    m.ir_version = 8
    helper.set_model_props(m, {"author": "kiln", "purpose": "tests"})
    return m


@pytest.fixture
def mlp(tmp_path):
    return save(mlp_model(), tmp_path / "mlp.onnx")


def gather_model():
    """Two inputs of other dtypes: table rows picked by int64 ids, and a
    bool mask applied with Where."""
    table = numpy_helper.from_array(np.arange(12, dtype=np.float32).reshape(4, 3), "table")
    zero = numpy_helper.from_array(np.zeros((), np.float32), "zero")
    nodes = [helper.make_node("Gather", ["table", "ids"], ["rows"], name="emb", axis=0),
             helper.make_node("Where", ["mask", "rows", "zero"], ["out"], name="where")]
    g = helper.make_graph(
        nodes, "gather",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, [2]),
         helper.make_tensor_value_info("mask", TensorProto.BOOL, [2, 3])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [2, 3])], [table, zero])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


@pytest.fixture
def gather(tmp_path):
    return save(gather_model(), tmp_path / "gather.onnx")
