#!/usr/bin/env python3
"""Runs the generation example and compares its greedy tokens with the same
loop on ONNX Runtime (exact; the exported model's top-2 logit margin is at
least 1e-3 at every step, test/models/hf/check_ort.py)."""
import re
import subprocess
import sys

import numpy as np
import onnxruntime as ort

app, model = sys.argv[1], sys.argv[2]
steps = 32
out = subprocess.run([app, str(steps)], capture_output=True, text=True)
print(out.stdout, end="")
if out.returncode:
    print(out.stderr, end="")
    sys.exit(1)
got = [int(t) for t in re.search(r"tokens:([\d ]*)", out.stdout).group(1).split()]

sess = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
names = [i.name for i in sess.get_inputs()]
ids = np.array([[5, 17, 42, 99]], dtype=np.int64)
past = {n: np.zeros((1, 2, 0, 16), np.float32) for n in names if n.startswith("past_")}
want = []
length = 0
for _ in range(steps):
    feeds = {"input_ids": ids,
             "attention_mask": np.ones((1, length + ids.shape[1]), np.int64), **past}
    outs = sess.run(None, feeds)
    next_token = int(np.argmax(outs[0][0, -1]))
    want.append(next_token)
    length += ids.shape[1]
    presents = outs[1:]
    past = {n: p for n, p in zip([n for n in names if n.startswith("past_")], presents)}
    ids = np.array([[next_token]], dtype=np.int64)
print("onnx runtime:", " ".join(map(str, want)))
ok = got == want
print("kiln and ONNX Runtime generate the same", steps, "tokens" if ok else "FAILED")
sys.exit(0 if ok else 1)
