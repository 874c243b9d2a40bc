"""Shared steps of the check_*.py scripts: write a data set, compile a
model with kiln (for this CPU and for x86-64-v3), and compare kiln-run's
outputs with the data set's at a tolerance."""
import argparse
import os
import subprocess

import onnxruntime as ort
from onnx import numpy_helper

# The build machine's CPU, and AVX2's widths (runs on any machine that
# runs the suite).
CPUS = ("native", "x86-64-v3")


def write_data(data, tensors):
    """Writes (name, array) pairs as data/name.pb."""
    os.makedirs(data, exist_ok=True)
    for name, t in tensors:
        with open(os.path.join(data, f"{name}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(t).SerializeToString())


def compile_model(kiln, model, out, cpu="native"):
    """`kiln compile` into out.{o,h,a,so}; the completed process."""
    flags = [] if cpu == "native" else [f"--target-cpu={cpu}"]
    return subprocess.run([kiln, "compile", model, "-o", out, "-q"] + flags,
                          capture_output=True, text=True)


def check(kiln_run, compiled, out, data, tol=1e-4, rtol=None):
    """kiln-run's outputs of lib<out>.so against data's at atol `tol` and
    rtol `rtol` (`tol` when None); a failed compile `compiled` is the
    failure. The completed process."""
    if compiled.returncode:
        return compiled
    lib = os.path.join(os.path.dirname(out), f"lib{os.path.basename(out)}.so")
    return subprocess.run([kiln_run, lib, "--check-dir", data, "--atol", str(tol),
                           "--rtol", str(tol if rtol is None else rtol)],
                          capture_output=True, text=True)


def check_each_cpu(kiln, kiln_run, model, data, name, tol=1e-4, rtol=None):
    """Compiles `model` for each of CPUS beside it and checks it on `data`;
    returns (cases, failures), printing each failure."""
    failures = 0
    for cpu in CPUS:
        out = os.path.join(os.path.dirname(model), cpu.replace("-", "_"))
        r = check(kiln_run, compile_model(kiln, model, out, cpu), out, data, tol, rtol)
        if r.returncode:
            failures += 1
            print(f"FAIL {name} ({cpu}): {r.stdout}{r.stderr}")
    return len(CPUS), failures


def cpu_has(flag):
    """Whether this machine's CPU lists `flag` (avx512f, amx_int8, ...) in
    /proc/cpuinfo."""
    try:
        with open("/proc/cpuinfo") as f:
            return f" {flag}" in f.read()
    except OSError:
        return False


def parse_args():
    """--kiln, --kiln-run and --work (created)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--kiln-run", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    return args


def reference(model, data, name, x):
    """ONNX Runtime's output of `model` for its one input `name` = x,
    written with x as data's input_0 and output_0."""
    y = ort.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, {name: x})[0]
    write_data(data, (("input_0", x), ("output_0", y)))


def case(args, name, input_name, make, tol=1e-4, rtol=None):
    """One case in work/name: make(path) saves the model there and returns
    its input; ONNX Runtime's output is the reference, checked for each of
    CPUS at atol `tol` and rtol `rtol` (`tol` when None). Returns (cases,
    failures)."""
    d = os.path.join(args.work, name)
    os.makedirs(d, exist_ok=True)
    model = os.path.join(d, "model.onnx")
    data = os.path.join(d, "test_data_set_0")
    reference(model, data, input_name, make(model))
    return check_each_cpu(args.kiln, args.kiln_run, model, data, name, tol, rtol)


def summary(results, reference="ONNX Runtime"):
    """Prints how many of the (cases, failures) pairs' cases matched the
    reference; the exit status (1 if any failed)."""
    cases = failures = 0
    for total, failed in results:
        cases += total
        failures += failed
    print(f"{cases - failures} of {cases} cases match {reference}")
    return 1 if failures else 0
