#!/usr/bin/env python3
"""bench/run.py end to end on a tiny model, so that the one command that
regenerates docs/performance.md keeps working: both thread counts, a peer,
the ratios and the Markdown page; an unknown peer is refused. Times are
not checked (speed is measured in bench/, never in tests)."""
import argparse
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    page = os.path.join(args.work, "performance.md")
    if os.path.exists(page):
        os.remove(page)
    model = os.path.join(ROOT, "test", "models", "exported", "gpt_tiny_dynbatch")
    run = [sys.executable, os.path.join(ROOT, "bench", "run.py"), "--build", args.build,
           "--iterations", "2", "--warmup", "1", "--rounds", "2"]
    res = subprocess.run(run + ["--threads", "1,2", "--peers", "ort", "--pin-shapes",
                                "--markdown", page, model],
                         capture_output=True, text=True)
    print(res.stdout + res.stderr)
    failures = []
    if res.returncode != 0:
        failures.append(f"bench/run.py exited {res.returncode}")
    rows = [l for l in res.stdout.splitlines() if l.startswith("gpt_tiny_dynbatch ")]
    if len(rows) != 2:
        failures.append(f"expected a row per thread count, got {len(rows)}")
    if "note:" in res.stdout:
        failures.append("ONNX Runtime's outputs disagree with the data set's")
    text = open(page).read() if os.path.exists(page) else ""
    head = "| model | threads | kiln ms | ORT ms | ORT/kiln | kiln xN | ORT xN |"
    if head not in text:
        failures.append(f"{page} lacks the table head {head!r}")
    number = r"[0-9]+(\.[0-9]+)?"
    for t in (1, 2):
        cells = rf"\| gpt_tiny_dynbatch \| {t} \|( {number} \|){{5}}"
        if not re.search(cells, text):
            failures.append(f"{page} has no {t}-thread row of numbers")
        if f"Geometric mean at {t} thread" not in text:
            failures.append(f"{page} has no geometric mean at {t} threads")
    bad = subprocess.run(run + ["--peers", "nosuch", model], capture_output=True, text=True)
    if bad.returncode == 0 or "unknown peer 'nosuch'" not in bad.stderr:
        failures.append(f"an unknown peer was not refused: {bad.returncode} {bad.stderr!r}")
    for f in failures:
        print(f"FAIL: {f}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
