#!/usr/bin/env python3
"""Run the models of bench/export_dynamic_models.py in ONNX Runtime at several shapes.

Usage: python3 bench/check_dynamic_models.py [OUTDIR]   (needs numpy, onnx, onnxruntime)

OUTDIR defaults to build/bench_models under the repo root. A model that is
absent is reported and skipped; any failed check exits non-zero.
"""
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def dims(vi):
    return [d.dim_param or d.dim_value for d in vi.type.tensor_type.shape.dim]


def session(path):
    onnx.checker.check_model(path)
    g = onnx.load(path, load_external_data=False).graph
    inits = {i.name for i in g.initializer}
    for vi in g.input:
        if vi.name not in inits:
            print(f"  in  {vi.name} {dims(vi)}")
    for vi in g.output:
        print(f"  out {vi.name} {dims(vi)}")
    so = ort.SessionOptions()
    so.log_severity_level = 3
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def check_bert(path, rng):
    sess = session(path)
    for b, s in [(1, 128), (8, 128)]:
        ids = rng.integers(0, 30522, (b, s), dtype=np.int64)
        mask = np.ones((b, s), dtype=np.int64)
        if b > 1:
            mask[1, s // 2:] = 0
        (h,) = sess.run(["last_hidden_state"], {"input_ids": ids, "attention_mask": mask})
        assert h.shape == (b, s, 128) and h.dtype == np.float32, (h.shape, h.dtype)
        assert np.isfinite(h).all()
        # Samples are independent: row 0 alone gives the same result.
        (h0,) = sess.run(None, {"input_ids": ids[:1], "attention_mask": mask[:1]})
        np.testing.assert_allclose(h0[0], h[0], rtol=1e-4, atol=1e-4)
        print(f"  bert_dyn ({b},{s}): ok")


GPT2_LAYERS, GPT2_HEADS, GPT2_HEAD_DIM, GPT2_VOCAB = 2, 2, 64, 50257


def gpt2_run(sess, ids, mask, past):
    feeds = {"input_ids": ids, "attention_mask": mask}
    for i in range(GPT2_LAYERS):
        feeds[f"past_key_values.{i}.key"] = past[2 * i]
        feeds[f"past_key_values.{i}.value"] = past[2 * i + 1]
    outs = sess.run(None, feeds)
    return outs[0], outs[1:]


def check_gpt2(path, rng):
    sess = session(path)
    names = [o.name for o in sess.get_outputs()]
    expect = ["logits"] + [f"present.{i}.{kv}" for i in range(GPT2_LAYERS)
                           for kv in ("key", "value")]
    assert names == expect, names
    for b, p, s in [(1, 128, 1), (2, 0, 4)]:
        ids = rng.integers(0, GPT2_VOCAB, (b, s), dtype=np.int64)
        mask = np.ones((b, p + s), dtype=np.int64)
        past = [rng.standard_normal((b, GPT2_HEADS, p, GPT2_HEAD_DIM)).astype(np.float32)
                for _ in range(2 * GPT2_LAYERS)]
        logits, present = gpt2_run(sess, ids, mask, past)
        assert logits.shape == (b, s, GPT2_VOCAB), logits.shape
        assert np.isfinite(logits).all()
        for t, pt in zip(present, past):
            assert t.shape == (b, GPT2_HEADS, p + s, GPT2_HEAD_DIM), t.shape
            np.testing.assert_array_equal(t[:, :, :p], pt)
        if p == 0:
            # The KV cache is consistent: prompt[:-1] then one step with its
            # present gives the full prompt's last logits.
            _, pre = gpt2_run(sess, ids[:, :-1], mask[:, :-1], past)
            last, _ = gpt2_run(sess, ids[:, -1:], mask, pre)
            np.testing.assert_allclose(last[:, 0], logits[:, -1], rtol=1e-3, atol=1e-4)
        print(f"  gpt2_dyn batch {b} past {p} seq {s}: ok")


def check_resnet(path, rng):
    sess = session(path)
    name = sess.get_inputs()[0].name
    ref_dir = os.path.join(ROOT, "..", "shared", "models", "resnet18", "test_data_set_0")
    for shape in [(1, 3, 224, 224), (4, 3, 224, 224), (1, 3, 320, 256)]:
        x = rng.standard_normal(shape).astype(np.float32)
        (y,) = sess.run(None, {name: x})
        assert y.shape == (shape[0], 1000), y.shape
        assert np.isfinite(y).all()
        print(f"  resnet18_dyn {shape}: ok")
    if os.path.exists(os.path.join(ref_dir, "output_0.pb")):
        def load(p):
            t = onnx.TensorProto()
            with open(p, "rb") as f:
                t.ParseFromString(f.read())
            return numpy_helper.to_array(t)
        x = load(os.path.join(ref_dir, "input_0.pb"))
        ref = load(os.path.join(ref_dir, "output_0.pb"))
        (y,) = sess.run(None, {name: np.concatenate([x] * 4)})
        for i in range(4):
            np.testing.assert_allclose(y[i:i + 1], ref, rtol=1e-3, atol=1e-3)
        print("  resnet18_dyn batch 4 of test_data_set_0 matches its output_0: ok")


def check_mobilenet(path, rng):
    sess = session(path)
    for b in (1, 2):
        x = rng.standard_normal((b, 3, 224, 224)).astype(np.float32)
        (y,) = sess.run(["output"], {"input": x})
        assert y.shape == (b, 1000) and y.dtype == np.float32, (y.shape, y.dtype)
        assert np.isfinite(y).all() and y.std() > 0
        (y0,) = sess.run(None, {"input": x[-1:]})
        np.testing.assert_allclose(y0[0], y[-1], rtol=1e-4, atol=1e-5)
        print(f"  mobilenet_v2 batch {b}: ok")


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "bench_models")
    rng = np.random.default_rng(0)
    print(f"onnxruntime {ort.__version__}")
    failed = []
    for name, fn in [("bert_dyn", check_bert), ("gpt2_dyn", check_gpt2),
                     ("resnet18_dyn", check_resnet), ("mobilenet_v2", check_mobilenet)]:
        path = os.path.join(outdir, name, "model.onnx")
        if not os.path.exists(path):
            print(f"{name}: skipped, {path} not found")
            continue
        print(f"{name}: {path} ({os.path.getsize(path) / 2**20:.1f} MiB)")
        try:
            fn(path, rng)
        except Exception as e:  # report every model, then fail
            print(f"  {name}: FAILED: {type(e).__name__}: {e}")
            failed.append(name)
    if failed:
        sys.exit(f"failed: {' '.join(failed)}")
    print("all checks passed")


if __name__ == "__main__":
    main()
