#!/usr/bin/env python3
"""Runs the example app and compares its printed probabilities with ONNX
Runtime on the same input (max abs error <= 1e-5)."""
import re
import subprocess
import sys

import numpy as np
import onnxruntime as ort

app, model = sys.argv[1], sys.argv[2]
out = subprocess.run([app], capture_output=True, text=True, check=True).stdout
got = np.array([float(v) for v in re.findall(r"probs\[\d+\] = ([-\d.e]+)", out)],
               dtype=np.float32)
image = np.sin(0.37 * np.arange(64, dtype=np.float32)).reshape(1, 1, 8, 8)
sess = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
want = sess.run(None, {"image": image})[0].reshape(-1)
err = float(np.max(np.abs(got - want))) if got.size == want.size else float("inf")
print(out, end="")
print(f"kiln vs ONNX Runtime: max abs error {err:.2e} over {want.size} outputs")
sys.exit(0 if err <= 1e-5 else 1)
