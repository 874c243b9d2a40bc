#!/usr/bin/env python3
"""Derives deployment variants of an exported model that kiln must also
compile: an fp16 copy (weights, inputs, outputs and constants in float16,
as onnxconverter-common's float16 conversion leaves them) and ONNX
Runtime's static QDQ quantization (uint8 activations, int8 weights, int32
biases; seeded calibration data). Both are written as .onnx files for
make_reference.py.

  python3 test/models/derive_models.py test/models/exported/mobilenet_dw/model.onnx DIR
      -> DIR/mobilenet_dw_fp16.onnx, DIR/mobilenet_dw_qdq.onnx
"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper
from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                      quantize_static)


def half(a):
    """f32 values as float16, clamped to its range as onnxconverter-common
    does (a mask constant of float32's lowest would become -inf)."""
    return np.clip(a, -65504, 65504).astype(np.float16)


def to_fp16(model):
    g = model.graph
    for init in g.initializer:
        if init.data_type == TensorProto.FLOAT:
            init.CopyFrom(numpy_helper.from_array(half(numpy_helper.to_array(init)), init.name))
    for v in list(g.input) + list(g.output) + list(g.value_info):
        if v.type.tensor_type.elem_type == TensorProto.FLOAT:
            v.type.tensor_type.elem_type = TensorProto.FLOAT16
    for node in g.node:
        for a in node.attribute:
            if node.op_type == "Constant" and a.name == "value" and a.t.data_type == TensorProto.FLOAT:
                a.t.CopyFrom(numpy_helper.from_array(half(numpy_helper.to_array(a.t)), a.t.name))
            if node.op_type == "Cast" and a.name == "to" and a.i == TensorProto.FLOAT:
                a.i = TensorProto.FLOAT16
    return model


class Calibration(CalibrationDataReader):
    def __init__(self, model):
        inp = model.graph.input[0]
        shape = [d.dim_value for d in inp.type.tensor_type.shape.dim]
        self.feeds = iter([{inp.name: np.random.default_rng(seed).standard_normal(shape)
                            .astype(np.float32)} for seed in range(8)])

    def get_next(self):
        return next(self.feeds, None)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("out_dir")
    args = ap.parse_args()
    name = os.path.basename(os.path.dirname(os.path.abspath(args.model)))
    os.makedirs(args.out_dir, exist_ok=True)
    fp16 = os.path.join(args.out_dir, f"{name}_fp16.onnx")
    onnx.save(to_fp16(onnx.load(args.model)), fp16)
    qdq = os.path.join(args.out_dir, f"{name}_qdq.onnx")
    quantize_static(args.model, qdq, Calibration(onnx.load(args.model)),
                    quant_format=QuantFormat.QDQ, activation_type=QuantType.QUInt8,
                    weight_type=QuantType.QInt8)
    print(f"wrote {fp16} and {qdq}")


if __name__ == "__main__":
    main()
