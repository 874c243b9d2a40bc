#!/usr/bin/env python3
"""kiln vs ONNX Runtime, side by side in one run on the same inputs.

  python3 bench/run.py [--models-dir ../shared/models] [--iterations 50] [model ...]
  python3 bench/run.py --models-dir test/models/exported --data-set 1 gpt_tiny_dynbatch
      (a model with a symbolic batch, at the data set's batch)
  python3 bench/run.py --models-dir build/bench_models --pin-shapes mobilenet_v2
      (models with symbolic dims compiled for the data set's shapes; without
      --pin-shapes kiln compiles them once for any size)
  python3 bench/run.py --threads 1,2 --rounds 3 resnet18
      (kiln at kiln-run --threads N beside ONNX Runtime at
      intra_op_num_threads N, the thread counts and the two runtimes
      interleaved in each round; medians over the rounds, and the spread;
      the speed-ups xN are medians of each round's own ratio)
  python3 bench/run.py --python mlp lenet
      (both through Python: kiln's InferenceSession (build/python) beside
      onnxruntime's, and kiln-run's C API time beside them; the difference
      is what kiln's Python layer costs per run)

Compiles each model with kiln, times it with `kiln-run --iterations`, times
ONNX Runtime (CPU, one intra-op thread, all graph optimizations) on the
same input tensors, and prints medians and the ratio ORT/kiln (> 1 means
kiln is faster). Absolute times drift on shared machines; read the ratios.
With several thread counts it also prints kiln's speed-up over its own
1-thread time and ORT's over its own.
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


def ort_session(model, threads=1):
    """ONNX Runtime on the CPU, `threads` intra-op threads, all graph
    optimizations."""
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
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
    ap.add_argument("--threads", default="1",
                    help="comma-separated thread counts for both runtimes (e.g. 1,2)")
    ap.add_argument("--rounds", type=int, default=1,
                    help="interleaved rounds per model (medians over rounds)")
    ap.add_argument("--pin-shapes", action="store_true",
                    help="compile each model for its data set's input shapes (symbolic "
                         "dims pinned) instead of for any size")
    ap.add_argument("--python", action="store_true",
                    help="time kiln through its Python InferenceSession too")
    ap.add_argument("models", nargs="*")
    args = ap.parse_args()
    threads = [int(t) for t in args.threads.split(",")]
    names = args.models or sorted(
        d for d in os.listdir(args.models_dir)
        if os.path.exists(os.path.join(args.models_dir, d, "model.onnx")))
    out = os.path.join(args.build, "bench")
    os.makedirs(out, exist_ok=True)
    kiln = os.path.join(args.build, "bin", "kiln")
    runner = os.path.join(args.build, "bin", "kiln-run")
    width = max([12] + [len(n) for n in names])
    if args.python:
        return run_python(args, names, out, kiln, runner, width)
    if threads != [1]:
        return run_threads(args, names, threads, out, kiln, runner, width)
    print(f"{'model':<{width}} {'kiln ms':>10} {'ORT ms':>10} {'ORT/kiln':>9}")
    for name in names:
        model, data, feeds = prepare(args, name, out, kiln)
        kiln_ms = kiln_run_ms(args, runner, out, name, data, 1)
        ort_ms = ort_median_ms(model, feeds, args.iterations, args.warmup)
        print(f"{name:<{width}} {kiln_ms:>10.3f} {ort_ms:>10.3f} {ort_ms / kiln_ms:>9.2f}")


def prepare(args, name, out, kiln):
    """Compiles the model; returns its path, its data set's directory and
    the data set's inputs by name."""
    mdir = os.path.join(args.models_dir, name)
    model = os.path.join(mdir, "model.onnx")
    data = os.path.join(mdir, f"test_data_set_{args.data_set}")
    feeds = load_feeds(model, data)
    pins = []
    for inp, value in feeds.items() if args.pin_shapes else []:
        pins.append(f"--input-shape={inp}=" + ",".join(str(d) for d in value.shape))
    subprocess.run([kiln, "compile", model, "-o", os.path.join(out, name), "-q"] + pins,
                   check=True)
    return model, data, feeds


def load_feeds(model, data):
    feeds = {}
    g = onnx.load(model, load_external_data=False).graph
    inits = {i.name for i in g.initializer}
    inputs = [i.name for i in g.input if i.name not in inits]
    for i, inp in enumerate(inputs):
        t = onnx.TensorProto()
        with open(os.path.join(data, f"input_{i}.pb"), "rb") as f:
            t.ParseFromString(f.read())
        feeds[inp] = numpy_helper.to_array(t)
    return feeds


def kiln_run_ms(args, runner, out, name, data, threads):
    """kiln-run's median over --iterations runs (the C API's time)."""
    res = subprocess.run([runner, os.path.join(out, f"lib{name}.so"), "--inputs-dir", data,
                          "--threads", str(threads), "--iterations", str(args.iterations),
                          "--warmup", str(args.warmup)],
                         check=True, capture_output=True, text=True)
    return json.loads(res.stdout.strip().splitlines()[-1])["median_ms"]


def run_python(args, names, out, kiln, runner, width):
    """Both runtimes through Python's InferenceSession.run, one thread."""
    sys.path.insert(0, os.path.join(args.build, "python"))
    import kiln as kiln_py
    print(f"{'model':<{width}} {'kiln py ms':>10} {'kiln C ms':>10} {'ORT py ms':>10} "
          f"{'ORT/kiln':>9} {'py cost us':>10}")
    for name in names:
        model, data, feeds = prepare(args, name, out, kiln)
        opts = kiln_py.SessionOptions()
        opts.intra_op_num_threads = 1
        ks = kiln_py.InferenceSession(os.path.join(out, f"lib{name}.so"), opts)
        os_ = ort_session(model, 1)
        kp, kc, op = [], [], []
        for _ in range(args.rounds):
            kp.append(ort_run_ms(ks, feeds, args.iterations, args.warmup))
            kc.append(kiln_run_ms(args, runner, out, name, data, 1))
            op.append(ort_run_ms(os_, feeds, args.iterations, args.warmup))
        k, c, o = (statistics.median(v) for v in (kp, kc, op))
        print(f"{name:<{width}} {k:>10.4f} {c:>10.4f} {o:>10.4f} {o / k:>9.2f} "
              f"{(k - c) * 1e3:>10.1f}")
    return 0


def run_threads(args, names, threads, out, kiln, runner, width):
    head = f"{'model':<{width}} {'threads':>7} {'kiln ms':>10} {'ORT ms':>10} {'ORT/kiln':>9}"
    head += f" {'kiln xN':>8} {'ORT xN':>7}  kiln spread  kiln xN per round"
    print(head)
    for name in names:
        model, data, feeds = prepare(args, name, out, kiln)
        sessions = {t: ort_session(model, t) for t in threads}
        kiln_ms = {t: [] for t in threads}
        ort_ms = {t: [] for t in threads}
        for _ in range(args.rounds):
            for t in threads:
                kiln_ms[t].append(kiln_run_ms(args, runner, out, name, data, t))
                ort_ms[t].append(ort_run_ms(sessions[t], feeds, args.iterations, args.warmup))
        base = threads[0]
        for t in threads:
            k, o = statistics.median(kiln_ms[t]), statistics.median(ort_ms[t])
            spread = f"{min(kiln_ms[t]):.3f}-{max(kiln_ms[t]):.3f}"
            # Speed-ups pair the runs of one round (adjacent in time), so a
            # slow spell of the machine cancels instead of landing on one
            # thread count's median.
            kx = [a / b for a, b in zip(kiln_ms[base], kiln_ms[t])]
            ox = [a / b for a, b in zip(ort_ms[base], ort_ms[t])]
            print(f"{name:<{width}} {t:>7} {k:>10.3f} {o:>10.3f} {o / k:>9.2f} "
                  f"{statistics.median(kx):>8.2f} {statistics.median(ox):>7.2f}  {spread}"
                  f"  {min(kx):.2f}-{max(kx):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
