#!/usr/bin/env python3
"""Compiles one model folder with kiln and checks it with kiln-run.

Exit 0 on a match, 1 on a mismatch or error, 77 (ctest SKIP) when the model
folder does not exist, which is the case in a user's fresh clone, or when
this machine cannot run code for --target-cpu.
"""
import argparse
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import host_cpu  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--kiln-run", required=True)
    ap.add_argument("--model-dir", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--atol", default="1e-4")
    ap.add_argument("--rtol", default="0")
    ap.add_argument("--providers", default="cpu")
    ap.add_argument("--kiln-flag", action="append", default=[],
                    help="an extra kiln compile flag (repeatable)")
    ap.add_argument("--target-cpu", help="compile for this CPU (kiln --target-cpu)")
    args = ap.parse_args()

    model = os.path.join(args.model_dir, "model.onnx")
    if not os.path.exists(model):
        print(f"SKIPPED: {model} not found (../shared/models is not part of a clone)")
        return 77
    if args.target_cpu:
        ok, why = host_cpu.can_run(args.target_cpu)
        if not ok:
            print(f"SKIPPED: {why}")
            return 77
        args.kiln_flag.append(f"--target-cpu={args.target_cpu}")
    name = os.path.basename(os.path.normpath(args.model_dir))
    prefix = os.path.join(args.out, name)
    os.makedirs(args.out, exist_ok=True)
    cmd = [args.kiln, "compile", model, "-o", prefix, f"--providers={args.providers}",
           *args.kiln_flag]
    print("+", " ".join(cmd), flush=True)
    if subprocess.call(cmd) != 0:
        return 1
    lib = os.path.join(args.out, f"lib{name}.so")
    # Every data set, with one compiled library (a model whose batch is
    # resolved at run time has one per batch size; one compiled per
    # sequence length, one per length).
    sets = sorted(d for d in os.listdir(args.model_dir) if d.startswith("test_data_set_"))
    if not sets:
        print(f"error: no test_data_set_* in {args.model_dir}")
        return 1
    failed = False
    for data in sets:
        cmd = [args.kiln_run, lib, "--check-dir", os.path.join(args.model_dir, data),
               "--atol", args.atol, "--rtol", args.rtol]
        print("+", " ".join(cmd), flush=True)
        failed |= subprocess.call(cmd) != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
