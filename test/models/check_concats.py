#!/usr/bin/env python3
"""Concats whose parts kiln places inside the result (kiln-elide-slice-
copies: the parts' producers write the result in place) and concats it
must leave copying, against ONNX Runtime, for this CPU and for x86-64-v3:
SqueezeNet fire modules (two in a row: the result's buffer reused), a
part also read after the concat, channels of two images (slices not
contiguous), a part that is the model's input and parts of 3 channels
(slices off cache lines), a concat that is the model's output, a channel
shuffle (concat, reshape, transpose) and a concat of a concat.

  check_concats.py --kiln K --kiln-run R --work DIR
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import ortcheck


class Graph:
    """Nodes and initializers of one test model."""

    def __init__(self, seed):
        self.nodes, self.inits, self.rng, self.n = [], [], np.random.default_rng(seed), 0

    def name(self, stem):
        self.n += 1
        return f"{stem}{self.n}"

    def conv(self, x, cin, cout, k, relu=True):
        w = self.name("W")
        self.inits.append(numpy_helper.from_array(
            (self.rng.standard_normal((cout, cin, k, k)) / np.sqrt(cin * k * k)).astype(np.float32), w))
        b = self.name("B")
        self.inits.append(numpy_helper.from_array(self.rng.standard_normal(cout).astype(np.float32), b))
        y = self.name("c")
        self.nodes.append(helper.make_node("Conv", [x, w, b], [y], kernel_shape=[k, k], pads=[k // 2] * 4))
        if not relu:
            return y
        r = self.name("r")
        self.nodes.append(helper.make_node("Relu", [y], [r]))
        return r

    def op(self, op_type, inputs, **attrs):
        y = self.name(op_type.lower())
        self.nodes.append(helper.make_node(op_type, inputs, [y], **attrs))
        return y

    def save(self, path, x_shape, y):
        graph = helper.make_graph(
            self.nodes, "concats", [helper.make_tensor_value_info("X", TensorProto.FLOAT, x_shape)],
            [helper.make_tensor_value_info(y, TensorProto.FLOAT, None)], self.inits)
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                                    ir_version=8), path)
        return self.rng.standard_normal(x_shape).astype(np.float32)


def fire(g, x, cin, squeeze, expand):
    s = g.conv(x, cin, squeeze, 1)
    return g.op("Concat", [g.conv(s, squeeze, expand, 1), g.conv(s, squeeze, expand, 3)], axis=1)


def fires(path):
    g = Graph(1)
    y = fire(g, fire(g, "X", 32, 16, 32), 64, 16, 32)
    return g.save(path, [1, 32, 13, 13], g.conv(y, 64, 16, 1))


def part_read_after(path):
    g = Graph(2)
    a = g.conv("X", 16, 16, 1)
    c = g.op("Concat", [a, g.conv("X", 16, 16, 3)], axis=1)
    y = g.conv(c, 32, 16, 1)
    return g.save(path, [1, 16, 12, 12], g.op("Add", [y, g.op("Sigmoid", [a])]))


def two_images(path):
    g = Graph(3)
    c = g.op("Concat", [g.conv("X", 16, 16, 1), g.conv("X", 16, 32, 3)], axis=1)
    return g.save(path, [2, 16, 10, 10], g.conv(c, 48, 16, 1))


def input_and_odd_parts(path):
    g = Graph(4)
    c = g.op("Concat", ["X", g.conv("X", 3, 3, 3), g.conv("X", 3, 5, 1)], axis=1)
    return g.save(path, [1, 3, 9, 9], g.conv(c, 11, 8, 3))


def model_output(path):
    g = Graph(5)
    c = g.op("Concat", [g.conv("X", 8, 16, 1), g.conv("X", 8, 16, 3, relu=False)], axis=1)
    return g.save(path, [1, 8, 8, 8], c)


def channel_shuffle(path):
    g = Graph(6)
    c = g.op("Concat", [g.conv("X", 16, 16, 1), g.conv("X", 16, 16, 1)], axis=1)
    shape = g.name("shape")
    g.inits.append(numpy_helper.from_array(np.array([1, 2, 16, 14, 14], np.int64), shape))
    t = g.op("Transpose", [g.op("Reshape", [c, shape])], perm=[0, 2, 1, 3, 4])
    flat = g.name("flat")
    g.inits.append(numpy_helper.from_array(np.array([1, 32, 14, 14], np.int64), flat))
    return g.save(path, [1, 16, 14, 14], g.conv(g.op("Reshape", [t, flat]), 32, 16, 3))


def nested(path):
    g = Graph(7)
    inner = g.op("Concat", [g.conv("X", 16, 16, 1), g.conv("X", 16, 16, 3)], axis=1)
    outer = g.op("Concat", [inner, g.conv("X", 16, 32, 1)], axis=1)
    return g.save(path, [1, 16, 16, 16], g.conv(outer, 64, 16, 1))


CASES = {
    "fires": fires,
    "part_read_after": part_read_after,
    "two_images": two_images,
    "input_and_odd_parts": input_and_odd_parts,
    "model_output": model_output,
    "channel_shuffle": channel_shuffle,
    "nested": nested,
}


def main():
    args = ortcheck.parse_args()
    results = [ortcheck.case(args, name, "X", make) for name, make in CASES.items()]
    return ortcheck.summary(results)


if __name__ == "__main__":
    sys.exit(main())
