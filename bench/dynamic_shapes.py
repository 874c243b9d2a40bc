#!/usr/bin/env python3
"""Run-time sizes, side by side in one run (one thread each):

  python3 bench/export_dynamic_models.py            # once: build/bench_models
  python3 bench/dynamic_shapes.py [--rounds 3] [--iterations 20]

For each model and shape: kiln compiled once with run-time sizes (no shape
flags), kiln compiled with the shapes pinned (--input-shape), and ONNX
Runtime (CPU, one intra-op thread), on the same inputs (BERT at batch 1,
4, 8 and sequence 128, a GPT-2 decode step, resnet18 at batch 1 and 8 at
224x224 and at the detection-style 640x640 and 480x800). Rounds interleave
the three; each figure is the median over rounds of per-round medians, with
the spread (min-max over rounds). Prints dynamic/pinned, ORT/dynamic (> 1:
kiln faster), batch 8 / batch 1 cost, and the dynamic compile's time and
library size.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

from run import ort_run_ms, ort_session

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def bert_feeds(batch, seq):
    rng = np.random.default_rng(1)
    return {"input_ids": rng.integers(0, 30000, (batch, seq), dtype=np.int64),
            "attention_mask": np.ones((batch, seq), dtype=np.int64)}


def gpt2_feeds(batch, past, seq):
    rng = np.random.default_rng(2)
    f = {"input_ids": rng.integers(0, 50000, (batch, seq), dtype=np.int64),
         "attention_mask": np.ones((batch, past + seq), dtype=np.int64)}
    for i in range(2):
        for kv in ("key", "value"):
            f[f"past_key_values.{i}.{kv}"] = rng.standard_normal(
                (batch, 2, past, 64)).astype(np.float32)
    return f


def image_feeds(n, h, w):
    return {"input": np.random.default_rng(3).standard_normal((n, 3, h, w)).astype(np.float32)}


# (model, label, inputs, flags of the run-time-size compile)
CASES = [
    ("bert_dyn", "bert (1, 128)", bert_feeds(1, 128), ()),
    ("bert_dyn", "bert (4, 128)", bert_feeds(4, 128), ()),
    ("bert_dyn", "bert (8, 128)", bert_feeds(8, 128), ()),
    ("gpt2_dyn", "gpt2 decode step, past 128", gpt2_feeds(1, 128, 1), ()),
    ("resnet18_dyn", "resnet18 (1, 224, 224)", image_feeds(1, 224, 224), ()),
    ("resnet18_dyn", "resnet18 (8, 224, 224)", image_feeds(8, 224, 224), ()),
    # Detection-style input sizes (fewer iterations: each run is long).
    ("resnet18_dyn", "resnet18 (1, 640, 640)", image_feeds(1, 640, 640), ()),
    ("resnet18_dyn", "resnet18 (1, 480, 800)", image_feeds(1, 480, 800), ()),
]
# Iterations per run where a case is long (the default elsewhere).
ITERATIONS = {"resnet18 (8, 224, 224)": 5, "resnet18 (1, 640, 640)": 5,
              "resnet18 (1, 480, 800)": 5}


def kiln_ms(kiln_run, lib, case_dir, feeds, iterations):
    args = []
    for k, v in feeds.items():
        path = os.path.join(case_dir, k.replace(".", "_") + ".npy")
        np.save(path, v)
        args += ["--input", f"{k}={path}"]
    r = subprocess.run([kiln_run, lib, *args, "--iterations", str(iterations), "--warmup", "2"],
                       capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(r.stderr[-2000:])
    line = [l for l in r.stdout.splitlines() if l.startswith("{")][-1]
    return json.loads(line)["median_ms"]


def compile_model(kiln, model, out, extra=()):
    t = time.perf_counter()
    r = subprocess.run([kiln, "compile", model, "-o", out, "-q", *extra],
                       capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(r.stderr[-3000:])
    return time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models-dir", default=os.path.join(ROOT, "build", "bench_models"))
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--only", default="", help="comma-separated models")
    args = ap.parse_args()
    kiln = os.path.join(args.build, "bin", "kiln")
    kiln_run = os.path.join(args.build, "bin", "kiln-run")
    work = os.path.join(args.build, "bench", "dynamic")
    os.makedirs(work, exist_ok=True)
    cases = [c for c in CASES if not args.only or c[0] in args.only.split(",")]
    dyn_libs = {}
    for name, flags in sorted({(c[0], c[3]) for c in cases}):
        model = os.path.join(args.models_dir, name, "model.onnx")
        lib = name + ("_batch" if flags else "")
        out = os.path.join(work, lib)
        secs = compile_model(kiln, model, out, flags)
        size = os.path.getsize(out + ".o")
        print(f"{lib}: compiled once with run-time sizes {' '.join(flags)} in {secs:.1f} s, "
              f"object {size / 1e6:.2f} MB")
        dyn_libs[(name, flags)] = f"{work}/lib{lib}.so"
    rows = []
    for name, label, feeds, flags in cases:
        model = os.path.join(args.models_dir, name, "model.onnx")
        case_dir = os.path.join(work, "".join(c if c.isalnum() else "_" for c in label))
        os.makedirs(case_dir, exist_ok=True)
        pins = []
        for k, v in feeds.items():
            pins += ["--input-shape", f"{k}=" + ",".join(map(str, v.shape))]
        pinned = os.path.join(case_dir, f"{name}_pinned")
        compile_model(kiln, model, pinned, pins)
        sess = ort_session(model)
        d, p, o = [], [], []
        iterations = min(args.iterations, ITERATIONS.get(label, args.iterations))
        for _ in range(args.rounds):
            d.append(kiln_ms(kiln_run, dyn_libs[(name, flags)], case_dir, feeds, iterations))
            p.append(kiln_ms(kiln_run, f"{case_dir}/lib{name}_pinned.so", case_dir, feeds,
                             iterations))
            o.append(ort_run_ms(sess, feeds, iterations, 2))
        med = statistics.median
        rows.append((label, med(d), med(p), med(o)))
        print(f"{label}: kiln dynamic {med(d):.2f} ms [{min(d):.2f}-{max(d):.2f}], pinned "
              f"{med(p):.2f} ms [{min(p):.2f}-{max(p):.2f}], ORT {med(o):.2f} ms "
              f"[{min(o):.2f}-{max(o):.2f}]; dynamic/pinned {med(d) / med(p):.2f}, "
              f"ORT/dynamic {med(o) / med(d):.2f}", flush=True)
    by = {r[0]: r for r in rows}
    for one, eight in [("bert (1, 128)", "bert (8, 128)"),
                       ("resnet18 (1, 224, 224)", "resnet18 (8, 224, 224)")]:
        if one in by and eight in by:
            print(f"{eight} / {one}: kiln dynamic {by[eight][1] / by[one][1]:.2f}x, pinned "
                  f"{by[eight][2] / by[one][2]:.2f}x, ORT {by[eight][3] / by[one][3]:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
