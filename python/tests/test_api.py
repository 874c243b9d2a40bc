"""The rest of ONNX Runtime's surface: NodeArg, metadata, providers,
profiling, IOBinding, kiln.compile and compiled libraries."""
import json
import os
import subprocess
import sys

import numpy as np
import onnx
import pytest

import kiln


def test_providers():
    avail = kiln.get_available_providers()
    assert avail[-1] == "CPUExecutionProvider"
    assert set(avail) <= set(kiln.get_all_providers())
    assert kiln.get_device() in ("CPU", "GPU")


def test_node_args_and_metadata(mlp):
    s = kiln.InferenceSession(mlp, providers=["cpu"])
    (x,) = s.get_inputs()
    assert (x.name, x.shape, x.type) == ("x", ["N", 4], "tensor(float)")
    assert [(o.name, o.shape, o.type) for o in s.get_outputs()] == [
        ("y", ["N", 3], "tensor(float)"), ("count", [1], "tensor(int64)")]
    meta = s.get_modelmeta()
    assert meta.producer_name == "kiln-tests"
    assert meta.graph_name == "mlp"
    assert meta.custom_metadata_map == {"author": "kiln", "purpose": "tests"}
    assert s.get_providers() == ["CPUExecutionProvider"]


def test_session_options_reject_unknown_fields():
    so = kiln.SessionOptions()
    so.intra_op_num_threads = 2
    with pytest.raises(AttributeError):
        so.intra_op_num_thread = 2


def test_profiling(mlp, tmp_path):
    so = kiln.SessionOptions()
    so.enable_profiling = True
    so.profile_file_prefix = str(tmp_path / "prof")
    s = kiln.InferenceSession(mlp, sess_options=so)
    for _ in range(3):
        s.run(None, {"x": np.ones((2, 4), np.float32)})
    path = s.end_profiling()
    assert path.startswith(str(tmp_path / "prof_")) and path.endswith(".json")
    with open(path) as f:
        events = json.load(f)
    events = events["traceEvents"] if isinstance(events, dict) else events
    nodes = {e["name"] for e in events if e.get("cat") == "Node"}
    assert any("gemm" in n for n in nodes), nodes


def test_unnamed_dims_and_dtypes_as_onnxruntime(tmp_path):
    import onnxruntime
    from conftest import mlp_model, save
    from kiln import _types
    path = save(mlp_model(batch=None), tmp_path / "unnamed.onnx")
    k = kiln.InferenceSession(path).get_inputs()[0]
    o = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"]).get_inputs()[0]
    assert (k.name, k.shape, k.type) == (o.name, o.shape, o.type)
    assert _types.FROM_NUMPY[np.dtype(np.uint8)] == 2
    assert _types.FROM_NUMPY[np.dtype(np.uint16)] == 4


def test_run_takes_ort_values(mlp):
    s = kiln.InferenceSession(mlp)
    x = np.ones((2, 4), np.float32)
    v = kiln.OrtValue.ortvalue_from_numpy(x)
    np.testing.assert_array_equal(s.run(None, {"x": v})[0], s.run(None, {"x": x})[0])


def test_iobinding_outputs_in_bind_order(mlp):
    s = kiln.InferenceSession(mlp)
    x = np.ones((2, 4), np.float32)
    want = s.run(None, {"x": x})
    io = s.io_binding()
    io.bind_cpu_input("x", x)
    io.bind_output("count")
    io.bind_output("y")
    s.run_with_iobinding(io)
    count, y = io.copy_outputs_to_cpu()
    np.testing.assert_array_equal(count, want[1])
    np.testing.assert_array_equal(y, want[0])
    io.clear_binding_outputs()
    io.bind_output("y")
    s.run_with_iobinding(io)
    assert [v.shape() for v in io.get_outputs()] == [[2, 3]]


def test_iobinding_cuda_output_on_cpu_session(mlp):
    s = kiln.InferenceSession(mlp, providers=["CPUExecutionProvider"])
    io = s.io_binding()
    io.bind_cpu_input("x", np.ones((2, 4), np.float32))
    io.bind_output("y", "cuda")
    with pytest.raises(kiln.InvalidArgument, match="CUDA memory"):
        s.run_with_iobinding(io)


def test_iobinding_cpu_outputs_in_place(mlp):
    s = kiln.InferenceSession(mlp)
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    want = s.run(None, {"x": x})
    io = s.io_binding()
    io.bind_cpu_input("x", x)
    y = np.zeros((2, 3), np.float32)
    io.bind_output("y", "cpu", 0, np.float32, y.shape, y.ctypes.data)
    io.bind_output("count")
    s.run_with_iobinding(io)
    np.testing.assert_array_equal(y, want[0])
    outs = io.copy_outputs_to_cpu()
    np.testing.assert_array_equal(outs[0], want[0])
    np.testing.assert_array_equal(outs[1], want[1])
    v = kiln.OrtValue.ortvalue_from_numpy(x)
    io.bind_ortvalue_input("x", v)
    s.run_with_iobinding(io)
    assert io.get_outputs()[0].shape() == [2, 3]


def test_iobinding_cuda_input_on_cpu_session(mlp):
    s = kiln.InferenceSession(mlp, providers=["CPUExecutionProvider"])
    io = s.io_binding()
    io.bind_input("x", "cuda", 0, np.float32, [2, 4], 0x1000)
    with pytest.raises(kiln.InvalidArgument, match="CUDA memory"):
        s.run_with_iobinding(io)


def test_compile_artifacts_and_library_session(mlp, tmp_path):
    for model in (mlp, onnx.load(mlp), open(mlp, "rb").read()):
        out = kiln.compile(model, str(tmp_path / "out" / "mlp"), input_shapes={"x": [3, 4]})
        assert sorted(out) == ["header", "object", "shared", "static"]
        assert all(os.path.exists(p) for p in out.values())
    s = kiln.InferenceSession(out["shared"])
    assert s.get_inputs()[0].shape == [3, 4]
    y = s.run(["y"], {"x": np.ones((3, 4), np.float32)})[0]
    assert y.shape == (3, 3)
    dashed = kiln.compile(mlp, str(tmp_path / "out" / "my-mlp"))
    assert os.path.basename(dashed["shared"]) == "libmy_mlp.so"
    assert os.path.basename(dashed["object"]) == "my-mlp.o"
    with pytest.raises(kiln.InvalidGraph, match="unknown|Unknown|unrecognized|no-such-flag"):
        kiln.compile(mlp, str(tmp_path / "bad" / "m"), no_such_flag=True)


def test_recompiled_library_at_the_same_path(mlp, tmp_path):
    out = kiln.compile(mlp, str(tmp_path / "m"), input_shapes={"x": [3, 4]})["shared"]
    assert kiln.InferenceSession(out).get_inputs()[0].shape == [3, 4]
    kiln.compile(mlp, str(tmp_path / "m"), input_shapes={"x": [5, 4]})
    assert kiln.InferenceSession(out).get_inputs()[0].shape == [5, 4]


def test_module_cli():
    out = subprocess.run([sys.executable, "-m", "kiln", "--providers"], capture_output=True,
                         text=True, check=True).stdout.split()
    assert out == kiln.get_available_providers()
