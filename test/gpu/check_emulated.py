#!/usr/bin/env python3
"""Checks a model's CUDA kernels without a GPU.

Compiles the model with --providers=cuda,cpu --cuda-emulate, which turns
every kernel kiln-cuda-offload made (shared-memory tiled contractions,
parallel reductions, one-thread-per-element loops) into host code with the
same semantics, then runs it with kiln-run --check-dir on each data set.
Also checks that at least the expected number of contractions and
reductions got shared-memory kernels, so a regression that quietly sends
them back to the naive path fails too.

Exit 0 on success, 1 on a failure, 77 (ctest SKIP) when the model is absent.
"""
import argparse
import glob
import os
import re
import subprocess
import sys
import tempfile


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--kiln-run", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--min-contractions", type=int, default=0)
    ap.add_argument("--min-reductions", type=int, default=0)
    # Optional shape variants (a symbolic dim otherwise gets run-time
    # launch grids and device buffers).
    ap.add_argument("--dim-values", action="append", default=[])
    args = ap.parse_args()
    if not os.path.exists(args.model):
        print(f"SKIPPED: {args.model} not found (../shared/models is not part of a clone)")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "model")
        r = subprocess.run([args.kiln, "compile", args.model, "--providers=cuda,cpu",
                            "--cuda-emulate", "--report", "-q", "-o", out] +
                           [f"--dim-values={d}" for d in args.dim_values],
                           capture_output=True, text=True)
        if r.returncode != 0:
            print(r.stderr)
            return 1
        m = re.search(r"cuda kernels: (\d+) shared-memory tiled contractions, (\d+) parallel "
                      r"reductions, (\d+) one thread per element", r.stderr)
        if not m:
            print("no CUDA kernels in the report:\n" + r.stderr)
            return 1
        contractions, reductions, naive = map(int, m.groups())
        print(f"kernels: {contractions} tiled contractions, {reductions} parallel reductions, "
              f"{naive} one thread per element")
        failures = 0
        if contractions < args.min_contractions or reductions < args.min_reductions:
            print(f"FAIL: expected at least {args.min_contractions} tiled contractions and "
                  f"{args.min_reductions} parallel reductions")
            failures += 1
        sets = sorted(glob.glob(os.path.join(os.path.dirname(args.model), "test_data_set_*")))
        if not sets:
            print("FAIL: no test_data_set_* next to the model")
            return 1
        for data in sets:
            run = subprocess.run([args.kiln_run, os.path.join(tmp, "libmodel.so"), "--check-dir", data],
                                 capture_output=True, text=True)
            print(f"{os.path.basename(data)}: {run.stdout.strip()} {run.stderr.strip()}")
            failures += run.returncode != 0
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
