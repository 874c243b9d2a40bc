#!/usr/bin/env python3
"""8-bit matmuls against ONNX Runtime: MatMulInteger with u8 and s8
activations and weights, zero points per tensor and per column, a batch of
rows, one row, K not a multiple of 4, N not a multiple of 16, rows of
run-time count and both operands at run time (exact: atol 0); QLinearMatMul (within one quantization
step); an MLP quantized by onnxruntime.quantization.quantize_dynamic
(DynamicQuantizeLinear, MatMulInteger and the float rescale), MLPs and a
small CNN by quantize_static in the QDQ and in the QOperator format
(QLinearConv, QLinearMatMul and com.microsoft's QLinearAdd, QLinearMul,
QLinearSigmoid, QLinearLeakyRelu, QLinearConcat, QLinearAveragePool,
QLinearGlobalAveragePool, QGemm, QLinearSoftmax) and a depthwise conv,
also over a run-time batch or row count; 8-bit max pools.
Compiled for
the build machine's CPU (VNNI kernels where it has AVX-512 VNNI, AMX tiles
where it has AMX-INT8) and for x86-64-v3 (the i32 loops).

  check_int8.py --kiln K --kiln-run R --work DIR
"""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import ortcheck

U8, S8 = TensorProto.UINT8, TensorProto.INT8
NP = {U8: np.uint8, S8: np.int8}


def rand(rng, shape, kind):
    lo, hi = (0, 256) if kind == U8 else (-128, 128)
    return rng.integers(lo, hi, size=shape).astype(NP[kind])


def save(path, nodes, inputs, inits, out_type, opset=17):
    graph = helper.make_graph(nodes, "int8", inputs,
                              [helper.make_tensor_value_info("Y", out_type, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.save(model, path)


def matmul_integer(path, x_shape, k_n, a_kind, b_kind, za=None, zb=None, dims=None):
    """Y = MatMulInteger(X, W, za, zb); `zb` a scalar or one per column;
    `dims` the declared input shape (symbolic names for run-time sizes)."""
    rng = np.random.default_rng(sum(k_n) + len(x_shape))
    inits = [numpy_helper.from_array(rand(rng, k_n, b_kind), "W")]
    inputs = ["X", "W"]
    if za is not None or zb is not None:
        inits.append(numpy_helper.from_array(np.array(za or 0, NP[a_kind]), "za"))
        inputs.append("za")
    if zb is not None:
        inits.append(numpy_helper.from_array(np.array(zb, NP[b_kind]), "zb"))
        inputs.append("zb")
    save(path, [helper.make_node("MatMulInteger", inputs, ["Y"])],
         [helper.make_tensor_value_info("X", a_kind, dims or list(x_shape))], inits,
         TensorProto.INT32)
    return rand(rng, x_shape, a_kind)


def matmul_integer_runtime_b(path, x_shape, za, zb):
    """Y = MatMulInteger(X, Transpose(X), za, zb) of u8 X [batch, m, k]:
    both operands at run time, B per batch with N = m (attention's Q x K^T)."""
    rng = np.random.default_rng(x_shape[-1])
    inits = [numpy_helper.from_array(np.array(za, np.uint8), "za"),
             numpy_helper.from_array(np.array(zb, np.uint8), "zb")]
    save(path, [helper.make_node("Transpose", ["X"], ["XT"], perm=[0, 2, 1]),
                helper.make_node("MatMulInteger", ["X", "XT", "za", "zb"], ["Y"])],
         [helper.make_tensor_value_info("X", U8, list(x_shape))], inits, TensorProto.INT32)
    return rand(rng, x_shape, U8)


def conv_integer(path, x_shape, w_shape, a_kind, za=None, pads=(1, 1, 1, 1), strides=(1, 1),
                 group=1, dilations=(1, 1)):
    """Y = ConvInteger(X, W, za) with s8 weights, no weight zero point."""
    rng = np.random.default_rng(sum(w_shape))
    inits = [numpy_helper.from_array(rand(rng, w_shape, S8), "W")]
    inputs = ["X", "W"]
    if za is not None:
        inits.append(numpy_helper.from_array(np.array(za, NP[a_kind]), "za"))
        inputs.append("za")
    save(path, [helper.make_node("ConvInteger", inputs, ["Y"], pads=list(pads),
                                 strides=list(strides), kernel_shape=list(w_shape[2:]),
                                 group=group, dilations=list(dilations))],
         [helper.make_tensor_value_info("X", a_kind, list(x_shape))], inits, TensorProto.INT32)
    return rand(rng, x_shape, a_kind)


def max_pool(path, x_shape, kind, pads, strides):
    """Y = MaxPool(X) 3 x 3 on 8-bit X (the window loops on bytes)."""
    rng = np.random.default_rng(sum(x_shape))
    save(path, [helper.make_node("MaxPool", ["X"], ["Y"], kernel_shape=[3, 3], pads=list(pads),
                                 strides=list(strides))],
         [helper.make_tensor_value_info("X", kind, list(x_shape))], [], kind, opset=13)
    return rand(rng, x_shape, kind)


def qlinear_matmul(path, m, k, n):
    rng = np.random.default_rng(k)
    inits = [
        numpy_helper.from_array(np.array(0.02, np.float32), "xs"),
        numpy_helper.from_array(np.array(120, np.uint8), "xz"),
        numpy_helper.from_array(rand(rng, (k, n), S8), "W"),
        numpy_helper.from_array(np.array(0.01, np.float32), "ws"),
        numpy_helper.from_array(np.array(0, np.int8), "wz"),
        numpy_helper.from_array(np.array(0.5, np.float32), "ys"),
        numpy_helper.from_array(np.array(128, np.uint8), "yz"),
    ]
    save(path, [helper.make_node("QLinearMatMul", ["X", "xs", "xz", "W", "ws", "wz", "ys", "yz"],
                                 ["Y"])],
         [helper.make_tensor_value_info("X", U8, [m, k])], inits, U8)
    return rand(rng, (m, k), U8)


def dynamic_mlp(path, rows, sizes, rows_dim=None):
    """A float MLP (MatMul + bias + Relu) quantized by quantize_dynamic;
    `rows_dim` names a symbolic row count (run-time sizes)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic
    rng = np.random.default_rng(len(sizes))
    nodes, inits, x = [], [], "X"
    for i, (k, n) in enumerate(zip(sizes, sizes[1:])):
        w = (rng.standard_normal((k, n)) / np.sqrt(k)).astype(np.float32)
        inits += [numpy_helper.from_array(w, f"W{i}"),
                  numpy_helper.from_array(rng.standard_normal(n).astype(np.float32) * 0.1, f"B{i}")]
        last = i == len(sizes) - 2
        nodes += [helper.make_node("MatMul", [x, f"W{i}"], [f"M{i}"]),
                  helper.make_node("Add", [f"M{i}", f"B{i}"], ["Y" if last else f"A{i}"])]
        if not last:
            nodes.append(helper.make_node("Relu", [f"A{i}"], [f"R{i}"]))
            x = f"R{i}"
    float_path = path + ".float.onnx"
    save(float_path, nodes, [helper.make_tensor_value_info("X", TensorProto.FLOAT,
                                                           [rows_dim or rows, sizes[0]])],
         inits, TensorProto.FLOAT, opset=13)
    quantize_dynamic(float_path, path, weight_type=QuantType.QInt8)
    os.remove(float_path)
    return rng.standard_normal((rows, sizes[0])).astype(np.float32)


def quantize_static(float_path, path, data, per_channel, qoperator, signed=False):
    """onnxruntime.quantization.quantize_static of the float model at
    `float_path`, calibrated on `data` (feeds of X): u8 activations, s8
    weights, the QDQ format or, with `qoperator`, the QOperator one
    (QLinearConv, QLinearMatMul and com.microsoft's QLinearAdd, QGemm, ...)."""
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType)
    from onnxruntime.quantization import quantize_static as quantize

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.it = iter([{"X": d} for d in data])

        def get_next(self):
            return next(self.it, None)

    quantize(float_path, path, Reader(),
             quant_format=QuantFormat.QOperator if qoperator else QuantFormat.QDQ,
             per_channel=per_channel,
             activation_type=QuantType.QInt8 if signed else QuantType.QUInt8,
             weight_type=QuantType.QInt8)
    os.remove(float_path)


def static_mlp(path, rows, sizes, per_channel, qoperator=False, rows_dim=None):
    """A float MLP quantized by quantize_static (per tensor or per output
    column), the last layer a Gemm with transB as torch's Linear exports it;
    `rows_dim` names a run-time row count."""
    rng = np.random.default_rng(rows)
    nodes, inits, x = [], [], "X"
    for i, (k, n) in enumerate(zip(sizes, sizes[1:])):
        w = (rng.standard_normal((k, n)) / np.sqrt(k)).astype(np.float32)
        b = rng.standard_normal(n).astype(np.float32) * 0.1
        last = i == len(sizes) - 2
        y = "Y" if last else f"A{i}"
        if last:
            inits += [numpy_helper.from_array(np.ascontiguousarray(w.T), f"W{i}"),
                      numpy_helper.from_array(b, f"B{i}")]
            nodes.append(helper.make_node("Gemm", [x, f"W{i}", f"B{i}"], [y], transB=1))
        else:
            inits += [numpy_helper.from_array(w, f"W{i}"), numpy_helper.from_array(b, f"B{i}")]
            nodes += [helper.make_node("MatMul", [x, f"W{i}"], [f"M{i}"]),
                      helper.make_node("Add", [f"M{i}", f"B{i}"], [y]),
                      helper.make_node("Relu", [y], [f"R{i}"])]
            x = f"R{i}"
    float_path = path + ".float.onnx"
    save(float_path, nodes, [helper.make_tensor_value_info("X", TensorProto.FLOAT,
                                                           [rows_dim or rows, sizes[0]])],
         inits, TensorProto.FLOAT, opset=13)
    data = [rng.standard_normal((rows, sizes[0])).astype(np.float32) for _ in range(3)]
    quantize_static(float_path, path, data, per_channel, qoperator)
    return data[0]


def quantized_cnn(path, nodes, inits, shape, rng, per_channel, qoperator, batch_dim=None,
                  signed=False):
    """The float graph of `nodes` (input X of `shape`, output Y) quantized
    by quantize_static, calibrated on three normal inputs; the first one.
    `batch_dim`: the input's batch declared by that name (a run-time
    size)."""
    f = TensorProto.FLOAT
    float_path = path + ".float.onnx"
    dims = [batch_dim or shape[0]] + list(shape[1:])
    save(float_path, nodes, [helper.make_tensor_value_info("X", f, dims)], inits, f, opset=13)
    data = [rng.standard_normal(shape).astype(np.float32) for _ in range(3)]
    quantize_static(float_path, path, data, per_channel, qoperator, signed)
    return data[0]


def static_silu(path, signed=False):
    """Conv + SiLU (x * Sigmoid(x)), Conv + Tanh, Conv, quantized by
    quantize_static (QDQ): each activation a function of its conv's 8-bit
    output alone, looked up in a table of its 256 values (u8, or s8 data
    with `signed`)."""
    rng = np.random.default_rng(13)

    def w(name, shape):
        return numpy_helper.from_array(
            (rng.standard_normal(shape) / np.sqrt(np.prod(shape[1:]))).astype(np.float32), name)
    inits = [w("W0", (24, 8, 3, 3)), w("W1", (16, 24, 1, 1)), w("W2", (8, 16, 3, 3)),
             numpy_helper.from_array(rng.standard_normal(24).astype(np.float32) * 0.3, "B0")]
    nodes = [helper.make_node("Conv", ["X", "W0", "B0"], ["C0"], pads=[1, 1, 1, 1]),
             helper.make_node("Sigmoid", ["C0"], ["S0"]),
             helper.make_node("Mul", ["C0", "S0"], ["A0"]),
             helper.make_node("Conv", ["A0", "W1"], ["C1"]),
             helper.make_node("Tanh", ["C1"], ["A1"]),
             helper.make_node("Conv", ["A1", "W2"], ["Y"], pads=[1, 1, 1, 1])]
    return quantized_cnn(path, nodes, inits, (1, 8, 20, 20), rng, True, False, signed=signed)


def static_cnn(path, per_channel, qoperator, batch_dim=None):
    """A small float CNN quantized by quantize_static: Conv + Relu, Conv,
    the residual Add, x * Sigmoid(x), LeakyRelu, Concat, MaxPool, AveragePool,
    GlobalAveragePool, Gemm and Softmax; in the QOperator format each has
    its QLinear form."""
    rng = np.random.default_rng(5)

    def weights(name, shape):
        fan_in = int(np.prod(shape[1:]))
        return numpy_helper.from_array(
            (rng.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32), name)

    inits = [weights("W0", (16, 8, 3, 3)), weights("W1", (16, 16, 3, 3)),
             weights("W2", (10, 32)),
             numpy_helper.from_array(rng.standard_normal(16).astype(np.float32) * 0.1, "B0"),
             numpy_helper.from_array(rng.standard_normal(10).astype(np.float32) * 0.1, "B2")]
    nodes = [
        helper.make_node("Conv", ["X", "W0", "B0"], ["C0"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["C0"], ["A"]),
        helper.make_node("Conv", ["A", "W1"], ["B"], pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["A", "B"], ["C"]),
        helper.make_node("Sigmoid", ["C"], ["S"]),
        helper.make_node("Mul", ["C", "S"], ["D"]),
        helper.make_node("LeakyRelu", ["D"], ["E"], alpha=0.1),
        helper.make_node("Concat", ["E", "A"], ["F"], axis=1),
        helper.make_node("MaxPool", ["F"], ["F2"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("AveragePool", ["F2"], ["G"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("GlobalAveragePool", ["G"], ["H"]),
        helper.make_node("Flatten", ["H"], ["I"]),
        helper.make_node("Gemm", ["I", "W2", "B2"], ["L"], transB=1),
        helper.make_node("Softmax", ["L"], ["Y"], axis=1),
    ]
    return quantized_cnn(path, nodes, inits, (2, 8, 12, 12), rng, per_channel, qoperator,
                         batch_dim)


def static_depthwise(path, qoperator, shape=(1, 16, 10, 10), stride=1, relu6=False):
    """A float depthwise conv (group 16) + Relu (or Clip to [0, 6]) + 1 x 1
    conv, quantized by quantize_static per channel (QLinearConv with group
    16: the 8-bit depthwise loops, summing in f32, exact)."""
    rng = np.random.default_rng(9)
    inits = [numpy_helper.from_array((rng.standard_normal((16, 1, 3, 3)) / 3).astype(np.float32),
                                     "W0"),
             numpy_helper.from_array((rng.standard_normal((8, 16, 1, 1)) / 4).astype(np.float32),
                                     "W1"),
             numpy_helper.from_array(rng.standard_normal(16).astype(np.float32) * 0.1, "B0")]
    act = (helper.make_node("Clip", ["C0", "lo", "hi"], ["A"]) if relu6
           else helper.make_node("Relu", ["C0"], ["A"]))
    if relu6:
        inits += [numpy_helper.from_array(np.array(0, np.float32), "lo"),
                  numpy_helper.from_array(np.array(6, np.float32), "hi")]
    nodes = [helper.make_node("Conv", ["X", "W0", "B0"], ["C0"], pads=[1, 1, 1, 1], group=16,
                              strides=[stride, stride]),
             act,
             helper.make_node("Conv", ["A", "W1"], ["Y"])]
    return quantized_cnn(path, nodes, inits, shape, rng, True, qoperator)


# name: (make, tolerance): exact for integer results; one step of y_scale
# (0.5) for QLinearMatMul, whose rounding of ties may differ; the quantized
# MLPs' outputs are about 1 and match ONNX Runtime's to float rounding (an
# activation one quantization step off would move them by about 1e-2).
# The QDQ CNN's softmax output is allowed one step of its scale (1/255):
# ONNX Runtime runs it through its own QLinear kernels, whose rounding of
# a tie may differ from the QDQ definition kiln computes.
CASES = {
    "mmi_u8s8_batch_n80": (lambda p: matmul_integer(p, (3, 20, 128), (128, 80), U8, S8, za=3), 0),
    "mmi_s8u8_zero_points": (
        lambda p: matmul_integer(p, (37, 64), (64, 48), S8, U8, za=-5, zb=131), 0),
    "mmi_per_column": (
        lambda p: matmul_integer(p, (8, 256), (256, 272), U8, S8, za=7,
                                 zb=np.arange(272, dtype=np.int64) % 9 - 4), 0),
    "mmi_k30": (lambda p: matmul_integer(p, (5, 30), (30, 20), U8, S8), 0),
    # With AMX: K in 17 chunks of 64 bytes (two blocks of 8, then one), 48
    # rows (a tile of 32, one of 16), 40 columns (a pair of panels, then
    # one, masked). (mmi_u8s8_batch_n80: 60 rows, the last 12 on VNNI.)
    "mmi_amx_k_blocks": (
        lambda p: matmul_integer(p, (48, 1088), (1088, 40), U8, S8, za=3), 0),
    "mmi_one_row": (lambda p: matmul_integer(p, (1, 512), (512, 1024), U8, S8, za=128), 0),
    "mmi_runtime_rows": (
        lambda p: matmul_integer(p, (13, 64), (64, 96), U8, S8, za=1, dims=["n", 64]), 0),
    # Both operands at run time: B packed per batch (N = 20: a partial panel).
    "mmi_runtime_b": (lambda p: matmul_integer_runtime_b(p, (3, 20, 64), za=5, zb=7), 0),
    "qlinear_matmul": (lambda p: qlinear_matmul(p, 33, 96, 40), 1),
    # 16 x 16 planes (whole panels, one row each), 7 x 7 (3 panels of 3
    # rows, the last position as a dot product per channel; with 128 channels packed first, then threads take
    # blocks of channels), 5 x 5 (4 rows a panel: gathers), stride 2 (rows of 7
    # and 17: 32-byte loads), no pads, K = 27 (not a multiple of 4), s8 data.
    "conv_u8_3x3": (lambda p: conv_integer(p, (2, 32, 16, 16), (24, 32, 3, 3), U8, za=9), 0),
    "conv_u8_7x7_plane": (lambda p: conv_integer(p, (1, 64, 7, 7), (40, 64, 3, 3), U8, za=200), 0),
    "conv_u8_stride2": (
        lambda p: conv_integer(p, (1, 16, 15, 15), (8, 16, 3, 3), U8, za=3, strides=(2, 2)), 0),
    "conv_u8_stride2_rows": (
        lambda p: conv_integer(p, (1, 8, 34, 34), (16, 8, 3, 3), U8, za=1, strides=(2, 2)), 0),
    "conv_u8_7x7_row_blocks": (
        lambda p: conv_integer(p, (1, 32, 7, 7), (128, 32, 3, 3), U8, za=17), 0),
    "conv_u8_5x5_plane": (lambda p: conv_integer(p, (1, 16, 5, 5), (24, 16, 3, 3), U8, za=4), 0),
    # With AMX: K = 1152 (18 chunks: two blocks of 8, then 2), 48
    # channels (a tile of 32, one of 16), 100 positions (the last 4 as dot
    # products); K = 72 padded to 2 chunks with zero weights, 16 channels,
    # two images.
    "conv_u8_amx_k_blocks": (
        lambda p: conv_integer(p, (1, 128, 10, 10), (48, 128, 3, 3), U8, za=5), 0),
    "conv_u8_amx_k72": (
        lambda p: conv_integer(p, (2, 8, 20, 20), (16, 8, 3, 3), U8, za=2), 0),
    # With AMX, direct convs (input channels in whole 64-byte chunks, output
    # channels in tiles of 16): tiles read from the relaid input in place.
    # 14 x 14 (padded rows of 16: panels across rows, two dropped lanes
    # each), stride 2 over an odd plane (rows of a phase past the image)
    # with two images, 1 x 1 at stride 2, dilation 2, 5 x 5 over 192
    # channels (75 chunks: blocks of 8, then 3; 5 panels: a unit of 4,
    # then 1).
    "conv_u8_amx_direct_14x14": (
        lambda p: conv_integer(p, (1, 64, 14, 14), (32, 64, 3, 3), U8, za=3), 0),
    "conv_u8_amx_direct_stride2_odd": (
        lambda p: conv_integer(p, (2, 128, 15, 15), (48, 128, 3, 3), U8, za=1,
                               strides=(2, 2)), 0),
    "conv_u8_amx_direct_1x1_stride2": (
        lambda p: conv_integer(p, (1, 64, 14, 14), (16, 64, 1, 1), U8, pads=(0, 0, 0, 0),
                               strides=(2, 2)), 0),
    "conv_u8_amx_direct_dilated": (
        lambda p: conv_integer(p, (1, 64, 11, 11), (16, 64, 3, 3), U8, za=6,
                               pads=(2, 2, 2, 2), dilations=(2, 2)), 0),
    "conv_u8_amx_direct_5x5": (
        lambda p: conv_integer(p, (1, 192, 7, 7), (64, 192, 5, 5), U8, za=2,
                               pads=(2, 2, 2, 2)), 0),
    # Few input channels (one quad): the input relaid as 16 shifted planes.
    # A 7 x 7 stem of stride 2 (4 phases x 4 column shifts, 4 chunks of
    # phase rows) over odd planes with two images; a 6 x 6 one; stride
    # (1, 2) on 2 channels (2 phases x 4 shifts x 2 row shifts, 3 chunks);
    # 4 channels 4 x 4 without pads (4 shifts x 4 row shifts, one chunk).
    "conv_u8_amx_direct_shifted_7x7": (
        lambda p: conv_integer(p, (2, 3, 37, 45), (32, 3, 7, 7), U8, za=5, pads=(3, 3, 3, 3),
                               strides=(2, 2)), 0),
    "conv_u8_amx_direct_shifted_6x6": (
        lambda p: conv_integer(p, (1, 3, 30, 34), (16, 3, 6, 6), U8, za=7, pads=(2, 2, 2, 2),
                               strides=(2, 2)), 0),
    "conv_u8_amx_direct_shifted_stride_1x2": (
        lambda p: conv_integer(p, (1, 2, 20, 31), (16, 2, 5, 7), U8, za=250,
                               pads=(2, 3, 2, 3), strides=(1, 2)), 0),
    "conv_u8_amx_direct_shifted_4x4": (
        lambda p: conv_integer(p, (1, 4, 16, 16), (16, 4, 4, 4), U8, pads=(0, 0, 0, 0)), 0),
    # 14 x 14: the last 4 positions as dot products (13 channels: one a group).
    "conv_u8_14x14_tail": (
        lambda p: conv_integer(p, (2, 16, 14, 14), (13, 16, 3, 3), U8, za=11), 0),
    "conv_u8_1x1_k27": (
        lambda p: conv_integer(p, (1, 27, 9, 9), (20, 27, 1, 1), U8, pads=(0, 0, 0, 0)), 0),
    "conv_s8": (lambda p: conv_integer(p, (1, 8, 10, 10), (16, 8, 3, 3), S8, za=-3), 0),
    # Depthwise (one channel a group): stride 2 over odd planes (17
    # output columns: a masked chunk), s8 data with a 5 x 5 window over
    # rows of 40 (3 chunks), no pads.
    "conv_u8_depthwise_stride2": (
        lambda p: conv_integer(p, (1, 24, 15, 33), (24, 1, 3, 3), U8, za=7, strides=(2, 2),
                               group=24), 0),
    "conv_s8_depthwise_5x5": (
        lambda p: conv_integer(p, (2, 16, 9, 40), (16, 1, 5, 5), S8, za=-5, pads=(2, 2, 2, 2),
                               group=16), 0),
    "conv_u8_depthwise_no_pads": (
        lambda p: conv_integer(p, (1, 8, 12, 20), (8, 1, 3, 3), U8, za=3, pads=(0, 0, 0, 0),
                               group=8), 0),
    # u8 depthwise on the VNNI kernel (AVX-512 VBMI): planes of up to 64
    # bytes in one register, 16 positions a vector across rows, the pad
    # (the zero point) picked from a second register; 7 x 7 windows (two
    # tap groups a row) over rows of 50 (a last chunk of 2); dilation 2;
    # stride 3; two images.
    "conv_u8_depthwise_plane_register": (
        lambda p: conv_integer(p, (2, 8, 7, 7), (8, 1, 3, 3), U8, za=5, group=8), 0),
    "conv_u8_depthwise_7x7_window": (
        lambda p: conv_integer(p, (1, 8, 16, 50), (8, 1, 7, 7), U8, za=200, pads=(3, 3, 3, 3),
                               group=8), 0),
    "conv_u8_depthwise_dilated": (
        lambda p: conv_integer(p, (1, 16, 20, 30), (16, 1, 5, 5), U8, za=9, pads=(4, 4, 4, 4),
                               group=16, dilations=(2, 2)), 0),
    "conv_u8_depthwise_stride3": (
        lambda p: conv_integer(p, (2, 8, 20, 61), (8, 1, 3, 3), U8, za=1, strides=(3, 3),
                               group=8), 0),
    # 8-bit max pools: stride 2 with pads (resnet's: planes of two phases;
    # 70 output columns: a full and a masked 64-byte chunk), stride 1 on
    # s8 (max is signed) without pads.
    "maxpool_u8_stride2": (
        lambda p: max_pool(p, (1, 8, 31, 140), U8, (1, 1, 1, 1), (2, 2)), 0),
    "maxpool_s8": (lambda p: max_pool(p, (2, 4, 9, 20), S8, (0, 0, 0, 0), (1, 1)), 0),
    "dynamic_mlp": (lambda p: dynamic_mlp(p, 24, [256, 512, 64]), 1e-4),
    "dynamic_mlp_runtime_rows": (lambda p: dynamic_mlp(p, 19, [128, 256, 32], "n"), 1e-4),
    "qdq_mlp": (lambda p: static_mlp(p, 16, [128, 256, 48], False), 1e-4),
    "qdq_mlp_per_channel": (lambda p: static_mlp(p, 16, [128, 256, 48], True), 1e-4),
    "qop_mlp": (lambda p: static_mlp(p, 16, [128, 256, 48], False, qoperator=True), 1e-4),
    "qop_mlp_per_channel": (lambda p: static_mlp(p, 16, [128, 256, 48], True, qoperator=True),
                            1e-4),
    "qop_mlp_runtime_rows": (
        lambda p: static_mlp(p, 13, [64, 96, 24], True, qoperator=True, rows_dim="n"), 1e-4),
    "qdq_cnn": (lambda p: static_cnn(p, True, qoperator=False), 0.004),
    "qop_cnn": (lambda p: static_cnn(p, True, qoperator=True), 1e-4),
    "qop_cnn_per_tensor": (lambda p: static_cnn(p, False, qoperator=True), 1e-4),
    # A run-time batch: QLinearConv on the exact float conv (the integer
    # kernels want static sizes).
    "qop_cnn_runtime_batch": (lambda p: static_cnn(p, True, qoperator=True, batch_dim="N"),
                              1e-4),
    "qdq_cnn_runtime_batch": (lambda p: static_cnn(p, True, qoperator=False, batch_dim="N"),
                              0.004),
    # QDQ SiLU and Tanh after convs: table lookups (u8 and s8 data).
    # (Within one step of the output scale, as the QDQ CNN.)
    "qdq_silu_tanh": (lambda p: static_silu(p), 0.004),
    "qdq_silu_tanh_s8": (lambda p: static_silu(p, signed=True), 0.004),
    "qop_depthwise": (lambda p: static_depthwise(p, qoperator=True), 1e-4),
    "qdq_depthwise": (lambda p: static_depthwise(p, qoperator=False), 1e-4),
    # mobilenet's: Clip to [0, 6], stride 2 over odd planes.
    "qop_depthwise_relu6_stride2": (
        lambda p: static_depthwise(p, True, (1, 16, 21, 37), 2, relu6=True), 1e-4),
    "qdq_depthwise_relu6_stride2": (
        lambda p: static_depthwise(p, False, (1, 16, 21, 37), 2, relu6=True), 1e-4),
    # One block of rows covers a 7x7 channel: taps shifted in registers from
    # the unpadded source, whose buffer the requantized output reuses.
    "qop_depthwise_7x7": (lambda p: static_depthwise(p, True, (1, 16, 7, 7)), 1e-4),
    "qdq_depthwise_7x7": (lambda p: static_depthwise(p, False, (1, 16, 7, 7)), 1e-4),
}


def amx_direct_convs(args, name):
    """The direct AMX convs `kiln compile --report` counts for the case."""
    r = subprocess.run([args.kiln, "compile", os.path.join(args.work, name, "model.onnx"),
                        "-o", os.path.join(args.work, name, "report"), "--report"],
                       capture_output=True, text=True)
    for line in r.stderr.splitlines():
        if "rewrite int8_amx_direct_convs:" in line:
            return int(line.split(":")[-1])
    return 0


def main():
    args = ortcheck.parse_args()
    results = [ortcheck.case(args, name, "X", make, tol=tol, rtol=0)
               for name, (make, tol) in CASES.items()]
    # (The direct cases must take that path where the CPU has AMX-INT8.)
    if ortcheck.cpu_has("amx_int8"):
        for name in CASES:
            if name.startswith("conv_u8_amx_direct"):
                count = amx_direct_convs(args, name)
                results.append((1, 0 if count == 1 else 1))
                if count != 1:
                    print(f"FAIL {name}: {count} direct AMX convs (expected 1)")
    else:
        print("note: no AMX-INT8 here: the direct AMX convs were not checked")
    return ortcheck.summary(results)


if __name__ == "__main__":
    sys.exit(main())
