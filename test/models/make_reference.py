#!/usr/bin/env python3
"""Turns an .onnx file into a backend-test folder: NAME/model.onnx and
NAME/test_data_set_0/{input,output}_N.pb, with seeded random inputs and the
outputs ONNX Runtime computes for them (the reference for kiln).

  python3 test/models/make_reference.py model.onnx OUT_DIR/NAME
"""
import os
import shutil
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper


def main():
    src, dst = sys.argv[1], sys.argv[2]
    os.makedirs(os.path.join(dst, "test_data_set_0"), exist_ok=True)
    shutil.copyfile(src, os.path.join(dst, "model.onnx"))
    model = onnx.load(src)
    rng = np.random.default_rng(1)
    inits = {i.name for i in model.graph.initializer}
    feeds = {}
    for i, inp in enumerate(x for x in model.graph.input if x.name not in inits):
        tt = inp.type.tensor_type
        shape = [d.dim_value for d in tt.shape.dim]
        dtype = onnx.helper.tensor_dtype_to_np_dtype(tt.elem_type)
        if np.issubdtype(dtype, np.integer):
            value = rng.integers(0, 50, size=shape).astype(dtype)
        else:
            value = rng.standard_normal(shape).astype(dtype)
        feeds[inp.name] = value
        with open(os.path.join(dst, "test_data_set_0", f"input_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(value, inp.name).SerializeToString())
    sess = ort.InferenceSession(src, providers=["CPUExecutionProvider"])
    for i, (out, value) in enumerate(zip(sess.get_outputs(), sess.run(None, feeds))):
        with open(os.path.join(dst, "test_data_set_0", f"output_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(value, out.name).SerializeToString())
    print(f"wrote {dst}")


if __name__ == "__main__":
    main()
