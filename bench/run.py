#!/usr/bin/env python3
"""kiln vs ONNX Runtime and OpenVINO, side by side in one run on the same inputs.

  python3 bench/run.py [--models-dir ../shared/models] [--iterations 50] [model ...]
  python3 bench/run.py --models-dir test/models/exported --data-set 1 gpt_tiny_dynbatch
      (a model with a symbolic batch, at the data set's batch)
  python3 bench/run.py --models-dir build/bench_models --pin-shapes mobilenet_v2
      (models with symbolic dims compiled for the data set's shapes; without
      --pin-shapes kiln compiles them once for any size, and a model whose
      only symbolic dim is its batch also for batch 1, kiln's default)
  python3 bench/run.py --threads 1,2 --rounds 3 resnet18
      (kiln at kiln-run --threads N beside each peer at N threads, the
      thread counts and the runtimes interleaved in each round; medians over
      the rounds, and the spread; the speed-ups xN are medians of each
      round's own ratio)
  python3 bench/run.py --markdown docs/performance.md ...
      (the table also as a Markdown page; scripts/bench.sh writes
      docs/performance.md this way)
  python3 bench/run.py --python mlp lenet
      (both through Python: kiln's InferenceSession (build/python) beside
      onnxruntime's, and kiln-run's C API time beside them; the difference
      is what kiln's Python layer costs per run)

A model is a name under --models-dir or a path to a directory holding
model.onnx and test_data_set_N. Compiles each model with kiln, times it with
`kiln-run --iterations` and times each peer on the same input tensors:
  ORT       ONNX Runtime, CPU provider, all graph optimizations,
            intra_op_num_threads N, spinning as its default;
  OpenVINO  the CPU plugin, f32 inference precision, the latency hint, one
            stream of N threads (the model reshaped to the data set's shapes
            with --pin-shapes, as kiln's compile is; `--peers ort` leaves
            it out, and it is skipped with a note when not installed:
            scripts/bench.sh installs bench/requirements.lock).
Each peer's outputs are compared with the data set's expected outputs
once; a peer that disagrees is flagged beside its time. OpenVINO first
loads and runs each model in a child process: where it crashes (it
segfaults on a GhostNet-style QDQ model) its cells are n/a with a note,
and the run goes on. Prints medians and
the ratios PEER/kiln (> 1 means kiln is faster). Absolute times drift on
shared machines; read the ratios. With several thread counts it also prints
each runtime's speed-up over its own first thread count's time.
"""
import argparse
import datetime
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import textwrap
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


def ort_run_ms(sess, feeds, iterations, warmup):
    return median_ms(lambda: sess.run(None, feeds), iterations, warmup)


def median_ms(run, iterations, warmup):
    for _ in range(warmup):
        run()
    times = []
    for _ in range(iterations):
        t = time.perf_counter()
        run()
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


class OrtPeer:
    name = "ORT"

    @staticmethod
    def version():
        return f"ONNX Runtime {ort.__version__}"

    @staticmethod
    def prepare(model, feeds, threads, pin):
        """A function running the model once, returning its outputs."""
        sess = ort_session(model, threads)
        return lambda: sess.run(None, feeds)


class OpenVinoPeer:
    name = "OpenVINO"
    core = None

    @staticmethod
    def available():
        try:
            import openvino  # noqa: F401
        except ImportError:
            return False
        return True

    @staticmethod
    def version():
        import openvino
        return f"OpenVINO {openvino.__version__.split('-')[0]}"

    @staticmethod
    def probe(model, data, pin):
        """Loads and runs the model once in a child process, since OpenVINO
        2026.4 segfaults on some models (a GhostNet-style QDQ model), which
        would end the whole run. Returns why it cannot be timed, or None
        (an exception is left to prepare, which reports its message)."""
        cmd = [sys.executable, os.path.abspath(__file__), "--probe-openvino", model, data]
        res = subprocess.run(cmd + (["--pin-shapes"] if pin else []),
                             capture_output=True, text=True)
        if res.returncode < 0:
            return f"crashed loading or running the model (signal {-res.returncode})"
        return None

    @classmethod
    def prepare(cls, model, feeds, threads, pin):
        import openvino as ov
        if cls.core is None:
            cls.core = ov.Core()
        net = cls.core.read_model(model)
        if pin:
            net.reshape({name: list(v.shape) for name, v in feeds.items()})
        compiled = cls.core.compile_model(net, "CPU", {
            "PERFORMANCE_HINT": "LATENCY",
            "INFERENCE_PRECISION_HINT": "f32",
            "INFERENCE_NUM_THREADS": threads,
            "NUM_STREAMS": 1,
        })
        request = compiled.create_infer_request()
        # The inputs are bound once and read in place (as a C++ caller of
        # OpenVINO would), which leaves its Python call the cheapest it has.
        # (A port has several names; the graph input's is among them.)
        bound = [np.array(feeds[next(n for n in p.get_names() if n in feeds)], order="C")
                 for p in compiled.inputs]
        for port, array in zip(compiled.inputs, bound):
            request.set_tensor(port, ov.Tensor(array, shared_memory=True))

        # `bound` rides along with run: the tensors do not own the arrays.
        def run(bound=bound):
            request.infer()
            return [request.get_tensor(o).data for o in compiled.outputs]
        return run


PEERS = {"ort": OrtPeer, "openvino": OpenVinoPeer}


def main():
    # (OpenVinoPeer.probe's child: prepare and run once, in this process.)
    if len(sys.argv) >= 4 and sys.argv[1] == "--probe-openvino":
        model, data = sys.argv[2], sys.argv[3]
        OpenVinoPeer.prepare(model, load_feeds(model, data), 1, "--pin-shapes" in sys.argv)()
        return 0
    ap = argparse.ArgumentParser()
    ap.add_argument("--models-dir", default=os.path.join(ROOT, "..", "shared", "models"))
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--iterations", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--data-set", type=int, default=0,
                    help="time on test_data_set_N (e.g. another batch size)")
    ap.add_argument("--threads", default="1",
                    help="comma-separated thread counts for every runtime (e.g. 1,2)")
    ap.add_argument("--rounds", type=int, default=1,
                    help="interleaved rounds per model (medians over rounds)")
    ap.add_argument("--peers", default="ort,openvino",
                    help="comma-separated peers timed beside kiln: ort, openvino")
    ap.add_argument("--pin-shapes", action="store_true",
                    help="compile each model for its data set's input shapes (symbolic "
                         "dims pinned) instead of for any size")
    ap.add_argument("--markdown", metavar="FILE",
                    help="also write the table as a Markdown page to FILE")
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
    width = max([12] + [len(os.path.basename(n.rstrip("/"))) for n in names])
    if args.python:
        return run_python(args, names, out, kiln, runner, width)
    peers = []
    for key in args.peers.split(","):
        if key not in PEERS:
            ap.error(f"unknown peer '{key}' (known: {', '.join(PEERS)})")
        peer = PEERS[key]
        if getattr(peer, "available", lambda: True)():
            peers.append(peer)
        else:
            print(f"bench: {peer.name} is not installed; timing without it "
                  "(scripts/bench.sh installs bench/requirements.lock)", file=sys.stderr)
    return run_peers(args, names, threads, peers, out, kiln, runner, width)


def model_dir(args, name):
    """A model given by name under --models-dir or as a directory path."""
    if os.path.exists(os.path.join(name, "model.onnx")):
        return name
    return os.path.join(args.models_dir, name)


def prepare(args, name, out, kiln):
    """Compiles the model; returns its name, path, its data set's directory
    and the data set's inputs by name."""
    mdir = model_dir(args, name)
    name = os.path.basename(mdir.rstrip("/"))
    model = os.path.join(mdir, "model.onnx")
    data = os.path.join(mdir, f"test_data_set_{args.data_set}")
    feeds = load_feeds(model, data)
    pins = []
    for inp, value in feeds.items() if args.pin_shapes else []:
        pins.append(f"--input-shape={inp}=" + ",".join(str(d) for d in value.shape))
    subprocess.run([kiln, "compile", model, "-o", os.path.join(out, name), "-q"] + pins,
                   check=True)
    return name, model, data, feeds


def load_tensor(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def load_feeds(model, data):
    g = onnx.load(model, load_external_data=False).graph
    inits = {i.name for i in g.initializer}
    inputs = [i.name for i in g.input if i.name not in inits]
    return {inp: load_tensor(os.path.join(data, f"input_{i}.pb"))
            for i, inp in enumerate(inputs)}


def output_error(outputs, data):
    """The largest difference from the data set's expected outputs, relative
    to each output's magnitude; None when the data set has none."""
    worst = None
    for i, got in enumerate(outputs):
        path = os.path.join(data, f"output_{i}.pb")
        if not os.path.exists(path):
            return worst
        want = load_tensor(path)
        got = np.asarray(got)
        if got.shape != want.shape:
            return math.inf
        if want.size == 0 or want.dtype.kind not in "fiu":
            continue
        want, got = want.astype(np.float64), got.astype(np.float64)
        scale = max(1.0, float(np.max(np.abs(want))))
        err = float(np.max(np.abs(got - want))) / scale
        worst = err if worst is None else max(worst, err)
    return worst


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
        name, model, data, feeds = prepare(args, name, out, kiln)
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


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values))


def peer_geomean(rows, peer, threads):
    """The geometric mean of PEER/kiln over the models at `threads` that the
    peer runs (NaN where it cannot load one)."""
    ratios = [r["ratio"][peer.name] for r in rows if r["threads"] == threads]
    ratios = [x for x in ratios if not math.isnan(x)]
    return geomean(ratios) if ratios else float("nan")


def run_peers(args, names, threads, peers, out, kiln, runner, width):
    """kiln and each peer at each thread count, interleaved in each round."""
    several = len(threads) > 1
    cols = ["kiln"] + [p.name for p in peers]
    head = f"{'model':<{width}} {'threads':>7}" + "".join(f" {c + ' ms':>11}" for c in cols)
    head += "".join(f" {p.name + '/kiln':>13}" for p in peers)
    if several:
        head += "".join(f" {c + ' xN':>11}" for c in cols) + "  kiln spread  kiln xN per round"
    print(head)
    rows, notes = [], []
    for name in names:
        name, model, data, feeds = prepare(args, name, out, kiln)
        runs = {}
        for peer in peers:
            why = getattr(peer, "probe", lambda *a: None)(model, data, args.pin_shapes)
            if why:
                notes.append(f"{name}: {peer.name} {why}: not timed")
                for t in threads:
                    runs[peer.name, t] = None
                continue
            try:
                for t in threads:
                    runs[peer.name, t] = peer.prepare(model, feeds, t, args.pin_shapes)
            except Exception as e:  # a peer that cannot load the model: n/a
                why = next((ln for ln in str(e).splitlines() if ln.strip().startswith("--")),
                           str(e).splitlines()[0] if str(e) else type(e).__name__)
                notes.append(f"{name}: {peer.name} cannot load the model ({why.strip()})")
                for t in threads:
                    runs[peer.name, t] = None
                continue
            err = output_error(runs[peer.name, threads[0]](), data)
            if err is not None and err > 1e-3:
                notes.append(f"{name}: {peer.name}'s outputs differ from the data set's by "
                             f"{err:.2g} of their magnitude")
        ms = {(c, t): [] for c in cols for t in threads}
        for _ in range(args.rounds):
            for t in threads:
                ms["kiln", t].append(kiln_run_ms(args, runner, out, name, data, t))
                for peer in peers:
                    ms[peer.name, t].append(
                        median_ms(runs[peer.name, t], args.iterations, args.warmup)
                        if runs[peer.name, t] else float("nan"))
        base = threads[0]
        for t in threads:
            med = {c: statistics.median(ms[c, t]) for c in cols}
            # Speed-ups pair the runs of one round (adjacent in time), so a
            # slow spell of the machine cancels instead of landing on one
            # thread count's median.
            speedup = {c: [a / b for a, b in zip(ms[c, base], ms[c, t])] for c in cols}
            row = {"model": name, "threads": t, "ms": med,
                   "ratio": {p.name: med[p.name] / med["kiln"] for p in peers},
                   "xN": {c: statistics.median(speedup[c]) for c in cols}}
            rows.append(row)
            line = f"{name:<{width}} {t:>7}" + "".join(f" {med[c]:>11.3f}" for c in cols)
            line += "".join(f" {row['ratio'][p.name]:>13.2f}" for p in peers)
            if several:
                kx = speedup["kiln"]
                line += "".join(f" {row['xN'][c]:>11.2f}" for c in cols)
                line += (f"  {min(ms['kiln', t]):.3f}-{max(ms['kiln', t]):.3f}"
                         f"  {min(kx):.2f}-{max(kx):.2f}")
            print(line, flush=True)
    for t in threads:
        means = "  ".join(
            f"{p.name}/kiln {peer_geomean(rows, p, t):.2f}"
            for p in peers)
        print(f"geomean at {t} thread{'s' if t > 1 else ''}: {means}")
    for note in notes:
        print(f"note: {note}")
    if args.markdown:
        write_markdown(args, rows, threads, peers, cols, notes)
    return 0


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def cpu_features():
    try:
        with open("/proc/cpuinfo") as f:
            flags = next(l for l in f if l.startswith("flags")).split()
    except (OSError, StopIteration):
        return ""
    wanted = ["avx2", "avx512f", "avx512_vnni", "avx512_fp16", "amx_tile"]
    return ", ".join(w.upper().replace("_", "-") for w in wanted if w in flags)


def write_markdown(args, rows, threads, peers, cols, notes):
    rev = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                         capture_output=True, text=True).stdout.strip() or "unknown"
    several = len(threads) > 1
    intro = ("Generated by `scripts/bench.sh` (which runs `bench/run.py`); do not edit "
             "by hand. kiln (`kiln-run`, its C API) beside "
             + " and ".join(p.version() for p in peers)
             + " (each through its Python API, which adds some microseconds per run: "
             "it shows only on the smallest models), on the same inputs in one run: "
             "each round times every runtime at every thread count in turn, and a cell "
             "is the median over the rounds of each runtime's median of "
             f"{args.iterations} runs. PEER/kiln > 1 means kiln is faster.")
    setup = (f"{args.rounds} rounds of {args.iterations} runs after {args.warmup} "
             "warm-up runs"
             + ("; models with symbolic dims compiled (and OpenVINO reshaped) for their "
                "data set's shapes" if args.pin_shapes else "") + ".")
    lines = ["# Performance", ""] + textwrap.wrap(intro, 76) + [""]
    lines += textwrap.wrap(f"- machine: {cpu_name()} ({cpu_features() or 'no AVX2'}), "
                           f"{os.cpu_count()} logical CPUs; "
                           f"{datetime.date.today().isoformat()}, kiln {rev}.",
                           76, subsequent_indent="  ")
    lines += textwrap.wrap(f"- {setup}", 76, subsequent_indent="  ") + [""]
    head = "| model | threads | " + " | ".join(f"{c} ms" for c in cols)
    head += "".join(f" | {p.name}/kiln" for p in peers)
    head += "".join(f" | {c} xN" for c in cols) if several else ""
    lines += [head + " |", "|" + "---|" * (head.count("|"))]
    for r in rows:
        cells = [r["model"], str(r["threads"])] + [f"{r['ms'][c]:#.3g}" for c in cols]
        cells += [f"{r['ratio'][p.name]:.2f}" for p in peers]
        cells += [f"{r['xN'][c]:.2f}" for c in cols] if several else []
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    for t in threads:
        means = ", ".join(
            f"{p.name}/kiln {peer_geomean(rows, p, t):.2f}"
            for p in peers)
        lines.append(f"Geometric mean at {t} thread{'s' if t > 1 else ''}: {means}.")
    if several:
        lines += [""] + textwrap.wrap(
            "xN: each runtime's speed-up over its own time at "
            f"{threads[0]} thread{'s' if threads[0] > 1 else ''}, the median of each "
            "round's own ratio.", 76)
    for note in notes:
        lines += [""] + textwrap.wrap(f"Note: {note}.", 76)
    with open(args.markdown, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"bench: wrote {args.markdown}")


if __name__ == "__main__":
    sys.exit(main())
