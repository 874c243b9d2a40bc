#!/usr/bin/env python3
"""Same numbers at any thread count: compiles each model once and runs it
with kiln-run --threads 1, 2 and 4 on the same generated inputs; every
output must be bitwise identical to the 1-thread run (parallel loops split
only iterations that write disjoint data, never a reduction). Also checks
that the model has parallel loops at all (kiln compile --report).

usage: check_threads.py KILN KILN_RUN WORKDIR MODEL.onnx[:NAME=SIZE,...][@MIN_LOOPS]...
(MIN_LOOPS: the parallel loops the model must have, default 1; a tiny
model has none, each of its ops below the work that pays for a split)
Models that are absent (../shared is not part of a clone) are skipped with
a message; exit 77 when all are.
"""
import glob
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from checks import Checks  # noqa: E402


def main():
    kiln, kiln_run, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    checks = Checks()
    ran = 0
    for spec in sys.argv[4:]:
        spec, _, min_loops = spec.partition("@")
        min_loops = int(min_loops or 1)
        model, _, dims = spec.partition(":")
        if not os.path.exists(model):
            print(f"SKIPPED: {model} not found (../shared/models is not part of a clone)")
            continue
        ran += 1
        name = os.path.basename(os.path.dirname(model))
        prefix = os.path.join(work, name)
        r = subprocess.run([kiln, "compile", model, "-o", prefix, "--report"],
                           capture_output=True, text=True)
        checks.expect(r.returncode == 0, f"{name}: compiles", r.stderr[-2000:])
        if r.returncode != 0:
            continue
        m = re.search(r"rewrite parallel_loops: (\d+)", r.stderr)
        loops = int(m.group(1)) if m else 0
        checks.expect(loops >= min_loops, f"{name}: {loops} parallel loops "
                      f"(at least {min_loops})")
        dim_args = [a for d in dims.split(",") if d for a in ("--dim", d)]
        outputs = {}
        for threads in (1, 2, 4):
            out = os.path.join(work, f"{name}_t{threads}")
            os.makedirs(out, exist_ok=True)
            for f in glob.glob(os.path.join(out, "*")):
                os.remove(f)
            r = subprocess.run([kiln_run, os.path.join(work, f"lib{name}.so"), "--threads",
                                str(threads), "--output-dir", out] + dim_args,
                               capture_output=True, text=True)
            checks.expect(r.returncode == 0, f"{name}: runs at {threads} threads", r.stderr[-2000:])
            outputs[threads] = {os.path.basename(f): open(f, "rb").read()
                                for f in sorted(glob.glob(os.path.join(out, "*")))}
        base = outputs[1]
        checks.expect(bool(base), f"{name}: writes its outputs", "")
        for threads in (2, 4):
            same = outputs[threads] == base
            differ = [k for k in base if outputs[threads].get(k) != base[k]]
            checks.expect(same, f"{name}: outputs at {threads} threads are bitwise those at 1",
                          f"differ: {differ}")
    if not ran:
        return 77
    return checks.result()


if __name__ == "__main__":
    sys.exit(main())
