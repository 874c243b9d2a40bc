#!/usr/bin/env python3
"""The bench set's 8-bit models, made by ONNX Runtime's own quantization
tool from the float models:

  bert_tiny_dynamic  quantize_dynamic (s8 weights; DynamicQuantizeLinear,
                     MatMulInteger and the float rescale)
  bert_tiny_qdq      quantize_static, QDQ format, u8 activations, s8
                     weights per channel
  resnet18_qdq       the same
  bert_tiny_qop      quantize_static, QOperator format (QLinearConv,
  resnet18_qop       QLinearMatMul, com.microsoft's QLinearAdd, QGemm, ...)
  bert_dyn_dynamic   quantize_dynamic of the exported BERT (sequence 128) and
  gpt2_dyn_dynamic   GPT-2 decode step, when OUT_DIR has them
                     (bench/export_dynamic_models.py)
  mobilenet_v2_qdq   quantize_static of the exported mobilenet_v2 (QDQ and
  mobilenet_v2_qop   QOperator, as resnet18's), when OUT_DIR has it
  resnet18_fp16      fp16 copies (weights, inputs, outputs and constants
  bert_tiny_fp16     in float16: test/models/derive_models.py's to_fp16)

  python3 bench/quantize_models.py OUT_DIR MODELS_DIR
  python3 bench/quantize_models.py --zoo ZOO_DIR
      QDQ copies of zoo models (bench/export_zoo.py) as ZOO_DIR/NAME_qdq,
      the same way: effnet_b0_lite and yolo_lite (SiLU as a QDQ Sigmoid
      and Mul after each conv), mobilenet_v3_small (Hardswish, SE) and
      resnet50_lite

MODELS_DIR holds bert_tiny and resnet18 (model.onnx, test_data_set_0).
Static quantization calibrates on four deterministic random inputs (token
ids below 100 with a full attention mask; normal images). Each model's
test_data_set_0 has the float model's inputs (as float16 for the fp16
copies) and ONNX Runtime's outputs of the derived model.
"""
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper
from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                      quantize_dynamic, quantize_static)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "test", "models"))
from derive_models import to_fp16  # noqa: E402


def graph_inputs(model):
    inits = {i.name for i in model.graph.initializer}
    return [i for i in model.graph.input if i.name not in inits]


class RandomReader(CalibrationDataReader):
    """Four deterministic random feeds shaped like the model's inputs."""

    def __init__(self, path):
        rng = np.random.default_rng(0)
        feeds = []
        for _ in range(4):
            feed = {}
            for i in graph_inputs(onnx.load(path, load_external_data=False)):
                shape = [d.dim_value for d in i.type.tensor_type.shape.dim]
                if i.type.tensor_type.elem_type == onnx.TensorProto.INT64:
                    feed[i.name] = (np.ones(shape, np.int64) if "mask" in i.name else
                                    rng.integers(0, 100, size=shape).astype(np.int64))
                else:
                    feed[i.name] = rng.standard_normal(shape).astype(np.float32)
            feeds.append(feed)
        self.it = iter(feeds)

    def get_next(self):
        return next(self.it, None)


def write_data_set(src_dir, model_path, out_dir):
    """The float model's inputs and ONNX Runtime's outputs of `model_path`."""
    data = os.path.join(out_dir, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    inputs = graph_inputs(onnx.load(model_path, load_external_data=False))
    names = [i.name for i in inputs]
    want = {i.name: i.type.tensor_type.elem_type for i in inputs}
    feeds = {}
    for n, name in enumerate(names):
        src = os.path.join(src_dir, "test_data_set_0", f"input_{n}.pb")
        t = onnx.TensorProto()
        with open(src, "rb") as f:
            t.ParseFromString(f.read())
        feeds[name] = numpy_helper.to_array(t)
        if want.get(name) == onnx.TensorProto.FLOAT16:
            feeds[name] = feeds[name].astype(np.float16)
        with open(os.path.join(data, f"input_{n}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(feeds[name], t.name).SerializeToString())
    sess = ort.InferenceSession(model_path, providers=["CPUExecutionProvider"])
    for n, y in enumerate(sess.run(None, feeds)):
        with open(os.path.join(data, f"output_{n}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(y).SerializeToString())


def quantize(src, dst, qoperator):
    """quantize_static: u8 activations, s8 weights per channel, the QDQ or
    the QOperator format, calibrated on RandomReader's inputs."""
    quantize_static(src, dst, RandomReader(src),
                    quant_format=QuantFormat.QOperator if qoperator else QuantFormat.QDQ,
                    per_channel=True, activation_type=QuantType.QUInt8,
                    weight_type=QuantType.QInt8)


ZOO_QDQ = ("effnet_b0_lite", "yolo_lite", "mobilenet_v3_small", "resnet50_lite")


def quantize_zoo(zoo):
    for name in ZOO_QDQ:
        src_dir = os.path.join(zoo, name)
        if not os.path.exists(os.path.join(src_dir, "test_data_set_0")):
            continue
        src, dst_dir = os.path.join(src_dir, "model.onnx"), os.path.join(zoo, name + "_qdq")
        dst = os.path.join(dst_dir, "model.onnx")
        os.makedirs(dst_dir, exist_ok=True)
        quantize(src, dst, qoperator=False)
        write_data_set(src_dir, dst, dst_dir)
        print(f"quantize_models: {dst}")


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--zoo":
        return quantize_zoo(sys.argv[2])
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    out, models = sys.argv[1], sys.argv[2]
    jobs = [(name, os.path.join(models, source), kind)
            for name, source, kind in [("bert_tiny_dynamic", "bert_tiny", "dynamic"),
                                       ("bert_tiny_qdq", "bert_tiny", "qdq"),
                                       ("resnet18_qdq", "resnet18", "qdq"),
                                       ("bert_tiny_qop", "bert_tiny", "qop"),
                                       ("resnet18_qop", "resnet18", "qop"),
                                       ("resnet18_fp16", "resnet18", "fp16"),
                                       ("bert_tiny_fp16", "bert_tiny", "fp16")]]
    for source in ("bert_dyn", "gpt2_dyn"):
        if os.path.exists(os.path.join(out, source, "test_data_set_0")):
            jobs.append((source + "_dynamic", os.path.join(out, source), "dynamic"))
    if os.path.exists(os.path.join(out, "mobilenet_v2", "test_data_set_0")):
        for kind in ("qdq", "qop"):
            jobs.append(("mobilenet_v2_" + kind, os.path.join(out, "mobilenet_v2"), kind))
    for name, src_dir, kind in jobs:
        src = os.path.join(src_dir, "model.onnx")
        dst_dir = os.path.join(out, name)
        dst = os.path.join(dst_dir, "model.onnx")
        os.makedirs(dst_dir, exist_ok=True)
        if kind == "fp16":
            onnx.save(to_fp16(onnx.load(src)), dst)
        elif kind == "dynamic":
            quantize_dynamic(src, dst, weight_type=QuantType.QInt8)
        else:
            quantize(src, dst, qoperator=kind == "qop")
        write_data_set(src_dir, dst, dst_dir)
        print(f"quantize_models: {dst}")


if __name__ == "__main__":
    main()
