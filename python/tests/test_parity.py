"""The same code through onnxruntime and kiln, only the module changed."""
import importlib
import os

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from conftest import EXPORTED, ROOT

MODELS = [
    os.path.join(ROOT, "examples", "tiny_cnn.onnx"),
    os.path.join(EXPORTED, "mobilenet_dw_dynbatch", "model.onnx"),
    os.path.join(EXPORTED, "gpt_tiny_dynseq", "model.onnx"),
    os.path.join(EXPORTED, "lstm_tiny", "model.onnx"),
]


def feeds(path, sess):
    """The model's reference inputs where it has them, else seeded data."""
    d = os.path.join(os.path.dirname(path), "test_data_set_0")
    out = {}
    for k, i in enumerate(sess.get_inputs()):
        pb = os.path.join(d, "input_%d.pb" % k)
        if os.path.exists(pb):
            t = onnx.TensorProto()
            with open(pb, "rb") as f:
                t.ParseFromString(f.read())
            out[i.name] = numpy_helper.to_array(t)
        else:
            shape = [s if isinstance(s, int) else 1 for s in i.shape]
            out[i.name] = np.random.default_rng(k).random(shape, dtype=np.float32)
    return out


def run_with(module_name, path, feed=None):
    """What an ONNX Runtime user writes, with `import <module> as ort`."""
    ort = importlib.import_module(module_name)
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(path, sess_options=so, providers=ort.get_available_providers())
    feed = feed if feed is not None else feeds(path, sess)
    names = [o.name for o in sess.get_outputs()]
    io = [(i.name, i.type, i.shape) for i in sess.get_inputs()]
    return sess.run(names, feed), io, feed


@pytest.mark.parametrize("path", MODELS, ids=lambda p: os.path.basename(os.path.dirname(p))
                         if p.endswith("model.onnx") else os.path.basename(p))
def test_same_outputs_as_onnxruntime(path):
    got, io, feed = run_with("kiln", path)
    want, ort_io, _ = run_with("onnxruntime", path, feed)
    assert io == ort_io
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4)


def test_dynamic_batch_runs_any_batch():
    path = os.path.join(EXPORTED, "mobilenet_dw_dynbatch", "model.onnx")
    import kiln
    import onnxruntime
    k = kiln.InferenceSession(path)
    o = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
    name = k.get_inputs()[0].name
    assert k.get_inputs()[0].shape[0] == "batch"
    for batch in (1, 3, 8):
        shape = [batch] + k.get_inputs()[0].shape[1:]
        x = np.random.default_rng(batch).random(shape, dtype=np.float32)
        np.testing.assert_allclose(k.run(None, {name: x})[0], o.run(None, {name: x})[0],
                                   rtol=1e-4, atol=1e-4)


def test_provider_selection_snippet(mlp):
    """ONNX Runtime's documented provider selection, with import kiln as ort."""
    import kiln as ort
    providers = [("CUDAExecutionProvider", {"device_id": 0}), "CPUExecutionProvider"]
    sess = ort.InferenceSession(mlp, providers=providers)
    if "CUDAExecutionProvider" not in ort.get_available_providers():
        assert sess.get_providers() == ["CPUExecutionProvider"]
    x = np.ones((2, 4), np.float32)
    y, count = sess.run(None, {"x": x})
    assert y.shape == (2, 3) and count.tolist() == [2]
