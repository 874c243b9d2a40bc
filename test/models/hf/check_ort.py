#!/usr/bin/env python3
"""Check the exported HF models in ONNX Runtime at several shapes.

Usage: python3 check_ort.py OUTDIR   (needs numpy, onnx, onnxruntime)
"""
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort


def session(path):
    onnx.checker.check_model(path)
    so = ort.SessionOptions()
    so.log_severity_level = 3
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def check_bert(outdir, rng):
    sess = session(os.path.join(outdir, "bert_qa", "model.onnx"))
    for b, s in [(1, 5), (3, 77), (8, 384)]:
        feeds = {
            "input_ids": rng.integers(0, 120, (b, s), dtype=np.int64),
            "attention_mask": np.ones((b, s), dtype=np.int64),
            "token_type_ids": (np.arange(s)[None, :] >= s // 2).astype(np.int64).repeat(b, 0),
        }
        start, end = sess.run(["start_logits", "end_logits"], feeds)
        assert start.shape == (b, s) and end.shape == (b, s), (start.shape, end.shape)
        assert start.dtype == np.float32 and np.isfinite(start).all() and np.isfinite(end).all()
        print(f"bert_qa ({b},{s}): ok")


N_LAYER, N_HEAD, HEAD_DIM, VOCAB = 2, 2, 16, 120


def gpt2_run(sess, ids, mask, past):
    feeds = {"input_ids": ids, "attention_mask": mask}
    for i in range(N_LAYER):
        feeds[f"past_key_values.{i}.key"] = past[2 * i]
        feeds[f"past_key_values.{i}.value"] = past[2 * i + 1]
    outs = sess.run(None, feeds)
    return outs[0], outs[1:]


def empty_past(b):
    return [np.zeros((b, N_HEAD, 0, HEAD_DIM), np.float32) for _ in range(2 * N_LAYER)]


def check_gpt2(outdir, rng):
    sess = session(os.path.join(outdir, "gpt2", "model.onnx"))
    names = [o.name for o in sess.get_outputs()]
    expect = ["logits"] + [f"present.{i}.{kv}" for i in range(N_LAYER) for kv in ("key", "value")]
    assert names == expect, names

    for b, p, s in [(1, 0, 5), (1, 128, 1), (2, 4, 3)]:
        ids = rng.integers(0, VOCAB, (b, s), dtype=np.int64)
        mask = np.ones((b, p + s), dtype=np.int64)
        past = [rng.standard_normal((b, N_HEAD, p, HEAD_DIM)).astype(np.float32)
                for _ in range(2 * N_LAYER)]
        logits, present = gpt2_run(sess, ids, mask, past)
        assert logits.shape == (b, s, VOCAB), logits.shape
        for pr, pa in zip(present, past):
            assert pr.shape == (b, N_HEAD, p + s, HEAD_DIM), pr.shape
            np.testing.assert_array_equal(pr[:, :, :p], pa)
        assert np.isfinite(logits).all()
        print(f"gpt2 batch={b} past={p} seq={s}: ok")

    # Greedy decode: fixed 4-token prompt with empty past, then 32 single-token steps.
    prompt = np.array([[5, 17, 42, 99]], dtype=np.int64)
    tokens = prompt[0].tolist()
    past = empty_past(1)
    ids = prompt
    step_logits = []
    margins = []
    for step in range(33):
        mask = np.ones((1, len(tokens)), dtype=np.int64)
        logits, past = gpt2_run(sess, ids, mask, past)
        assert past[0].shape[2] == len(tokens)
        step_logits.append(logits[0, -1])
        if step == 32:
            break
        top2 = np.sort(logits[0, -1])[-2:]
        margins.append(float(top2[1] - top2[0]))
        nxt = int(np.argmax(logits[0, -1]))
        tokens.append(nxt)
        ids = np.array([[nxt]], dtype=np.int64)
    assert len(tokens) == 4 + 32
    gen = tokens[4:]
    print(f"gpt2 greedy tokens: {gen}")
    # The decode must be informative: varied tokens, and a top-1/top-2 gap that
    # float rounding differences between runtimes cannot flip.
    assert len(set(gen)) >= 8, f"only {len(set(gen))} distinct greedy tokens: {gen}"
    assert min(margins) >= 1e-3, f"top-1/top-2 margin {min(margins):.3g} < 1e-3"

    # The cached steps must match a single full pass over the same tokens.
    full, _ = gpt2_run(sess, np.array([tokens], dtype=np.int64),
                       np.ones((1, len(tokens)), dtype=np.int64), empty_past(1))
    ref = full[0, 3:]
    got = np.stack(step_logits)
    err = float(np.abs(got - ref).max())
    assert err < 1e-4, err
    print(f"gpt2 greedy 32 steps: ok ({len(set(gen))} distinct, min top-1/top-2 margin "
          f"{min(margins):.4f}, max |cached-full| = {err:.2e})")


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: check_ort.py OUTDIR")
    rng = np.random.default_rng(0)
    check_bert(sys.argv[1], rng)
    check_gpt2(sys.argv[1], rng)
    print("check_ort: PASS")


if __name__ == "__main__":
    main()
