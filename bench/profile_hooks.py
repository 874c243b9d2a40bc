#!/usr/bin/env python3
"""What the per-node profiling hooks cost: each model compiled with them
(the default) and with `--no-profile-hooks`, timed side by side by
`kiln-run --iterations` in interleaved rounds (A B A B ...) on the same
pseudo-random inputs, and once more with a profiler attached (`--profile`).

  python3 bench/profile_hooks.py [--models-dir ../shared/models] [--rounds 7] [model ...]

Prints per model the median over rounds of each variant's median run time,
hooks/no-hooks with the spread of the per-round ratios, and the cost of
recording a trace. Defaults: mlp (5 nodes), resnet18, bert_tiny.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def median_ms(kiln_run, lib, iterations, warmup, extra=()):
    p = subprocess.run([kiln_run, lib, "--iterations", str(iterations), "--warmup", str(warmup),
                        *extra], capture_output=True, text=True, check=True)
    return json.loads(p.stdout.strip().splitlines()[-1])["median_ms"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models-dir", default=os.path.join(ROOT, "..", "shared", "models"))
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--iterations", type=int, default=0,
                    help="runs per round (default: about 0.3 s worth)")
    ap.add_argument("models", nargs="*", default=["mlp", "resnet18", "bert_tiny"])
    args = ap.parse_args()
    kiln = os.path.join(args.build, "bin", "kiln")
    kiln_run = os.path.join(args.build, "bin", "kiln-run")
    work = tempfile.mkdtemp(prefix="kiln_hooks_")
    print(f"{'model':10} {'hooks ms':>9} {'none ms':>9} {'hooks/none':>10} {'spread':>13} "
          f"{'traced ms':>9} {'traced/hooks':>12}")
    for name in args.models:
        model = os.path.join(args.models_dir, name, "model.onnx")
        libs = {}
        for tag, flags in (("hooks", []), ("none", ["--no-profile-hooks"])):
            prefix = os.path.join(work, f"{name}_{tag}")
            subprocess.run([kiln, "compile", model, "-o", prefix, "-q", *flags], check=True)
            libs[tag] = os.path.join(work, f"lib{name}_{tag}.so")
        probe = median_ms(kiln_run, libs["none"], 5, 1)
        iters = args.iterations or max(10, int(300 / max(probe, 1e-3)))
        times = {"hooks": [], "none": [], "traced": []}
        trace = os.path.join(work, f"{name}.json")
        for r in range(args.rounds):
            order = ("hooks", "none") if r % 2 == 0 else ("none", "hooks")
            for tag in order:
                times[tag].append(median_ms(kiln_run, libs[tag], iters, 3))
            times["traced"].append(median_ms(kiln_run, libs["hooks"], iters, 3,
                                             ("--profile", trace)))
        ratios = [h / n for h, n in zip(times["hooks"], times["none"])]
        med = {k: statistics.median(v) for k, v in times.items()}
        print(f"{name:10} {med['hooks']:9.4f} {med['none']:9.4f} {med['hooks'] / med['none']:10.3f} "
              f"{min(ratios):6.3f}-{max(ratios):.3f} {med['traced']:9.4f} "
              f"{med['traced'] / med['hooks']:12.3f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
