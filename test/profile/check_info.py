#!/usr/bin/env python3
"""Provider discovery and library contents: `kiln-run --list-providers` down
the no-driver and the mock-driver paths, and `kiln-run LIB --info` on a CUDA
build with a symbolic sequence length (inputs and outputs with symbolic
dimensions by name, partitions and providers, the CPU fallback, the target
CPU, and the provider a session picks here, and why).

  check_info.py --kiln K --kiln-run R --mock libkiln_mock_cuda.so --model M.onnx --work DIR
"""
import argparse
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from checks import Checks  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    for a in ("--kiln", "--kiln-run", "--mock", "--model", "--work"):
        ap.add_argument(a, required=True)
    args = ap.parse_args()
    checks = Checks()
    expect = checks.expect

    def run(cmd, driver):
        env = dict(os.environ, KILN_CUDA_DRIVER=driver)
        return subprocess.run(cmd, capture_output=True, text=True, env=env)

    missing = "/nonexistent/libcuda.so.1"
    p = run([args.kiln_run, "--list-providers"], missing)
    expect(p.returncode == 0 and p.stdout.splitlines()[0] == "cpu: available (host)" and
           re.search(r"^cuda: unavailable: no CUDA driver: .*/nonexistent/libcuda\.so\.1",
                     p.stdout, re.M), "no driver: cpu available, cuda unavailable with the reason",
           p.stdout + p.stderr)
    p = run([args.kiln_run, "--list-providers"], args.mock)
    expect(p.returncode == 0 and "cuda: available (kiln mock GPU)" in p.stdout,
           "mock driver: cuda available on its device", p.stdout + p.stderr)

    os.makedirs(args.work, exist_ok=True)
    prefix = os.path.join(args.work, "info")
    c = subprocess.run([args.kiln, "compile", args.model, "-o", prefix, "-q",
                        "--providers=cuda,cpu", "--min-device-elements=0",
                        "--target-cpu=x86-64-v3", "--dim-values=seq=1,7"],
                       capture_output=True, text=True)
    if c.returncode != 0:
        print(c.stderr)
        return 1
    lib = os.path.join(args.work, "libinfo.so")
    for driver, where in ((missing, "cpu"), (args.mock, "cuda")):
        p = run([args.kiln_run, lib, "--info"], driver)
        out = p.stdout
        expect(p.returncode == 0 and "target cpu: x86-64-v3" in out, f"{where}: target CPU", out)
        expect(re.search(r"^input 0: input_ids: int64 \[batch,seq\]$", out, re.M) and
               re.search(r"^output 0: logits: float32 \[batch,seq,\d+\]$", out, re.M),
               f"{where}: inputs and outputs with symbolic dimensions by name", out)
        expect("shape variants: 2 (seq" in out, f"{where}: the shape variants", out)
        expect(re.search(r"^providers: cuda, cpu", out, re.M) and
               re.search(r"^cpu fallback partitions: cpu_0 \(cpu\)", out, re.M) and
               "profiling: per node on the CPU" in out,
               f"{where}: providers, partitions and the CPU fallback", out)
        want = (r"^on this machine: runs on cpu \(CUDA unavailable: no CUDA driver" if where == "cpu"
                else r"^on this machine: runs on cuda$")
        expect(re.search(want, out, re.M), f"{where}: the variant a session picks, and why", out)
    p = run([args.kiln_run, os.path.join(args.work, "nothere.so"), "--info"], missing)
    expect(p.returncode == 2 and p.stderr.count("\n") == 1 and "nothere.so" in p.stderr,
           "a missing library: one error line, exit 2", p.stderr)
    return checks.result()


if __name__ == "__main__":
    sys.exit(main())
