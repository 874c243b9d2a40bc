#!/usr/bin/env python3
"""Conv chains on the channel-blocked layout (kiln-cpu-block-channels:
[n, c / 16, h, w, 16] on AVX-512) against ONNX Runtime: 3x3, 1x1, 5x5
and 7x7 convs, a stem reading its 3-channel NCHW image as it lies, depthwise 3x3 convs
(stride 1 and 2, with ReLU6), stride 2 and dilation 2, a bias or none, fused Relu and
Sigmoid, residual Adds, per-channel and per-position operands; max pools
(padded, ceil mode) and average pools (count_include_pad 0 and 1) inside
a chain; channel concats of blocked parts and of a part that enters the
chain there; output channels in odd blocks (16 a tile), rows split into
tiles of 9, 8 and 7 positions; 3x3 convs at stride 1 as Winograd tiles
(even and odd planes, dilated); squeeze-and-excitation (global average
and max pools on blocks, per-image channel scales); batch 2. Compiled for this CPU and for
x86-64-v3 (where the blocked layout is off: the NCHW kernels on the same
models). On a CPU with AVX-512, `kiln compile --report` must also show
the chain blocked (a case whose chain stays NCHW fails).

  check_blocked.py --kiln K --kiln-run R --work DIR
"""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import ortcheck


class Graph:
    """A small ONNX graph built node by node, weights seeded."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits = [], []

    def const(self, name, shape, scale=0.1):
        a = (self.rng.standard_normal(shape) * scale).astype(np.float32)
        self.inits.append(numpy_helper.from_array(a, name))
        return name

    def node(self, op, ins, name, **attrs):
        self.nodes.append(helper.make_node(op, ins, [name], name=name, **attrs))
        return name

    def conv(self, name, x, cin, cout, k, stride=1, dil=1, bias=True, act="Relu",
             scale=0.1):
        pad = dil * (k // 2)
        ins = [x, self.const(name + "_w", (cout, cin, k, k), scale)]
        if bias:
            ins.append(self.const(name + "_b", (cout,)))
        y = self.node("Conv", ins, name, kernel_shape=[k, k], pads=[pad] * 4,
                      strides=[stride] * 2, dilations=[dil] * 2)
        return self.node(act, [y], name + "_act") if act else y

    def save(self, path, shape, out):
        g = helper.make_graph(
            self.nodes, "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, shape)],
            [helper.make_tensor_value_info(out, TensorProto.FLOAT, None)], self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
        m.ir_version = 8
        onnx.save(m, path)
        return np.random.default_rng(7).standard_normal(shape).astype(np.float32)


def residual(path, n, h):
    """Two 3x3 convs and a residual Add, a 1x1 stride-2 conv, a padded max
    pool, a dilated 3x3 conv."""
    g = Graph(1)
    a = g.conv("c1", "X", 16, 32, 3)
    b = g.conv("c2", a, 32, 32, 3, act=None)
    r = g.node("Relu", [g.node("Add", [b, a], "add")], "add_relu")
    c = g.conv("c3", r, 32, 64, 1, stride=2, bias=False)
    p = g.node("MaxPool", [c], "pool", kernel_shape=[3, 3], pads=[1] * 4, strides=[2, 2])
    d = g.conv("c4", p, 64, 32, 3, dil=2, act="Sigmoid")
    return g.save(path, [n, 16, h, h], d)


def pools(path, n, h):
    """Average pools (per-position divisors, and not), a ceil-mode max
    pool, a 5x5 conv, a concat of a conv and a pool, a 2x2 average pool."""
    g = Graph(2)
    a = g.conv("c1", "X", 16, 32, 3)
    p = g.node("MaxPool", [a], "mp", kernel_shape=[3, 3], pads=[1] * 4, strides=[2, 2])
    b = g.conv("c2", p, 32, 48, 3)
    q = g.node("AveragePool", [b], "ap", kernel_shape=[3, 3], pads=[1] * 4,
               count_include_pad=0)
    c = g.conv("c3", q, 48, 32, 1)
    d = g.conv("c4", c, 32, 32, 3, stride=2)
    r = g.node("MaxPool", [d], "mp2", kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)
    e = g.conv("c5", r, 32, 32, 5, act=None)
    cat = g.node("Concat", [e, r], "cat", axis=1)
    f = g.conv("c6", cat, 64, 16, 3)
    s = g.node("AveragePool", [f], "ap2", kernel_shape=[3, 3], pads=[1] * 4,
               count_include_pad=1)
    y = g.node("AveragePool", [s], "ap3", kernel_shape=[2, 2], strides=[2, 2])
    return g.save(path, [n, 16, h, h], y)


def odd_blocks(path, n, h):
    """48 output channels (three blocks: tiles of one block), bias-free
    convs, a 7x7 kernel, a per-channel scale (Mul by [c, 1, 1]), a concat
    whose second part enters the chain there."""
    g = Graph(3)
    a = g.conv("c1", "X", 16, 48, 3, bias=False)
    b = g.conv("c2", a, 48, 48, 7, act=None)
    s = g.node("Mul", [b, g.const("scale", (48, 1, 1), 1.0)], "scale_mul")
    c = g.conv("c3", s, 48, 16, 1, act="Sigmoid")
    cat = g.node("Concat", [c, "X"], "cat", axis=1)
    d = g.conv("c4", cat, 32, 32, 3)
    return g.save(path, [n, 16, h, h], d)


def stem(path, n, h):
    """A 7x7 stride-2 stem on the 3-channel image (read as it lies into a
    blocked output), its max pool, then 3x3 convs and a residual Add."""
    g = Graph(4)
    a = g.conv("stem", "X", 3, 32, 7, stride=2)
    p = g.node("MaxPool", [a], "pool", kernel_shape=[3, 3], pads=[1] * 4, strides=[2, 2])
    b = g.conv("c1", p, 32, 32, 3)
    c = g.conv("c2", b, 32, 32, 3, act=None)
    y = g.node("Relu", [g.node("Add", [c, p], "add")], "add_relu")
    return g.save(path, [n, 3, h, h], y)


def inverted_residual(path, n, h):
    """MobileNet-style blocks on blocks: 1x1 expand, 3x3 depthwise (stride
    1 and 2, a bias or none) with Clip (ReLU6), 1x1 project, residual Add."""
    g = Graph(5)

    def dw(name, x, c, stride, bias=True):
        ins = [x, g.const(name + "_w", (c, 1, 3, 3), 0.3)]
        if bias:
            ins.append(g.const(name + "_b", (c,)))
        y = g.node("Conv", ins, name, kernel_shape=[3, 3], pads=[1] * 4,
                   strides=[stride] * 2, group=c)
        return g.node("Clip", [y, g.const(name + "_lo", (), 0.0), g.const(name + "_hi", (), 0.0)],
                      name + "_clip")

    # (Clip's bounds 0 and 6.)
    a = g.conv("stem", "X", 16, 32, 3)
    e = g.conv("e1", a, 32, 96, 1)
    d = dw("d1", e, 96, 1)
    p = g.conv("p1", d, 96, 32, 1, act=None)
    r = g.node("Add", [p, a], "add")
    e2 = g.conv("e2", r, 32, 64, 1)
    d2 = dw("d2", e2, 64, 2, bias=False)
    y = g.conv("p2", d2, 64, 48, 1, act=None)
    for init in g.inits:
        if init.name.endswith("_hi"):
            init.CopyFrom(numpy_helper.from_array(np.array(6.0, np.float32), init.name))
        if init.name.endswith("_lo"):
            init.CopyFrom(numpy_helper.from_array(np.array(0.0, np.float32), init.name))
    return g.save(path, [n, 16, h, h], y)


def padded_expansion(g):
    """A 3x3 conv to 24 channels, a 1x1 expansion to 72 and a depthwise 3x3
    with Relu (padded last blocks): the conv's output and the depthwise's."""
    a = g.conv("c1", "X", 16, 24, 3)
    e = g.conv("e1", a, 24, 72, 1)
    d = g.node("Relu", [g.node("Conv", [e, g.const("dw_w", (72, 1, 3, 3), 0.3),
                                        g.const("dw_b", (72,))], "dw",
                               kernel_shape=[3, 3], pads=[1] * 4, group=72)], "dw_relu")
    return a, d


def padded_blocks(path, n, h):
    """Channels past whole blocks (24, 72, 40, 63: the last block padded
    with zeros, as an SSDLite's): 1x1 convs in and out of 24 channels, a
    depthwise conv on 72, a residual Add and SiLU on the padded blocks, a
    max pool, a division by a per-channel constant (which leaves the chain:
    its padded channels would divide by 0), a stride-2 conv, a 63-channel
    head."""
    g = Graph(10)
    a, d = padded_expansion(g)
    p = g.conv("p1", d, 72, 24, 1, act=None)
    r = g.node("Add", [p, a], "add")
    silu = g.node("Mul", [r, g.node("Sigmoid", [r], "sig")], "silu")
    m = g.node("MaxPool", [silu], "pool", kernel_shape=[3, 3], pads=[1] * 4)
    q = g.node("Div", [m, g.const("divisor", (24, 1, 1), 1.0)], "div")
    c = g.conv("c2", q, 24, 40, 3, stride=2)
    y = g.conv("head", c, 40, 63, 1, act=None)
    return g.save(path, [n, 16, h, h], y)


def squeeze_excite(path, n, h):
    """EfficientNet-style squeeze-and-excitation on blocks (72 channels: the
    last block padded): a global average pool of the depthwise conv's
    output, two 1x1 convs on [n, c, 1, 1], a Sigmoid, the scale multiplied
    into the depthwise output per image and channel, a project conv; then
    a global max pool of that, scaling it again. Both pools run on the
    blocked values (row partials), the Muls in the chain."""
    g = Graph(11)
    _, d = padded_expansion(g)
    s = g.node("GlobalAveragePool", [d], "gap")
    s = g.conv("fc1", s, 72, 8, 1)
    s = g.conv("fc2", s, 8, 72, 1, act="Sigmoid")
    x = g.node("Mul", [d, s], "se")
    p = g.conv("p1", x, 72, 32, 1, act=None)
    m = g.node("GlobalMaxPool", [p], "gmp")
    y = g.node("Mul", [p, g.node("Sigmoid", [m], "gmp_sig")], "scale")
    return g.save(path, [n, 16, h, h], y)


def winograd(path, n, h):
    """3x3 convs at stride 1 as Winograd tiles: two and three output blocks
    (tiles of 2 and of 1 block), bias-free, a residual Add with Relu and a
    Sigmoid in the store; a plane as wide as 2 tiles."""
    g = Graph(6)
    a = g.conv("c1", "X", 32, 32, 3)
    b = g.conv("c2", a, 32, 48, 3, bias=False)
    c = g.conv("c3", b, 48, 32, 3, act=None)
    r = g.node("Relu", [g.node("Add", [c, a], "add")], "add_relu")
    d = g.conv("c4", r, 32, 64, 3, act="Sigmoid")
    return g.save(path, [n, 32, h, h], d)


def winograd_dilated(path, n, h):
    """Dilated 3x3 convs as Winograd tiles (ASPP-style): dilation 2, 3 and
    5 (tiles 2 d apart, bands of 2 d rows, a last band cut short). On 13
    rows the rate-5 conv stays direct: its kernel rows read mostly
    padding, which the direct tiles skip."""
    g = Graph(7)
    a = g.conv("c1", "X", 32, 32, 3, dil=2)
    b = g.conv("c2", a, 32, 48, 3, dil=3, bias=False)
    c = g.conv("c3", b, 48, 32, 3, dil=5, act=None)
    r = g.node("Relu", [g.node("Add", [c, a], "add")], "add_relu")
    d = g.conv("c4", r, 32, 32, 3, dil=2)
    return g.save(path, [n, 32, h, h], d)


def winograd_phased(path, n, h):
    """160 channels on a small plane: the transformed weights (1.6 MB) past
    L2, each step run over the whole batch (phased); a dilated one. Under
    128 output positions (7 x 7, two images) the direct tiles: streaming U
    would cost more than it saves."""
    g = Graph(8)
    a = g.conv("c1", "X", 160, 160, 3, scale=0.03)
    b = g.conv("c2", a, 160, 160, 3, dil=2, act=None, scale=0.03)
    r = g.node("Relu", [g.node("Add", [b, a], "add")], "add_relu")
    c = g.conv("c3", r, 160, 160, 3, scale=0.03)
    return g.save(path, [n, 160, h, h], c)


def winograd_chunked(path, n, h):
    """256 -> 64 channels on 40 x 40 (a text detector's head): a row's V
    (320 KiB) taken in chunks of 6, 6 and 4 input blocks, M adding each."""
    g = Graph(9)
    a = g.conv("c1", "X", 256, 64, 3, scale=0.03)
    b = g.conv("c2", a, 64, 64, 3)
    c = g.conv("c3", b, 64, 256, 3, act="Sigmoid")
    return g.save(path, [n, 256, h, h], c)


# name: (make, batch, size)
CASES = {
    "inverted_residual_30x30_n2": (inverted_residual, 2, 30),
    "inverted_residual_19x19": (inverted_residual, 1, 19),
    "stem_45x45_n2": (stem, 2, 45),
    "stem_64x64": (stem, 1, 64),
    "residual_23x23_n2": (residual, 2, 23),
    "residual_17x17": (residual, 1, 17),
    "pools_37x37_n2": (pools, 2, 37),
    "pools_64x64": (pools, 1, 64),
    "odd_blocks_12x12_n2": (odd_blocks, 2, 12),
    "odd_blocks_7x7": (odd_blocks, 1, 7),
    "padded_blocks_19x19_n2": (padded_blocks, 2, 19),
    "padded_blocks_10x10": (padded_blocks, 1, 10),
    "squeeze_excite_15x15_n2": (squeeze_excite, 2, 15),
    "squeeze_excite_56x56": (squeeze_excite, 1, 56),
    "winograd_28x28_n2": (winograd, 2, 28),
    "winograd_4x4": (winograd, 1, 4),
    "winograd_7x7_n2": (winograd, 2, 7),
    "winograd_13x13": (winograd, 1, 13),
    "winograd_dilated_20x20_n2": (winograd_dilated, 2, 20),
    "winograd_dilated_13x13": (winograd_dilated, 1, 13),
    "winograd_phased_10x10_n2": (winograd_phased, 2, 10),
    "winograd_phased_7x7_n2": (winograd_phased, 2, 7),
    "winograd_chunked_40x40": (winograd_chunked, 1, 40),
}


def blocked_convs(args, name):
    """The blocked convs `kiln compile --report` counts for the case: direct
    and Winograd."""
    model = os.path.join(args.work, name, "model.onnx")
    r = subprocess.run([args.kiln, "compile", model, "-o",
                        os.path.join(args.work, name, "report"), "--report"],
                       capture_output=True, text=True)
    counts = {"blocked_convs": 0, "winograd_convs": 0, "blocked_global_pools": 0}
    for line in r.stderr.splitlines():
        for key in counts:
            if f"rewrite {key}:" in line:
                counts[key] = int(line.split(":")[-1])
    return counts


def main():
    args = ortcheck.parse_args()
    results = [ortcheck.case(args, name, "X", lambda path, m=m, n=n, h=h: m(path, n, h))
               for name, (m, n, h) in CASES.items()]
    if ortcheck.cpu_has("avx512f"):
        for name in CASES:
            counts = blocked_convs(args, name)
            count = counts["blocked_convs"] + counts["winograd_convs"]
            results.append((1, 0 if count >= 2 else 1))
            if count < 2:
                print(f"FAIL {name}: {count} blocked convs (expected 2 or more)")
            # (Both global pools of a squeeze-and-excitation case on blocks.)
            if name.startswith("squeeze_excite"):
                ok = counts["blocked_global_pools"] == 2
                results.append((1, 0 if ok else 1))
                if not ok:
                    print(f"FAIL {name}: {counts['blocked_global_pools']} blocked "
                          "global pools (expected 2)")
            # (The Winograd cases must take that path where it pays.)
            if name.startswith("winograd"):
                want = {"winograd_dilated_13x13": 3,
                        "winograd_phased_10x10_n2": 3,
                        "winograd_phased_7x7_n2": 0,
                        "winograd_chunked_40x40": 3}.get(name, 4)
                ok = counts["winograd_convs"] == want
                results.append((1, 0 if ok else 1))
                if not ok:
                    print(f"FAIL {name}: {counts['winograd_convs']} Winograd convs "
                          f"(expected {want})")
    else:
        print("note: no AVX-512 here: the blocked layout is not used, the NCHW kernels were checked")
    return ortcheck.summary(results)


if __name__ == "__main__":
    sys.exit(main())
