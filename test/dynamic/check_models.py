"""Compiles each model of make_models.py once (no shape flags) and runs it
at several shapes with kiln-run against ONNX Runtime.

usage: check_models.py KILN KILN_RUN WORKDIR
"""
import os
import subprocess
import sys

import numpy as np
import onnxruntime as ort

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from checks import Checks  # noqa: E402

import make_models  # noqa: E402

# model -> (inputs per shape case: name -> shape)
CASES = {
    "encoder_block": [
        {"x": (1, 5, 16), "mask": (1, 1, 5)},
        {"x": (3, 77, 16), "mask": (3, 1, 77)},
        {"x": (8, 384, 16), "mask": (8, 1, 384)},
        {"x": (2, 1, 16), "mask": (2, 1, 1)},
    ],
    "kv_concat": [
        {"x": (1, 1, 8), "past": (1, 0, 8)},  # empty past: the first step
        {"x": (2, 1, 8), "past": (2, 17, 8)},
        {"x": (3, 9, 8), "past": (3, 128, 8)},
    ],
}


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True)


def main():
    kiln, kiln_run, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    make_models.encoder_block(f"{work}/encoder_block.onnx")
    make_models.kv_concat(f"{work}/kv_concat.onnx")
    checks = Checks()
    rng = np.random.default_rng(3)
    for name, cases in CASES.items():
        model = f"{work}/{name}.onnx"
        r = run([kiln, "compile", model, "-o", f"{work}/{name}", "-q"])
        checks.expect(r.returncode == 0, f"{name}: compiles once with no shape flags",
                      r.stderr[-2000:])
        if r.returncode != 0:
            continue
        sess = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
        for i, shapes in enumerate(cases):
            feeds = {k: rng.standard_normal(s).astype(np.float32) for k, s in shapes.items()}
            case = f"{work}/{name}_{i}"
            os.makedirs(case, exist_ok=True)
            args = []
            for k, v in feeds.items():
                np.save(f"{case}/{k}.npy", v)
                args += ["--input", f"{k}={case}/{k}.npy"]
            r = run([kiln_run, f"{work}/lib{name}.so", *args, "--output-dir", case])
            label = f"{name} at " + ", ".join(f"{k} {list(s)}" for k, s in shapes.items())
            checks.expect(r.returncode == 0, f"{label}: runs", r.stderr[-2000:])
            if r.returncode != 0:
                continue
            want = sess.run(None, feeds)
            for out, ref in zip(sess.get_outputs(), want):
                got = np.load(f"{case}/{out.name}.npy")
                ok = got.shape == ref.shape and np.allclose(got, ref, rtol=1e-4, atol=1e-5)
                detail = (f"shape {got.shape} vs {ref.shape}" if got.shape != ref.shape
                          else f"max abs err {np.max(np.abs(got - ref)) if got.size else 0}")
                checks.expect(ok, f"{label}: output {out.name} {list(ref.shape)} matches "
                              "ONNX Runtime (rtol 1e-4, atol 1e-5)", detail)
    return checks.result()


if __name__ == "__main__":
    sys.exit(main())
