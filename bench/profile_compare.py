#!/usr/bin/env python3
"""Where kiln and ONNX Runtime spend their time on one model, per op type:
profiles both on the same inputs in one run (kiln-run --profile; ONNX
Runtime's enable_profiling with the same intra-op threads, one by default, and all graph
optimizations, as bench/run.py times it) and prints
`kiln profile --compare kiln.json ort.json`.

  python3 bench/profile_compare.py MODEL_DIR_OR_ONNX [--iterations 20] [--html out.html]
      [--data-set MODEL_DIR/test_data_set_0]
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--threads", type=int, default=1,
                    help="intra-op threads of both runtimes (default 1)")
    ap.add_argument("--work", help="keep the profiles here (default: a temporary folder)")
    ap.add_argument("--html", help="also write kiln profile's page comparing the two")
    ap.add_argument("--data-set", metavar="DIR",
                    help="profile on this test_data_set's inputs, with kiln compiled for "
                         "their shapes (as bench/run.py --pin-shapes), instead of random "
                         "inputs with every symbolic dimension 1")
    args = ap.parse_args()
    model = args.model if args.model.endswith(".onnx") else os.path.join(args.model, "model.onnx")
    name = os.path.basename(os.path.dirname(os.path.abspath(model)))
    work = args.work or tempfile.mkdtemp(prefix="kiln_profile_")
    os.makedirs(work, exist_ok=True)
    kiln = os.path.join(args.build, "bin", "kiln")
    kiln_run = os.path.join(args.build, "bin", "kiln-run")

    # The same inputs for both: the data set's, or random ones, written once.
    m = onnx.load(model, load_external_data=False)
    inits = {i.name for i in m.graph.initializer}
    rng = np.random.default_rng(0)
    feeds, flags, pins = {}, [], []
    graph_inputs = [vi for vi in m.graph.input if vi.name not in inits]
    for k, vi in enumerate(graph_inputs):
        if args.data_set:
            t = onnx.TensorProto()
            with open(os.path.join(args.data_set, f"input_{k}.pb"), "rb") as f:
                t.ParseFromString(f.read())
            a = numpy_helper.to_array(t)
            pins += ["--input-shape", f"{vi.name}=" + ",".join(map(str, a.shape))]
        else:
            t = vi.type.tensor_type
            shape = [d.dim_value if d.dim_value > 0 else 1 for d in t.shape.dim]
            dtype = onnx.helper.tensor_dtype_to_np_dtype(t.elem_type)
            a = (rng.integers(0, 100, shape) if np.issubdtype(dtype, np.integer)
                 else rng.standard_normal(shape)).astype(dtype)
        feeds[vi.name] = a
        path = os.path.join(work, f"in_{k}.npy")
        np.save(path, a)
        flags.append(f"--input={vi.name}={path}")

    prefix = os.path.join(work, name)
    subprocess.run([kiln, "compile", model, "-o", prefix, "-q", *pins], check=True)
    kiln_trace = os.path.join(work, f"{name}.kiln.json")
    subprocess.run([kiln_run, os.path.join(work, f"lib{name}.so"), *flags, "--warmup", "3",
                    "--iterations", str(args.iterations), "--threads", str(args.threads),
                    "--profile", kiln_trace],
                   check=True, capture_output=True)

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = args.threads
    opts.inter_op_num_threads = 1
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    opts.enable_profiling = True
    opts.profile_file_prefix = os.path.join(work, f"{name}.ort")
    sess = ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"])
    for _ in range(args.iterations + 3):
        sess.run(None, feeds)
    ort_trace = os.path.join(work, f"{name}.ort.json")
    shutil.move(sess.end_profiling(), ort_trace)

    cmd = [kiln, "profile", "--compare", kiln_trace, ort_trace]
    if args.html:
        cmd += ["--html", args.html]
    return subprocess.call(cmd)


if __name__ == "__main__":
    sys.exit(main())
