"""IOBinding on a CUDA session, against the mock CUDA driver
(test/unit/MockCudaDriver.cpp: device memory is host memory, kernels are
counted, not run, so outputs are not compared here; test/gpu/run.sh runs
real kernels). Each case runs in a child process: the runtime loads the
driver once per process."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

MOCK = os.environ.get("KILN_MOCK_CUDA", "")

pytestmark = pytest.mark.skipif(not os.path.exists(MOCK),
                                reason="KILN_MOCK_CUDA (libkiln_mock_cuda.so) not set")


def run_child(code, tmp_path):
    stats = tmp_path / "stats.json"
    env = dict(os.environ, KILN_CUDA_DRIVER=MOCK, KILN_MOCK_CUDA_STATS=str(stats))
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    with open(stats) as f:
        return r.stdout, json.load(f)


def test_device_bound_inputs_and_outputs(mlp, tmp_path):
    out, stats = run_child("""
        import numpy as np, kiln
        assert kiln.get_available_providers()[0] == "CUDAExecutionProvider"
        s = kiln.InferenceSession(%r, providers=["CUDAExecutionProvider", "CPUExecutionProvider"],
                                  sess_options=None)
        assert s.get_providers()[0] == "CUDAExecutionProvider", s.get_providers()
        so = kiln.SessionOptions()
        so.add_session_config_entry("kiln.compile_flags", "--input-shape=x=2,4 --min-device-elements=0")
        s = kiln.InferenceSession(%r, so, providers=["CUDAExecutionProvider"])
        x = kiln.OrtValue.ortvalue_from_numpy(np.ones((2, 4), np.float32), "cuda", 0)
        assert x.device_name() == "cuda"
        io = s.io_binding()
        io.bind_ortvalue_input("x", x)
        io.bind_output("y", "cuda")
        io.bind_output("count", "cpu")
        for _ in range(3):
            s.run_with_iobinding(io)
        y, count = io.get_outputs()
        print(y.device_name(), y.shape(), count.device_name(), count.shape())
        assert io.copy_outputs_to_cpu()[0].shape == (2, 3)
    """ % (os.fspath(mlp), os.fspath(mlp)), tmp_path)
    assert out.split() == ["cuda", "[2,", "3]", "cpu", "[1]"]
    assert stats["launches"] > 0
