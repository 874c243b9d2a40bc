#!/usr/bin/env python3
"""Runs a model compiled with --providers=cuda,cpu against the mock CUDA
driver (test/unit/MockCudaDriver.cpp: device memory is host memory, kernels
are counted, not run) and checks what the host side does, from the mock's
counters and kiln-run's trace:

  - device memory is allocated once per session (the planned device arena),
    not per run, all work goes to one stream per session, and the host arena
    is page-locked at most once;
  - weights are uploaded on the first run only, and the trace's
    upload_constant events account for exactly those bytes;
  - with --device-io, inputs and outputs do not cross per run;
  - per-run copies have a page-locked host side (the host arena, or the
    pinned staging of the caller's inputs and outputs);
  - kernels and copies appear in the trace as Kernel events of provider
    CUDAExecutionProvider (ONNX Runtime's profile schema) on a track of
    their own, kernels named after their ONNX nodes, copies with their
    bytes.

Outputs are not compared (the mock runs no kernels); test/gpu/run.sh does
that on a GPU. Exit 0 pass, 1 fail, 77 (ctest SKIP) when the model is absent.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "profile"))
import trace_schema  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from checks import Checks  # noqa: E402


def run(args, lib, work, tag, iterations, extra):
    stats = os.path.join(work, f"{tag}.json")
    trace = os.path.join(work, f"{tag}.trace.json")
    env = dict(os.environ, KILN_CUDA_DRIVER=args.mock, KILN_MOCK_CUDA_STATS=stats)
    env.pop("KILN_FORCE_CPU", None)
    p = subprocess.run([args.kiln_run, lib, "--iterations", str(iterations),
                        "--profile", trace] + extra,
                       capture_output=True, text=True, env=env, timeout=300)
    if p.returncode != 0:
        raise SystemExit(f"FAIL: kiln-run {tag}: exit {p.returncode}\n{p.stderr}")
    line = json.loads([l for l in p.stdout.splitlines() if l.startswith("{")][-1])
    if line.get("provider") != "cuda":
        raise SystemExit(f"FAIL: {tag}: ran on {line.get('provider')}, not on the mock CUDA")
    with open(trace) as f:
        t = json.load(f)
    events = t if isinstance(t, list) else t["traceEvents"]
    with open(stats) as f:
        return json.load(f), events


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--kiln-run", required=True)
    ap.add_argument("--mock", required=True, help="libkiln_mock_cuda.so")
    ap.add_argument("--model", required=True)
    # A model with run-time sizes runs at these (kiln-run --dim NAME=V):
    # its launch grids and device buffers are sized per run.
    ap.add_argument("--dim", action="append", default=[])
    args = ap.parse_args()
    if not os.path.exists(args.model):
        print(f"SKIPPED: {args.model} not found (../shared/models is not part of a clone)")
        return 77
    checks = Checks()
    expect = checks.expect

    with tempfile.TemporaryDirectory() as work:
        prefix = os.path.join(work, "m")
        c = subprocess.run([args.kiln, "compile", args.model, "--providers=cuda,cpu", "-q",
                            "-o", prefix], capture_output=True, text=True)
        if c.returncode != 0:
            print(c.stderr)
            return 1
        lib = os.path.join(work, "libm.so")
        runs = {}
        dims = [a for d in args.dim for a in ("--dim", d)]
        for io, extra in (("host", []), ("device", ["--device-io"])):
            for n in (1, 4):
                runs[io, n] = run(args, lib, work, f"{io}{n}", n, extra + dims)
        per_run = {}
        for io in ("host", "device"):
            (s1, _), (s4, _) = runs[io, 1], runs[io, 4]
            per_run[io] = {k: (s4[k] - s1[k]) / 3 for k in s1}
            expect(s1["allocs"] == s4["allocs"],
                   f"{io} I/O: device allocations do not grow with runs "
                   f"({s1['allocs']} after 1 run, {s4['allocs']} after 4)")
            expect(per_run[io]["launches"] > 0 and per_run[io]["launches"] == s1["launches"],
                   f"{io} I/O: every run launches the same {s1['launches']} kernels")
            expect(s1["streams"] == 1 and s4["streams"] == 1,
                   f"{io} I/O: one stream per session ({s4['streams']} created in 4 runs)")
            # (No registration when no host buffer is left in the arena.)
            expect(s1["host_registers"] <= 1 and s4["host_registers"] == s1["host_registers"],
                   f"{io} I/O: the host arena is page-locked at most once ({s4['host_registers']} "
                   f"registrations in 4 runs)")
        for io in ("host", "device"):
            expect(per_run[io]["pageable_copies"] == 0,
                   f"{io} I/O: every per-run copy's host side is page-locked (host arena or "
                   f"staging; {per_run[io]['pageable_copies']:.0f} pageable copies per run)")
        s1, events = runs["host", 1]
        first = s1["htod_bytes"] - per_run["host"]["htod_bytes"]
        uploads = sum(e.get("args", {}).get("bytes", 0) for e in events
                      if e["name"] == "upload_constant")
        expect(first > 0 and uploads == first,
               f"weights cross once: the first run uploads {first:.0f} more bytes than "
               f"later ones, the trace's upload_constant events {uploads}")
        _, events4 = runs["host", 4]
        expect(sum(1 for e in events4 if e["name"] == "upload_constant") ==
               sum(1 for e in events if e["name"] == "upload_constant"),
               "no upload_constant after the first run")
        host_bytes = per_run["host"]["htod_bytes"] + per_run["host"]["dtoh_bytes"]
        dev_bytes = per_run["device"]["htod_bytes"] + per_run["device"]["dtoh_bytes"]
        expect(dev_bytes < host_bytes,
               f"device I/O moves fewer bytes per run ({dev_bytes:.0f}) than host I/O "
               f"({host_bytes:.0f})")
        bad = trace_schema.problems(events4)
        expect(not bad, "the trace follows ONNX Runtime's profile schema"
               + (f": {bad[:3]}" if bad else ""))
        cuda = [e for e in events4
                if e.get("args", {}).get("provider") == "CUDAExecutionProvider"]
        expect(all(e["cat"] == "Kernel" for e in cuda),
               "device kernels and copies are Kernel events")
        expect(cuda and all(e["tid"] == -1 for e in cuda) and
               not any(e["tid"] < 0 for e in events4 if e not in cuda),
               "device work has a track of its own (tid -1), apart from the host's")
        ops = {e["args"]["op_name"] for e in cuda if not e["name"].startswith(("copy_", "upload_"))}
        expect(ops and all(re.fullmatch(r"[A-Z][A-Za-z]*", o) for o in ops),
               f"kernels carry their launching node's op type ({sorted(ops)[:4]})")
        expect(all(e["args"]["op_name"].startswith("Memcpy") for e in cuda
                   if e["name"].startswith(("copy_", "upload_"))),
               "copies carry ONNX Runtime's Memcpy op types")
        kernels = {e["name"] for e in cuda if not e["name"].startswith(("copy_", "upload_"))}
        copies = [e for e in cuda if e["name"].startswith("copy_")]
        expect(kernels and not any(k.startswith("__kiln_") for k in kernels),
               f"{len(kernels)} kernels in the trace, named after nodes "
               f"(e.g. {sorted(kernels)[:3]})")
        expect(all(e["args"].get("bytes", 0) > 0 for e in copies),
               f"{len(copies)} copies in the trace, each with its bytes")
    return checks.result()


if __name__ == "__main__":
    sys.exit(main())
