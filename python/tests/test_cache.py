"""The compile cache: a second session loads, a changed option recompiles,
concurrent compiles of one model are safe."""
import os
import subprocess
import sys

import numpy as np

import kiln
from kiln import _compile


def count_compiles(monkeypatch):
    calls = []
    real = _compile._run_compiler

    def counted(*args):
        calls.append(args)
        return real(*args)

    monkeypatch.setattr(_compile, "_run_compiler", counted)
    return calls


def entries(cache):
    return sorted(p for p in os.listdir(cache) if not p.endswith(".lock"))


def test_second_session_does_not_compile(mlp, cache, monkeypatch):
    calls = count_compiles(monkeypatch)
    a = kiln.InferenceSession(mlp)
    b = kiln.InferenceSession(mlp)
    assert len(calls) == 1
    assert a.library_path == b.library_path
    assert a.library_path.startswith(str(cache))
    assert len(entries(cache)) == 1
    x = np.ones((1, 4), np.float32)
    np.testing.assert_array_equal(a.run(None, {"x": x})[0], b.run(None, {"x": x})[0])


def test_changed_option_recompiles(mlp, cache, monkeypatch):
    calls = count_compiles(monkeypatch)
    kiln.InferenceSession(mlp)
    so = kiln.SessionOptions()
    so.graph_optimization_level = kiln.GraphOptimizationLevel.ORT_DISABLE_ALL
    kiln.InferenceSession(mlp, sess_options=so)
    so2 = kiln.SessionOptions()
    so2.add_session_config_entry("kiln.compile_flags", "--input-shape=x=2,4")
    s = kiln.InferenceSession(mlp, sess_options=so2)
    assert len(calls) == 3
    assert len(entries(cache)) == 3
    assert s.get_inputs()[0].shape == [2, 4]
    # Thread counts are a run-time option: no compile.
    so3 = kiln.SessionOptions()
    so3.intra_op_num_threads = 2
    kiln.InferenceSession(mlp, sess_options=so3)
    assert len(calls) == 3


def test_changed_model_recompiles(tmp_path, cache, monkeypatch):
    from conftest import mlp_model, save
    calls = count_compiles(monkeypatch)
    m = mlp_model()
    kiln.InferenceSession(save(m, tmp_path / "a.onnx"))
    m.graph.initializer[1].float_data[:] = []
    m.graph.initializer[1].raw_data = np.zeros(3, np.float32).tobytes()
    kiln.InferenceSession(save(m, tmp_path / "a.onnx"))
    assert len(calls) == 2


def test_bytes_and_model_proto_share_the_entry(mlp, cache, monkeypatch):
    import onnx
    calls = count_compiles(monkeypatch)
    with open(mlp, "rb") as f:
        data = f.read()
    kiln.InferenceSession(data)
    kiln.InferenceSession(onnx.load(mlp))
    kiln.InferenceSession(mlp)
    assert len(calls) == 1


def test_concurrent_processes(mlp, cache):
    code = ("import kiln, numpy as np; s = kiln.InferenceSession(%r); "
            "print(s.run(None, {'x': np.ones((1, 4), np.float32)})[0].sum())" % mlp)
    procs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(3)]
    outs = [p.communicate() for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    assert len({o for o, _ in outs}) == 1
    assert len(entries(cache)) == 1
    assert not [p for p in os.listdir(cache) if ".tmp" in p]


def test_clear_cache(mlp, cache):
    kiln.InferenceSession(mlp)
    assert kiln.cache_dir() == str(cache)
    kiln.clear_cache()
    assert not os.path.exists(cache)
    out = subprocess.run([sys.executable, "-m", "kiln", "--cache-dir"], capture_output=True,
                         text=True, check=True).stdout.strip()
    assert out == str(cache)
