#!/usr/bin/env python3
"""Convolutions computed with output positions as the rows of the register
tile (planes a few positions past whole vectors: 7x7 = 49, 5x5 = 25, as
patches x weights^T written back transposed; on AVX-512, every conv with
channels in panels of 32, as direct tiles of 8 positions, or 7 or 6
where those fill the plane (7x7, 14x14, 6x6), across output rows (1x1
stride 1 only past whole vectors or with 64 channels or more),
reading the input in place), against ONNX Runtime: 3x3, 1x1 and
7x7 kernels, stride 1 and 2, dilation 2, grouped, with a bias or none, batch 1 and
2 (also with the batch symbolic in the model: run-time images), with a
fused Relu or Sigmoid or no activation, and residual Adds after them
(the input's or another conv's). Compiled for the build
machine's CPU and for x86-64-v3 (AVX2's 8-lane remainder on any machine
that runs it). Also a 3x3 stride-2 max pool over input with NaNs (on the
same vector loops as the direct convs' neighbours, the depthwise ones)
against NumPy: a window holding a NaN gives NaN; the same for a 5x5
stride-1 pool (a YOLO's SPPF: source chunks shifted in registers) and
unpadded stride-2 pools (every other lane of the source read in place); average
pools (their sums on the same loops) against ONNX Runtime. And ConvTranspose (one
Conv over the input per output phase, interleaved): 2-D and 1-D, with
pads, output_padding, groups, a bias or none. And 1-D convs (run as 2-D
convs of height 1): pointwise, depthwise, strided, dilated.

  check_conv_planes.py --kiln K --kiln-run R --work DIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import ortcheck

# name: batch, in channels, out channels, kernel, stride, input size (or
# (height, width)), bias, activation[, dilation[, batch symbolic in the
# model]]
CASES = {
    "k3_c64_m64_14x14_runtime_batch": (3, 64, 64, 3, 1, 14, True, "Relu", 1, True),
    "k3_s2_c32_m64_15x15_runtime_batch": (2, 32, 64, 3, 2, 15, False, None, 1, True),
    "k3_d2_c16_m64_13x13_n2": (2, 16, 64, 3, 1, 13, True, "Relu", 2),
    "k7_s2_c3_m32_30x30": (1, 3, 32, 7, 2, 30, True, "Relu"),
    "k1_s2_c64_m96_15x15_nobias": (1, 64, 96, 1, 2, 15, False, None),
    # 1x1 stride 2: the input compacted first (every other row and column),
    # then the stride-1 direct tiles.
    "k1_s2_c128_m64_14x14_runtime_batch": (3, 128, 64, 1, 2, 14, True, "Relu", 1, True),
    "k1_s2_c64_m128_13x13_n2": (2, 64, 128, 1, 2, 13, True, None),
    # 1x1 stride 1 with 64 input channels or more on planes of whole
    # vectors (12x12, 20x20) whose channel planes spread over the L1's sets:
    # the direct tiles; on 16x16 (planes a multiple of 1 KiB apart) and with
    # 32 input channels, the matmul.
    "k1_c64_m32_12x12_relu": (1, 64, 32, 1, 1, 12, True, "Relu"),
    "k1_c256_m64_20x20_nobias_n2": (2, 256, 64, 1, 1, 20, False, None),
    "k1_c128_m96_12x12_runtime_batch": (2, 128, 96, 1, 1, 12, True, "Sigmoid", 1, True),
    "k1_c64_m64_16x16_relu": (1, 64, 64, 1, 1, 16, True, "Relu"),
    "k1_c32_m64_20x20": (1, 32, 64, 1, 1, 20, True, None),
    # A plane with one column past whole vectors in 1089 (33x33): the
    # matmul, its last column split off.
    "k1_c16_m96_33x33_relu": (1, 16, 96, 1, 1, 33, True, "Relu"),
    "k3_c64_m512_relu": (1, 64, 512, 3, 1, 7, True, "Relu"),
    "k3_c64_m512_nobias_n2": (2, 64, 512, 3, 1, 7, False, None),
    "k1_c320_m1280_sigmoid": (1, 320, 1280, 1, 1, 7, True, "Sigmoid"),
    # 1x1 stride 1 on planes past whole vectors: the direct tiles on AVX-512.
    "k1_c96_m160_14x14_relu": (1, 96, 160, 1, 1, 14, True, "Relu"),
    "k1_c64_m96_7x7_runtime_batch": (3, 64, 96, 1, 1, 7, True, None, 1, True),
    "k1_c32_m64_3x3_n2_nobias": (2, 32, 64, 1, 1, 3, False, "Relu"),
    "k3_s2_c128_m256": (1, 128, 256, 3, 2, 14, True, None),
    "k3_c256_m256_5x5_relu": (1, 256, 256, 3, 1, 5, True, "Relu"),
    "k3_c32_m64_6x6_n2": (2, 32, 64, 3, 1, 6, True, "Relu"),
    # Channel planes (about) a multiple of 2 KiB apart (one L1 set for 16
    # of a tile's 32 channel lines): tiles in pairs, each channel's 16
    # positions stored as one line; 1023 positions = 63 pairs, an odd tile
    # and 7 more.
    "k3_c3_m32_32x32_lines": (1, 3, 32, 3, 1, 32, True, "Relu"),
    "k3_c8_m64_31x33_lines_n2": (2, 8, 64, 3, 1, (31, 33), False, None),
    # Channels in panels of 16 (16, 48): tiles of 16 positions; 169 = 10
    # tiles and 9 more, 100 = 6 and 4 more.
    "k3_c16_m16_40x40_relu": (1, 16, 16, 3, 1, 40, True, "Relu"),
    "k3_c24_m48_13x13_n2": (2, 24, 48, 3, 1, 13, False, None),
    "k3_s2_c16_m16_31x31_runtime_batch": (2, 16, 16, 3, 2, 31, True, "Sigmoid", 1, True),
    "k5_c8_m16_10x10": (1, 8, 16, 5, 1, 10, True, None),
    # Channels past whole panels (3x3 to 255: a last panel of 31 of 32, the
    # 32nd not stored, its bias read with zeros past the end; 1x1 and 100
    # channels: the matmul, im2col).
    "k1_c64_m255_13x13_sigmoid": (1, 64, 255, 1, 1, 13, True, "Sigmoid"),
    "k1_c96_m1000_13x13_relu_runtime_batch": (2, 96, 1000, 1, 1, 13, True, "Relu", 1, True),
    "k3_c16_m100_9x11_nobias": (1, 16, 100, 3, 1, (9, 11), False, None),
    "k3_s2_c24_m255_15x15_n2": (2, 24, 255, 3, 2, 15, True, None),
    "k3_c40_m230_12x12_relu_runtime_batch": (3, 40, 230, 3, 1, 12, True, "Relu", 1, True),
    # Grouped (ResNeXt's 32 groups of 4 channels, RegNet's groups of 8):
    # threads take groups, each im2col-ing its own.
    "k3_c128_m128_g32_28x28_relu_n2": (2, 128, 128, 3, 1, 28, True, "Relu", 1, False, 32),
    "k3_s2_c64_m64_g8_29x29": (1, 64, 64, 3, 2, 29, False, None, 1, False, 8),
}


def save_conv(path, x_shape, w, b, act, **attrs):
    """A model of one Conv (weights w, bias b or None, attributes attrs) on
    X of x_shape, then activation act (an op name; Clip is ReLU6)."""
    inits = [numpy_helper.from_array(w, "W")]
    inputs = ["X", "W"]
    if b is not None:
        inits.append(numpy_helper.from_array(b, "B"))
        inputs.append("B")
    nodes = [helper.make_node("Conv", inputs, ["C" if act else "Y"],
                              kernel_shape=list(w.shape[2:]), **attrs)]
    if act == "Clip":
        inits += [numpy_helper.from_array(np.array(0, np.float32), "lo"),
                  numpy_helper.from_array(np.array(6, np.float32), "hi")]
        nodes.append(helper.make_node("Clip", ["C", "lo", "hi"], ["Y"]))
    elif act:
        nodes.append(helper.make_node(act, ["C"], ["Y"]))
    graph = helper.make_graph(
        nodes, "conv", [helper.make_tensor_value_info("X", TensorProto.FLOAT, x_shape)],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)


def make(path, n, c, m, k, s, size, bias, act, dilation=1, symbolic=False, group=1):
    ih, iw = size if isinstance(size, tuple) else (size, size)
    rng = np.random.default_rng(m * 100 + c)
    w = (rng.standard_normal((m, c // group, k, k)) / np.sqrt(c // group * k * k)).astype(
        np.float32)
    b = rng.standard_normal(m, dtype=np.float32) if bias else None
    save_conv(path, ["N" if symbolic else n, c, ih, iw], w, b, act, strides=[s, s],
              pads=[dilation * (k // 2)] * 4, dilations=[dilation, dilation], group=group)
    return rng.standard_normal((n, c, ih, iw), dtype=np.float32)


# Depthwise convs stepping 2 columns (f32, AVX-512: source rows read as
# they lie, even and odd columns de-interleaved in registers, blocks of
# output rows): name: batch, channels, kernel, stride, input size, pad,
# bias, activation. One chunk of 16 outputs a row (blocks of 8 rows), 2,
# 3, and 5 (two column blocks); 5x5; unpadded; two images; a stride of 1
# along the rows (the columns still step by 2).
DEPTHWISE_CASES = {
    "dw_k3_s2_c24_28x28_clip": (1, 24, 3, (2, 2), 28, 1, True, "Clip"),
    "dw_k3_s2_c16_56x56": (1, 16, 3, (2, 2), 56, 1, True, None),
    "dw_k3_s2_c8_75x75_relu": (1, 8, 3, (2, 2), 75, 1, True, "Relu"),
    "dw_k3_s2_c4_150x150_nobias": (1, 4, 3, (2, 2), 150, 1, False, None),
    "dw_k5_s2_c20_27x27": (1, 20, 5, (2, 2), 27, 2, True, None),
    "dw_k3_s2_c12_33x33_unpadded_n2": (2, 12, 3, (2, 2), 33, 0, True, None),
    "dw_k3_s1x2_c8_20x40": (1, 8, 3, (1, 2), (20, 40), 1, True, None),
}


def make_depthwise(path, n, c, k, s, size, pad, bias, act):
    ih, iw = size if isinstance(size, tuple) else (size, size)
    rng = np.random.default_rng(c * 10 + k)
    w = (rng.standard_normal((c, 1, k, k)) / k).astype(np.float32)
    b = rng.standard_normal(c, dtype=np.float32) if bias else None
    save_conv(path, [n, c, ih, iw], w, b, act, strides=list(s), pads=[pad] * 4, group=c)
    return rng.standard_normal((n, c, ih, iw), dtype=np.float32)


# name: batch, in channels, out channels, kernel, stride, input size, pads,
# output_padding, group, bias, activation[, batch symbolic in the model];
# 1-D where the kernel is a tuple of one.
CONV_TRANSPOSE_CASES = {
    "ct_k2_s2_c64_m64_20x20_relu": (1, 64, 64, 2, 2, 20, 0, 0, 1, True, "Relu"),
    "ct_k2_s2_c64_m1_40x40_sigmoid": (1, 64, 1, 2, 2, 40, 0, 0, 1, True, "Sigmoid"),
    "ct_k3_s2_p1_op1_c16_m24_g2_9x9_n2": (2, 16, 24, 3, 2, 9, 1, 1, 2, False, None),
    "ct_k4_s2_p1_c32_m16_12x12": (1, 32, 16, 4, 2, 12, 1, 0, 1, True, None),
    "ct_1d_k16_s8_p4_c32_m16_25": (1, 32, 16, (16,), 8, 25, 4, 0, 1, True, None),
    "ct_k4_s2_p1_c16_m8_10x10_runtime_batch": (3, 16, 8, 4, 2, 10, 1, 0, 1, True, "Relu", True),
}


def make_conv_transpose(path, n, c, m, k, s, size, pad, out_pad, group, bias, act,
                        symbolic=False):
    rng = np.random.default_rng(m * 100 + c + s)
    sp = 1 if isinstance(k, tuple) else 2
    k = k[0] if isinstance(k, tuple) else k
    w = (rng.standard_normal((c, m // group) + (k,) * sp) / np.sqrt(c * k)).astype(np.float32)
    inits = [numpy_helper.from_array(w, "W")]
    inputs = ["X", "W"]
    if bias:
        inits.append(numpy_helper.from_array(rng.standard_normal(m, dtype=np.float32), "B"))
        inputs.append("B")
    nodes = [helper.make_node("ConvTranspose", inputs, ["C" if act else "Y"],
                              kernel_shape=[k] * sp, strides=[s] * sp, pads=[pad] * 2 * sp,
                              output_padding=[out_pad] * sp, group=group)]
    if act:
        nodes.append(helper.make_node(act, ["C"], ["Y"]))
    shape = [n, c] + [size] * sp
    graph = helper.make_graph(
        nodes, "conv_transpose",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT,
                                       ["N" if symbolic else n] + shape[1:])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)
    return rng.standard_normal(shape, dtype=np.float32)


# name: batch, in channels, out channels, kernel, stride, length, pads,
# dilation, group, bias, activation.
CONV1D_CASES = {
    "c1d_k1_c144_m288_49": (1, 144, 288, 1, 1, 49, 0, 1, 1, True, None),
    "c1d_k15_dw288_49_pad7": (1, 288, 288, 15, 1, 49, 7, 1, 288, True, "Sigmoid"),
    "c1d_k7_c80_m128_50_relu_n2": (2, 80, 128, 7, 1, 50, 3, 1, 1, True, "Relu"),
    "c1d_k3_s2_c32_m64_100": (1, 32, 64, 3, 2, 100, 1, 1, 1, False, None),
    "c1d_k3_d3_c16_m16_800": (1, 16, 16, 3, 1, 800, 3, 3, 1, True, "LeakyRelu"),
}


def make_conv1d(path, n, c, m, k, s, length, pad, dilation, group, bias, act):
    rng = np.random.default_rng(m * 10 + c + k)
    w = (rng.standard_normal((m, c // group, k)) / np.sqrt(c // group * k)).astype(np.float32)
    inits = [numpy_helper.from_array(w, "W")]
    inputs = ["X", "W"]
    if bias:
        inits.append(numpy_helper.from_array(rng.standard_normal(m, dtype=np.float32), "B"))
        inputs.append("B")
    nodes = [helper.make_node("Conv", inputs, ["C" if act else "Y"], kernel_shape=[k],
                              strides=[s], pads=[pad, pad], dilations=[dilation], group=group)]
    if act:
        nodes.append(helper.make_node(act, ["C"], ["Y"]))
    graph = helper.make_graph(
        nodes, "conv1d", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [n, c, length])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)
    return rng.standard_normal((n, c, length), dtype=np.float32)


# Average pools (their sums on the max pools' vector loops, then the
# divisor): name: kernel, stride, pads, count_include_pad, ceil_mode,
# channels, height, width.
AVERAGE_POOL_CASES = {
    "avgpool_k2_s2_densenet": (2, 2, 0, 0, 0, 96, 32, 32),
    "avgpool_k3_s1_p1_exclude_pad": (3, 1, 1, 0, 0, 40, 17, 17),
    "avgpool_k3_s2_p1_include_pad": (3, 2, 1, 1, 0, 24, 29, 31),
    "avgpool_k5_s1_p2_narrow": (5, 1, 2, 0, 0, 32, 10, 10),
    "avgpool_k3_s2_ceil": (3, 2, 0, 0, 1, 16, 28, 28),
}


def make_average_pool(path, k, s, p, include_pad, ceil, c, h, w):
    graph = helper.make_graph(
        [helper.make_node("AveragePool", ["X"], ["Y"], kernel_shape=[k, k], strides=[s, s],
                          pads=[p] * 4, count_include_pad=include_pad, ceil_mode=ceil)],
        "pool", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, c, h, w])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    m.ir_version = 8
    onnx.save(m, path)
    return np.random.default_rng(c * h).standard_normal((1, c, h, w), dtype=np.float32)


def max_pool_nan(args, k=3, s=2, size=20, p=None):
    """MaxPool kxk, stride s, pads p (k // 2 when None) on
    1x32xsizexsize with a NaN in some windows, against NumPy's
    NaN-propagating max."""
    name = "maxpool_nan" if (k, s, p) == (3, 2, None) else f"maxpool_nan_k{k}_s{s}_{size}"
    p = k // 2 if p is None else p
    d = os.path.join(args.work, name)
    os.makedirs(d, exist_ok=True)
    model = os.path.join(d, "model.onnx")
    graph = helper.make_graph(
        [helper.make_node("MaxPool", ["X"], ["Y"], kernel_shape=[k, k], strides=[s, s],
                          pads=[p, p, p, p])], "pool",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 32, size, size])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, model)
    rng = np.random.default_rng(7)
    x = rng.standard_normal((1, 32, size, size), dtype=np.float32)
    x[0, 3, 5, 7] = x[0, 17, 0, 0] = x[0, 31, size - 1, size - 1] = np.nan
    pad = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)), constant_values=-np.inf)
    o = (size + 2 * p - k) // s + 1
    y = np.stack([pad[:, :, i:i + s * (o - 1) + 1:s, j:j + s * (o - 1) + 1:s]
                  for i in range(k) for j in range(k)]).max(0)
    assert np.isnan(y).any()
    data = os.path.join(d, "test_data_set_0")
    ortcheck.write_data(data, (("input_0", x), ("output_0", y)))
    return ortcheck.check_each_cpu(args.kiln, args.kiln_run, model, data, name)


# Residual Adds after direct tiles (the Add's other operand the conv's own
# input, or another conv's output), then an activation.
# name: batch, in channels, out channels, kernel, stride, input size, the
# residual ("input": the conv's own input, Relu(X); "conv": a 1x1 conv
# of X at the same stride, as a ResNet's downsample), activation after the
# Add.
RESIDUAL_CASES = {
    "res_k3_c64_m64_20x20_input_relu": (1, 64, 64, 3, 1, 20, "input", "Relu"),
    "res_k1_c128_m64_12x12_conv_relu": (1, 128, 64, 1, 1, 12, "conv", "Relu"),
    "res_k3_c32_m32_32x32_pairs_input": (1, 32, 32, 3, 1, 32, "input", None),
    "res_k3_s2_c16_m32_15x15_conv_n2": (2, 16, 32, 3, 2, 15, "conv", "Relu"),
    "res_k3_c32_m32_7x7_input_relu": (1, 32, 32, 3, 1, 7, "input", "Relu"),
    "res_k3_c32_m64_5x5_conv_sigmoid": (1, 32, 64, 3, 1, 5, "conv", "Sigmoid"),
}


def make_residual(path, n, c, m, k, s, size, source, act):
    rng = np.random.default_rng(m * 10 + c + k)
    w = (rng.standard_normal((m, c, k, k)) / np.sqrt(c * k * k)).astype(np.float32)
    inits = [numpy_helper.from_array(w, "W"),
             numpy_helper.from_array(rng.standard_normal(m, dtype=np.float32), "B")]
    nodes = [helper.make_node("Relu", ["X"], ["R"]),
             helper.make_node("Conv", ["R", "W", "B"], ["C"], kernel_shape=[k, k],
                              strides=[s, s], pads=[k // 2] * 4)]
    other = "R"
    if source == "conv":
        inits.append(numpy_helper.from_array(
            (rng.standard_normal((m, c, 1, 1)) / np.sqrt(c)).astype(np.float32), "D"))
        nodes.insert(1, helper.make_node("Conv", ["X", "D"], ["S"], kernel_shape=[1, 1],
                                         strides=[s, s]))
        other = "S"
    nodes.append(helper.make_node("Add", ["C", other], ["A" if act else "Y"]))
    if act:
        nodes.append(helper.make_node(act, ["A"], ["Y"]))
    graph = helper.make_graph(
        nodes, "residual", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [n, c, size, size])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)
    return rng.standard_normal((n, c, size, size), dtype=np.float32)


def main():
    args = ortcheck.parse_args()
    results = [ortcheck.case(args, name, "X", lambda path, shape=shape: make(path, *shape))
               for name, shape in CASES.items()]
    results += [ortcheck.case(args, name, "X",
                              lambda path, shape=shape: make_conv_transpose(path, *shape))
                for name, shape in CONV_TRANSPOSE_CASES.items()]
    results += [ortcheck.case(args, name, "X", lambda path, shape=shape: make_conv1d(path, *shape))
                for name, shape in CONV1D_CASES.items()]
    results += [ortcheck.case(args, name, "X",
                              lambda path, shape=shape: make_average_pool(path, *shape),
                              tol=1e-5)
                for name, shape in AVERAGE_POOL_CASES.items()]
    results += [ortcheck.case(args, name, "X", lambda path, shape=shape: make_residual(path, *shape))
                for name, shape in RESIDUAL_CASES.items()]
    results += [ortcheck.case(args, name, "X",
                              lambda path, shape=shape: make_depthwise(path, *shape))
                for name, shape in DEPTHWISE_CASES.items()]
    results.append(max_pool_nan(args))
    # Stride 1 on a narrow map: the source rows' chunks shifted in registers.
    results.append(max_pool_nan(args, k=5, s=1, size=10))
    # Stride 2 unpadded: every other lane of the source rows read in place
    # (no phases), rows past whole vectors, an odd last column dropped.
    results.append(max_pool_nan(args, k=2, s=2, size=41, p=0))
    results.append(max_pool_nan(args, k=3, s=2, size=37, p=0))
    # Rows past 4 chunks (two column blocks, each through all the rows),
    # padded (rows above and below the source) and not.
    results.append(max_pool_nan(args, k=3, s=2, size=150))
    results.append(max_pool_nan(args, k=2, s=2, size=150, p=0))
    return ortcheck.summary(results)


if __name__ == "__main__":
    sys.exit(main())
