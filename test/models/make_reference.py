#!/usr/bin/env python3
"""Turns an .onnx file into a backend-test folder: NAME/model.onnx and
NAME/test_data_set_0/{input,output}_N.pb, with seeded random inputs and the
outputs ONNX Runtime computes for them (the reference for kiln).

  python3 test/models/make_reference.py model.onnx OUT_DIR/NAME [--batches 1,8]

With --batches, symbolic dimensions (the batch) take each size in turn:
test_data_set_0 holds the first, test_data_set_1 the second, ... With
--dims "batch=1,seq=16;batch=3,seq=7", each ;-separated set names the size
of every symbolic dimension for one data set.
"""
import argparse
import os
import shutil
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("out")
    ap.add_argument("--batches", default="1")
    ap.add_argument("--dims", help="NAME=V,...;NAME=V,... (one set per data set)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    shutil.copyfile(args.model, os.path.join(args.out, "model.onnx"))
    if args.dims:
        sets = [dict((k, int(v)) for k, v in (kv.split("=") for kv in d.split(",")))
                for d in args.dims.split(";")]
    else:
        sets = [int(b) for b in args.batches.split(",")]
    for n, dims in enumerate(sets):
        write_data_set(args.model, os.path.join(args.out, f"test_data_set_{n}"), dims)
    print(f"wrote {args.out}")


def write_data_set(src, dst, dims):
    """dims: the size of every symbolic dimension, or a dict of them by name."""
    os.makedirs(dst, exist_ok=True)
    model = onnx.load(src)
    rng = np.random.default_rng(sum(dims.values()) if isinstance(dims, dict) else dims)
    size = lambda d: dims[d.dim_param] if isinstance(dims, dict) else dims
    inits = {i.name for i in model.graph.initializer}
    feeds = {}
    for i, inp in enumerate(x for x in model.graph.input if x.name not in inits):
        tt = inp.type.tensor_type
        shape = [d.dim_value if d.HasField("dim_value") else size(d) for d in tt.shape.dim]
        dtype = onnx.helper.tensor_dtype_to_np_dtype(tt.elem_type)
        if np.issubdtype(dtype, np.integer):
            value = rng.integers(0, 50, size=shape).astype(dtype)
        else:
            value = rng.standard_normal(shape).astype(dtype)
        feeds[inp.name] = value
        with open(os.path.join(dst, f"input_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(value, inp.name).SerializeToString())
    sess = ort.InferenceSession(src, providers=["CPUExecutionProvider"])
    for i, (out, value) in enumerate(zip(sess.get_outputs(), sess.run(None, feeds))):
        with open(os.path.join(dst, f"output_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(value, out.name).SerializeToString())


if __name__ == "__main__":
    main()
