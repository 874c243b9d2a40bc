#!/usr/bin/env python3
"""GEMM microbenchmark: kiln's MatMul beside OpenBLAS (numpy's) and ONNX
Runtime (MLAS) on one core, as fractions of that core's peak, in one run.

  python3 bench/gemm.py [--rounds 5] [--iterations 10] [--quick]

Each case is an ONNX MatMul A[M,K] x B[K,N] with B a constant (as a
model's weights: kiln packs it at compile time) or, marked "B input", a
second input. Large GEMMs are compared with the core's fp32 FMA peak, as
measured by bench/peak.c (independent vector FMA chains at the widest
width the CPU has); small-M GEMMs (decode steps) read their weights once,
so they are compared with the time to stream B once at the core's read
bandwidth for a buffer of B's size (bench/peak.c, four streams at once: a
buffer that fits in the last-level cache partly stays there). kiln runs through kiln-run --threads 1, ONNX Runtime with
one intra-op thread, OpenBLAS through numpy with OPENBLAS_NUM_THREADS=1
in a process of its own. Rounds interleave the three; cells are medians
over rounds of each one's median time.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run as bench_run  # noqa: E402

LARGE = [(256, 256, 256, False), (512, 512, 512, False), (1024, 1024, 1024, False),
         (2048, 2048, 2048, False), (1024, 1024, 1024, True), (128, 768, 3072, False)]
SMALL = [(1, 4096, 4096, False), (4, 4096, 4096, False), (8, 4096, 4096, False)]

# Times numpy's matmul (OpenBLAS) in a process of its own, one thread.
BLAS_SNIPPET = r"""
import json, statistics, sys, time
import numpy as np
m, k, n, iterations, warmup = map(int, sys.argv[1:6])
rng = np.random.default_rng(0)
a = rng.standard_normal((m, k), dtype=np.float32)
b = rng.standard_normal((k, n), dtype=np.float32)
c = np.empty((m, n), np.float32)
for _ in range(warmup):
    np.matmul(a, b, out=c)
times = []
for _ in range(iterations):
    t = time.perf_counter()
    np.matmul(a, b, out=c)
    times.append((time.perf_counter() - t) * 1e3)
print(json.dumps({"median_ms": statistics.median(times)}))
"""


def blas_name():
    try:
        blas = np.__config__.CONFIG["Build Dependencies"]["blas"]
        return f"{blas['name']} {blas['version']}"
    except (AttributeError, KeyError):
        return "numpy's BLAS"


def make_case(work, m, k, n, b_input):
    """The model and its data set; returns (model path, data dir, feeds)."""
    name = f"mm_{m}x{k}x{n}" + ("_binput" if b_input else "")
    d = os.path.join(work, name)
    data = os.path.join(d, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    rng = np.random.default_rng(1)
    a = rng.standard_normal((m, k), dtype=np.float32)
    b = rng.standard_normal((k, n), dtype=np.float32)
    inputs = [helper.make_tensor_value_info("A", TensorProto.FLOAT, [m, k])]
    inits = []
    feeds = {"A": a}
    if b_input:
        inputs.append(helper.make_tensor_value_info("B", TensorProto.FLOAT, [k, n]))
        feeds["B"] = b
    else:
        inits.append(numpy_helper.from_array(b, "B"))
    graph = helper.make_graph([helper.make_node("MatMul", ["A", "B"], ["Y"])], name, inputs,
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [m, n])],
                              inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8  # what ONNX Runtime 1.30 reads
    path = os.path.join(d, "model.onnx")
    onnx.save(model, path)
    for i, v in enumerate(feeds.values()):
        with open(os.path.join(data, f"input_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(v).SerializeToString())
    with open(os.path.join(data, "output_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array((a.astype(np.float64) @ b).astype(np.float32))
                .SerializeToString())
    return name, path, data, feeds


def peak(work, what):
    exe = os.path.join(work, "peak")
    if not os.path.exists(exe):
        cc = next((c for c in ("clang-19", "clang", "cc") if subprocess.run(
            ["which", c], capture_output=True).returncode == 0), "cc")
        subprocess.run([cc, "-O2", "-march=native", "-o", exe,
                        os.path.join(ROOT, "bench", "peak.c")], check=True)
    return float(subprocess.run([exe] + what, check=True, capture_output=True,
                                text=True).stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--iterations", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="the 512 and M=1 cases only")
    args = ap.parse_args()
    work = os.path.join(args.build, "bench", "gemm")
    os.makedirs(work, exist_ok=True)
    kiln = os.path.join(args.build, "bin", "kiln")
    runner = os.path.join(args.build, "bin", "kiln-run")
    gflops = peak(work, ["flops"])
    read_gbs = {}
    print(f"one core: {gflops:.1f} GFLOP/s fp32 FMA peak (bench/peak.c); OpenBLAS: "
          f"{blas_name()}; ONNX Runtime {bench_run.ort.__version__}")
    cases = [c for c in LARGE + SMALL if not args.quick or c[0] in (1, 512) and not c[3]]
    print(f"{'M x K x N':<22} {'kiln ms':>9} {'BLAS ms':>9} {'ORT ms':>9} "
          f"{'kiln':>6} {'BLAS':>6} {'ORT':>6}  {'kiln/BLAS':>9}  of")
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    for m, k, n, b_input in cases:
        name, path, data, feeds = make_case(work, m, k, n, b_input)
        subprocess.run([kiln, "compile", path, "-o", os.path.join(work, name), "-q"],
                       check=True)
        sess = bench_run.ort_session(path, 1)
        res = subprocess.run([runner, os.path.join(work, f"lib{name}.so"), "--check-dir",
                              data, "--rtol", "1e-3", "--atol", "1e-3"],
                             capture_output=True, text=True)
        if res.returncode != 0:
            print(f"{name}: kiln's output does not match numpy's:\n{res.stdout}{res.stderr}")
            return 1
        times = {"kiln": [], "BLAS": [], "ORT": []}
        for _ in range(args.rounds):
            times["kiln"].append(bench_run.kiln_run_ms(args, runner, work, name, data, 1))
            blas = subprocess.run([sys.executable, "-c", BLAS_SNIPPET, str(m), str(k), str(n),
                                   str(args.iterations), str(args.warmup)],
                                  env=env, check=True, capture_output=True, text=True)
            times["BLAS"].append(json.loads(blas.stdout)["median_ms"])
            times["ORT"].append(bench_run.ort_run_ms(sess, feeds, args.iterations,
                                                     args.warmup))
        med = {r: statistics.median(v) for r, v in times.items()}
        if m <= 8:
            # Bandwidth bound: B streamed once at the measured read rate.
            mib = max(1, k * n * 4 >> 20)
            if mib not in read_gbs:
                read_gbs[mib] = peak(work, ["read", str(mib)])
            bound_ms = k * n * 4 / (read_gbs[mib] * 1e9) * 1e3
            frac = {r: bound_ms / t for r, t in med.items()}
            unit = f"read bound ({read_gbs[mib]:.0f} GB/s)"
        else:
            frac = {r: 2.0 * m * k * n / (t * 1e-3) * 1e-9 / gflops for r, t in med.items()}
            unit = "FMA peak"
        label = f"{m}x{k}x{n}" + (" B input" if b_input else "")
        print(f"{label:<22} {med['kiln']:>9.3f} {med['BLAS']:>9.3f} {med['ORT']:>9.3f} "
              f"{frac['kiln']:>6.0%} {frac['BLAS']:>6.0%} {frac['ORT']:>6.0%}  "
              f"{med['BLAS'] / med['kiln']:>9.2f}  {unit}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
