"""Compiles each model of make_models.py once (no shape flags) and runs it
at several shapes with kiln-run against ONNX Runtime.

usage: check_models.py KILN KILN_RUN WORKDIR [COMPILE_FLAG...]

COMPILE_FLAGs go to every compile (--providers=cuda,cpu --cuda-emulate runs
the CUDA kernels with their run-time launch grids as host code).
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
    "fcn": [
        {"x": (1, 3, 640, 640)},
        {"x": (2, 3, 480, 800)},
        {"x": (1, 3, 97, 61)},
    ],
    "across_batch": [{"x": (1, 4)}, {"x": (6, 4)}],
    "decoder_heads": [
        {"x": (1, 5, 8), "mask": (1, 5)},
        {"x": (3, 17, 8), "mask": (3, 17)},
        {"x": (2, 1, 8), "mask": (2, 1)},
    ],
    "fpn_head": [
        {"x": (1, 3, 64, 64)},
        {"x": (2, 3, 48, 80)},
        {"x": (1, 3, 31, 45)},
    ],
    "mobile_block": [
        {"x": (1, 3, 200, 160)},
        {"x": (2, 3, 61, 47)},
        {"x": (1, 3, 5, 3)},
        {"x": (1, 3, 40, 300)},  # rows wider than 128 (depthwise column blocks)
    ],
    # (height and width multiples of 4: the skips add like sizes)
    "unet_decoder": [{"x": (1, 3, 64, 48)}, {"x": (2, 3, 20, 132)}],
    "recurrent": [{"x": (5, 1, 6)}, {"x": (17, 3, 6)}, {"x": (1, 2, 6)}],
    "loop_rows": [{"x": (1, 4)}, {"x": (9, 4)}],
    "loop_growing": [{"x": (1, 4), "acc0": (1, 1, 4)}, {"x": (6, 4), "acc0": (6, 1, 4)}],
    # (bool inputs are given as arrays below)
    "if_runtime_branch": [
        {"x": (1, 6), "mode": True},
        {"x": (5, 6), "mode": False},
        {"x": (7, 6), "mode": True},
    ],
}


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True)


def run_model(kiln_run, lib, case, feeds, extra=()):
    os.makedirs(case, exist_ok=True)
    args = []
    for k, v in feeds.items():
        np.save(f"{case}/{k}.npy", v)
        args += ["--input", f"{k}={case}/{k}.npy"]
    return run([kiln_run, lib, *args, "--output-dir", case, *extra])


def bad_inputs(kiln, kiln_run, work, checks, flags):
    """Inputs that disagree on a symbol, sizes beyond --dim-max and sizes
    kiln cannot prove equal fail the run with one clear line."""
    rng = np.random.default_rng(5)
    f = lambda *s: rng.standard_normal(s).astype(np.float32)  # noqa: E731
    r = run_model(kiln_run, f"{work}/libencoder_block.so", f"{work}/bad_0",
                  {"x": f(2, 7, 16), "mask": f(2, 1, 8)})
    checks.expect(r.returncode == 2 and 'inputs "x" and "mask" disagree on dimension '
                  '"sequence": 7 and 8' in r.stderr,
                  "inputs that disagree on a shared symbol fail naming both and the symbol",
                  r.stderr)
    r = run([kiln, "compile", f"{work}/kv_concat.onnx", "-o", f"{work}/kv_max", "-q",
             "--dim-max", "past_seq=64", *flags])
    checks.expect(r.returncode == 0, "--dim-max compiles", r.stderr)
    lib = f"{work}/libkv_max.so"
    r = run_model(kiln_run, lib, f"{work}/bad_1", {"x": f(1, 1, 8), "past": f(1, 64, 8)})
    checks.expect(r.returncode == 0, "a run at the --dim-max bound runs", r.stderr)
    r = run_model(kiln_run, lib, f"{work}/bad_2", {"x": f(1, 1, 8), "past": f(1, 65, 8)})
    checks.expect(r.returncode == 2 and '("past_seq") is 65, beyond the bound 64' in r.stderr,
                  "a run beyond --dim-max fails clearly", r.stderr)
    r = run([kiln, "compile", f"{work}/kv_concat.onnx", "-o", f"{work}/kv_bad", "-q",
             "--dim-max", "nope=3"])
    checks.expect(r.returncode != 0 and "--dim-max nope" in r.stderr,
                  "--dim-max of an unknown symbol is an error", r.stderr)
    r = run([kiln, "compile", f"{work}/add_two_symbols.onnx", "-o", f"{work}/add2", "-q",
             *flags])
    checks.expect(r.returncode == 0, "add_two_symbols compiles", r.stderr)
    lib = f"{work}/libadd2.so"
    a, b = f(5), f(5)
    r = run_model(kiln_run, lib, f"{work}/bad_3", {"a": a, "b": b})
    ok = r.returncode == 0 and np.allclose(np.load(f"{work}/bad_3/y.npy"), a + b)
    checks.expect(ok, "sizes kiln cannot prove equal run when they are", r.stderr)
    r = run_model(kiln_run, lib, f"{work}/bad_4", {"a": f(5), "b": f(6)})
    checks.expect(r.returncode == 2 and 'node "' in r.stderr and "(Add): inputs differ in size "
                  "at run time" in r.stderr,
                  "sizes that differ at run time fail the run naming the node", r.stderr)


def main():
    kiln, kiln_run, work = sys.argv[1:4]
    flags = sys.argv[4:]
    os.makedirs(work, exist_ok=True)
    make_models.encoder_block(f"{work}/encoder_block.onnx")
    make_models.kv_concat(f"{work}/kv_concat.onnx")
    make_models.add_two_symbols(f"{work}/add_two_symbols.onnx")
    make_models.if_runtime_branch(f"{work}/if_runtime_branch.onnx")
    make_models.fcn(f"{work}/fcn.onnx")
    make_models.across_batch(f"{work}/across_batch.onnx")
    make_models.decoder_heads(f"{work}/decoder_heads.onnx")
    make_models.loop_growing(f"{work}/loop_growing.onnx")
    make_models.fpn_head(f"{work}/fpn_head.onnx")
    make_models.mobile_block(f"{work}/mobile_block.onnx")
    make_models.unet_decoder(f"{work}/unet_decoder.onnx")
    make_models.recurrent(f"{work}/recurrent.onnx")
    make_models.loop_rows(f"{work}/loop_rows.onnx")
    checks = Checks()
    rng = np.random.default_rng(3)
    for name, cases in CASES.items():
        model = f"{work}/{name}.onnx"
        r = run([kiln, "compile", model, "-o", f"{work}/{name}", "-q", *flags])
        checks.expect(r.returncode == 0, f"{name}: compiles once with no shape flags",
                      r.stderr[-2000:])
        if r.returncode != 0:
            continue
        sess = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
        for i, shapes in enumerate(cases):
            feeds = {k: np.array(s) if isinstance(s, bool) else
                     rng.standard_normal(s).astype(np.float32) for k, s in shapes.items()}
            case = f"{work}/{name}_{i}"
            r = run_model(kiln_run, f"{work}/lib{name}.so", case, feeds)
            label = f"{name} at " + ", ".join(
                f"{k} {s if isinstance(s, bool) else list(s)}" for k, s in shapes.items())
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
    bad_inputs(kiln, kiln_run, work, checks, flags)
    return checks.result()


if __name__ == "__main__":
    sys.exit(main())
