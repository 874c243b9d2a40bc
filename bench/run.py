#!/usr/bin/env python3
"""kiln vs ONNX Runtime, side by side in one run on the same inputs.

  python3 bench/run.py [--models-dir ../shared/models] [--iterations 50] [model ...]
  python3 bench/run.py --models-dir test/models/exported --data-set 1 gpt_tiny_dynbatch
      (a model with a symbolic batch, at the data set's batch)

Compiles each model with kiln, times it with `kiln-run --iterations`, times
ONNX Runtime (CPU, one intra-op thread, all graph optimizations) on the
same input tensors, and prints medians and the ratio ORT/kiln (> 1 means
kiln is faster). Absolute times drift on shared machines; read the ratios.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def ort_session(model):
    """ONNX Runtime on the CPU, one intra-op thread, all graph optimizations."""
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"])


def ort_median_ms(model, feeds, iterations, warmup):
    return ort_run_ms(ort_session(model), feeds, iterations, warmup)


def ort_run_ms(sess, feeds, iterations, warmup):
    for _ in range(warmup):
        sess.run(None, feeds)
    times = []
    for _ in range(iterations):
        t = time.perf_counter()
        sess.run(None, feeds)
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models-dir", default=os.path.join(ROOT, "..", "shared", "models"))
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--iterations", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--data-set", type=int, default=0,
                    help="time on test_data_set_N (e.g. another batch size)")
    ap.add_argument("models", nargs="*")
    args = ap.parse_args()
    names = args.models or sorted(
        d for d in os.listdir(args.models_dir)
        if os.path.exists(os.path.join(args.models_dir, d, "model.onnx")))
    out = os.path.join(args.build, "bench")
    os.makedirs(out, exist_ok=True)
    kiln = os.path.join(args.build, "bin", "kiln")
    runner = os.path.join(args.build, "bin", "kiln-run")
    width = max([12] + [len(n) for n in names])
    print(f"{'model':<{width}} {'kiln ms':>10} {'ORT ms':>10} {'ORT/kiln':>9}")
    for name in names:
        mdir = os.path.join(args.models_dir, name)
        model = os.path.join(mdir, "model.onnx")
        data = os.path.join(mdir, f"test_data_set_{args.data_set}")
        subprocess.run([kiln, "compile", model, "-o", os.path.join(out, name), "-q"],
                       check=True)
        feeds = {}
        g = onnx.load(model, load_external_data=False).graph
        inits = {i.name for i in g.initializer}
        inputs = [i.name for i in g.input if i.name not in inits]
        for i, inp in enumerate(inputs):
            t = onnx.TensorProto()
            with open(os.path.join(data, f"input_{i}.pb"), "rb") as f:
                t.ParseFromString(f.read())
            feeds[inp] = numpy_helper.to_array(t)
        res = subprocess.run([runner, os.path.join(out, f"lib{name}.so"), "--inputs-dir", data,
                              "--iterations", str(args.iterations), "--warmup", str(args.warmup)],
                             check=True, capture_output=True, text=True)
        kiln_ms = json.loads(res.stdout.strip().splitlines()[-1])["median_ms"]
        ort_ms = ort_median_ms(model, feeds, args.iterations, args.warmup)
        print(f"{name:<{width}} {kiln_ms:>10.3f} {ort_ms:>10.3f} {ort_ms / kiln_ms:>9.2f}")


if __name__ == "__main__":
    sys.exit(main())
