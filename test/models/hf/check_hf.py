"""Hugging Face exports compiled once with no shape flags, run at several
shapes against ONNX Runtime: BertForQuestionAnswering (dynamic batch and
sequence) and a GPT2LMHeadModel decoder step with its KV cache (dynamic
batch, seq and past_seq, an empty past included).

usage: check_hf.py KILN KILN_RUN WORKDIR
"""
import os
import subprocess
import sys

import numpy as np
import onnxruntime as ort

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
from checks import Checks  # noqa: E402

VOCAB, HEADS, HEAD_DIM, LAYERS = 120, 2, 16, 2


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True)


def run_kiln(kiln_run, lib, case, feeds):
    os.makedirs(case, exist_ok=True)
    args = []
    for k, v in feeds.items():
        np.save(f"{case}/{k.replace('.', '_')}.npy", v)
        args += ["--input", f"{k}={case}/{k.replace('.', '_')}.npy"]
    r = run([kiln_run, lib, *args, "--output-dir", case])
    return r


def compare(checks, label, sess, feeds, case, rtol=1e-4, atol=1e-4):
    want = sess.run(None, feeds)
    for out, ref in zip(sess.get_outputs(), want):
        path = f"{case}/{out.name}.npy"
        got = np.load(path) if os.path.exists(path) else None
        ok = got is not None and got.shape == ref.shape and np.allclose(got, ref, rtol=rtol,
                                                                          atol=atol)
        detail = ("missing" if got is None else f"shape {got.shape} vs {ref.shape}"
                  if got.shape != ref.shape else
                  f"max abs err {np.max(np.abs(got - ref)) if got.size else 0}")
        checks.expect(ok, f"{label}: {out.name} {list(ref.shape)} matches ONNX Runtime "
                      f"(rtol {rtol}, atol {atol})", detail)


def bert(kiln, kiln_run, work, checks, rng):
    model = f"{HERE}/bert_qa/model.onnx"
    r = run([kiln, "compile", model, "-o", f"{work}/bert_qa", "-q"])
    checks.expect(r.returncode == 0, "bert_qa: compiles once with no shape flags", r.stderr)
    if r.returncode:
        return
    sess = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    for batch, seq in [(1, 5), (3, 77), (8, 384)]:
        ids = rng.integers(0, VOCAB, (batch, seq), dtype=np.int64)
        mask = np.ones((batch, seq), dtype=np.int64)
        mask[-1, seq - seq // 3:] = 0  # padding in the last row
        types = np.zeros((batch, seq), dtype=np.int64)
        types[:, seq // 2:] = 1
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        case = f"{work}/bert_{batch}x{seq}"
        r = run_kiln(kiln_run, f"{work}/libbert_qa.so", case, feeds)
        label = f"bert_qa at (batch, sequence) = ({batch}, {seq})"
        checks.expect(r.returncode == 0, f"{label}: runs", r.stderr[-2000:])
        if r.returncode == 0:
            compare(checks, label, sess, feeds, case)


def gpt2_feeds(rng, batch, past, seq):
    feeds = {"input_ids": rng.integers(0, VOCAB, (batch, seq), dtype=np.int64),
             "attention_mask": np.ones((batch, past + seq), dtype=np.int64)}
    for i in range(LAYERS):
        for kv in ("key", "value"):
            feeds[f"past_key_values.{i}.{kv}"] = rng.standard_normal(
                (batch, HEADS, past, HEAD_DIM)).astype(np.float32)
    return feeds


def gpt2(kiln, kiln_run, work, checks, rng):
    model = f"{HERE}/gpt2/model.onnx"
    r = run([kiln, "compile", model, "-o", f"{work}/gpt2", "-q"])
    checks.expect(r.returncode == 0, "gpt2: compiles once with no shape flags", r.stderr)
    if r.returncode:
        return
    sess = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    for batch, past, seq in [(1, 0, 5), (1, 128, 1), (2, 4, 3), (3, 31, 2)]:
        feeds = gpt2_feeds(rng, batch, past, seq)
        case = f"{work}/gpt2_{batch}_{past}_{seq}"
        r = run_kiln(kiln_run, f"{work}/libgpt2.so", case, feeds)
        label = f"gpt2 at (batch, past_seq, seq) = ({batch}, {past}, {seq})"
        checks.expect(r.returncode == 0, f"{label}: runs", r.stderr[-2000:])
        if r.returncode == 0:
            compare(checks, label, sess, feeds, case)


def main():
    kiln, kiln_run, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    checks = Checks()
    rng = np.random.default_rng(17)
    bert(kiln, kiln_run, work, checks, rng)
    gpt2(kiln, kiln_run, work, checks, rng)
    return checks.result()


if __name__ == "__main__":
    sys.exit(main())
