#!/usr/bin/env python3
"""How kiln's compile time grows with the graph: long chains of small nodes
and many initializers.

  python3 bench/compile_time.py [--kiln build/bin/kiln] [--sizes 2000,5000,20000]

Builds each model in a temporary folder, times `kiln compile` on it (wall
clock, one run each) and prints seconds and microseconds per node. Compile
time should grow linearly: the per-node figure stays flat as the graph grows.
Models:
  chain N      x -> Add(c_i) -> Relu -> Add(c_i) -> ... : N nodes, one
               small 1x16 initializer shared by all Adds
  inits N      N/2 Adds, each with its own 1x16 initializer (N/2 of them)
  ort_chain N  the chain, timed through ONNX Runtime's session creation
               (all graph optimizations) for comparison, when installed
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def chain(n, own_initializers):
    nodes, inits = [], []
    prev = "x"
    shared = numpy_helper.from_array(np.full((1, 16), 0.5, np.float32), "c")
    if not own_initializers:
        inits.append(shared)
    for i in range(n):
        out = "t%d" % i
        if i % 2 == 0:
            c = "c"
            if own_initializers:
                c = "c%d" % i
                inits.append(numpy_helper.from_array(
                    np.full((1, 16), i * 1e-4, np.float32), c))
            nodes.append(helper.make_node("Add", [prev, c], [out], name="add%d" % i))
        else:
            nodes.append(helper.make_node("Relu", [prev], [out], name="relu%d" % i))
        prev = out
    nodes.append(helper.make_node("Identity", [prev], ["y"], name="out"))
    graph = helper.make_graph(
        nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16])], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def time_kiln(kiln, path, out):
    t = time.perf_counter()
    r = subprocess.run([kiln, "compile", path, "-o", out, "-q"], capture_output=True, text=True)
    dt = time.perf_counter() - t
    if r.returncode != 0:
        sys.exit("kiln compile failed on %s:\n%s" % (path, r.stderr))
    return dt


def time_ort(path):
    try:
        import onnxruntime as ort
    except ImportError:
        return None
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    t = time.perf_counter()
    ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    return time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kiln", default=os.path.join(ROOT, "build", "bin", "kiln"))
    ap.add_argument("--sizes", default="2000,5000,20000")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    print("%-8s %7s %10s %12s %10s" % ("model", "nodes", "kiln s", "kiln us/node", "ORT s"))
    with tempfile.TemporaryDirectory() as d:
        for kind in ("chain", "inits"):
            for n in sizes:
                path = os.path.join(d, "%s%d.onnx" % (kind, n))
                onnx.save(chain(n, kind == "inits"), path)
                dt = time_kiln(args.kiln, path, os.path.join(d, "out", "%s%d" % (kind, n)))
                ort_s = time_ort(path)
                print("%-8s %7d %10.2f %12.0f %10s" % (
                    kind, n, dt, dt / n * 1e6, "-" if ort_s is None else "%.2f" % ort_s),
                    flush=True)


if __name__ == "__main__":
    main()
