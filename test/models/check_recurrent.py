#!/usr/bin/env python3
"""Recurrent ops against ONNX Runtime: LSTM, GRU (with and without
linear_before_reset) and RNN with biases and initial states, forward,
reverse and bidirectional, over sequences of 5 steps (unrolled) and 40
(a loop over time), two layers where the second's initial state is an
Expand of zeros to a Shape of the first's output (as PyTorch exports
stacked layers); each also compiled with symbolic batch and sequence (a
run-time Loop) and run at two shapes.

  check_recurrent.py --kiln K --kiln-run R --work DIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import ortcheck

FEATURES, HIDDEN = 6, 8


def make(path, kind, direction, lbr, dims):
    """Two stacked layers of `kind`; dims: X's [seq, batch] (ints or names)."""
    rng = np.random.default_rng(len(path))
    gates = {"LSTM": 4, "GRU": 3, "RNN": 1}[kind]
    dirs = 2 if direction == "bidirectional" else 1
    inits, nodes = [], []
    x = "X"
    for layer, inp in ((0, FEATURES), (1, dirs * HIDDEN)):
        w, r, b = (f"W{layer}", f"R{layer}", f"B{layer}")
        for name, shape in ((w, (dirs, gates * HIDDEN, inp)),
                            (r, (dirs, gates * HIDDEN, HIDDEN)),
                            (b, (dirs, 2 * gates * HIDDEN))):
            inits.append(numpy_helper.from_array(
                (0.4 * rng.standard_normal(shape)).astype(np.float32), name))
        # Initial states: given for the first layer, for the second an
        # Expand of zeros to [dirs, batch, hidden] read off X's shape.
        if layer == 0:
            h0 = "H0"
            inits.append(numpy_helper.from_array(
                np.full((dirs, 1, HIDDEN), 0.1, np.float32), "H0s"))
            nodes += [helper.make_node("Shape", [x], ["xs"], start=1, end=2),
                      helper.make_node("Concat", ["dconst", "xs", "hconst"], ["hshape"], axis=0),
                      helper.make_node("Expand", ["H0s", "hshape"], [h0])]
            inits += [numpy_helper.from_array(np.array([dirs], np.int64), "dconst"),
                      numpy_helper.from_array(np.array([HIDDEN], np.int64), "hconst")]
        else:
            nodes += [helper.make_node("Shape", [x], ["ys"], start=1, end=2),
                      helper.make_node("Concat", ["dconst", "ys", "hconst"], ["zshape"], axis=0),
                      helper.make_node("ConstantOfShape", ["zshape"], ["Z1"])]
            h0 = "Z1"
        ins = [x, w, r, b, "", h0]
        if kind == "LSTM":
            ins.append(h0)
        attrs = {"hidden_size": HIDDEN, "direction": direction}
        if kind == "GRU":
            attrs["linear_before_reset"] = lbr
        nodes.append(helper.make_node(kind, ins, [f"Y{layer}"], **attrs))
        # [seq, dirs, batch, hidden] -> [seq, batch, dirs * hidden]
        nodes += [helper.make_node("Transpose", [f"Y{layer}"], [f"T{layer}"], perm=[0, 2, 1, 3]),
                  helper.make_node("Reshape", [f"T{layer}", "flat"], [f"F{layer}"])]
        x = f"F{layer}"
    inits.append(numpy_helper.from_array(np.array([0, 0, -1], np.int64), "flat"))
    graph = helper.make_graph(
        nodes, "recurrent",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, dims + [FEATURES])],
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, dims + [dirs * HIDDEN])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)


def write_data(model, data, shape, seed):
    x = np.random.default_rng(seed).standard_normal(shape + [FEATURES]).astype(np.float32)
    ortcheck.reference(model, data, "X", x)


def main():
    args = ortcheck.parse_args()
    failures = cases = 0
    variants = [("LSTM", "forward", 0), ("LSTM", "bidirectional", 0),
                ("GRU", "forward", 1), ("GRU", "reverse", 0), ("RNN", "forward", 0)]
    for kind, direction, lbr in variants:
        for seq in (5, 40, None):
            name = f"{kind.lower()}_{direction}{'_lbr' if lbr else ''}_{seq or 'dyn'}"
            d = os.path.join(args.work, name)
            os.makedirs(d, exist_ok=True)
            model = os.path.join(d, "model.onnx")
            make(model, kind, direction, lbr, [seq, 2] if seq else ["seq", "batch"])
            shapes = [[seq, 2]] if seq else [[40, 2], [7, 3]]
            out = os.path.join(d, "m")
            c = ortcheck.compile_model(args.kiln, model, out)
            for i, shape in enumerate(shapes):
                cases += 1
                data = os.path.join(d, f"test_data_set_{i}")
                write_data(model, data, shape, i)
                r = ortcheck.check(args.kiln_run, c, out, data)
                if r.returncode:
                    failures += 1
                    print(f"FAIL {name} {shape}: {r.stdout}{r.stderr}")
    print(f"{cases - failures} of {cases} cases match ONNX Runtime")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
