#!/usr/bin/env python3
"""Compiles a model with --providers=cuda,cpu --emit=ptx and checks every
kernel module with ptxas for each supported architecture.

Exit 0 when ptxas accepts all of them, 1 otherwise, 77 (ctest SKIP) when
ptxas or the model is absent.
"""
import argparse
import os
import subprocess
import sys
import tempfile


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--ptxas", default="/usr/local/cuda/bin/ptxas")
    ap.add_argument("--archs", default="sm_90,sm_89,sm_80")
    args = ap.parse_args()
    if not os.path.exists(args.ptxas):
        print(f"SKIPPED: {args.ptxas} not found")
        return 77
    if not os.path.exists(args.model):
        print(f"SKIPPED: {args.model} not found (../shared/models is not part of a clone)")
        return 77
    failures = 0
    for arch in args.archs.split(","):
        ptx = subprocess.run([args.kiln, "compile", args.model, "--providers=cuda,cpu",
                              f"--cuda-arch={arch}", "--emit=ptx", "-q"],
                             capture_output=True, text=True)
        if ptx.returncode != 0:
            print(ptx.stderr)
            return 1
        modules = [m for m in ptx.stdout.split("// kernels of ")[1:]]
        if not modules:
            print(f"{arch}: no kernels (the model has no CUDA partition)")
            continue
        with tempfile.TemporaryDirectory() as tmp:
            for i, text in enumerate(modules):
                path = os.path.join(tmp, f"k{i}.ptx")
                with open(path, "w") as f:
                    f.write(text.split("\n", 1)[1])
                r = subprocess.run([args.ptxas, f"-arch={arch}", path, "-o",
                                    os.path.join(tmp, "k.cubin")], capture_output=True, text=True)
                if r.returncode != 0:
                    failures += 1
                    print(f"{arch}: kernel module {i}: {r.stderr.strip()}")
        print(f"{arch}: {len(modules)} kernel modules, ptxas "
              f"{'rejected some' if failures else 'accepted all'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
