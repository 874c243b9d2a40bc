#!/usr/bin/env python3
"""Builds an ONNX model that uses sequences, optionals and a Loop whose
trip count is an input, with test data sets whose expected outputs come from
ONNX's reference evaluator (onnx.reference).

usage: make_sequence_model.py OUT_DIR

Writes OUT_DIR/model.onnx and OUT_DIR/test_data_set_{0,1}/ (inputs and
expected outputs as TensorProto/SequenceProto .pb files); data set 1 has an
insert position out of range, so it has no outputs and the run must fail.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

F, I64 = TensorProto.FLOAT, TensorProto.INT64


def const(name, value):
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.asarray(value)))


def loop_body():
    # Appends x's first row sliced to [0, i + 1) to the carried sequence.
    nodes = [
        helper.make_node("Identity", ["cond_in"], ["cond_out"]),
        const("one", np.array(1, np.int64)),
        const("zero1", np.array([0], np.int64)),
        const("axis0", np.array([0], np.int64)),
        helper.make_node("Add", ["i", "one"], ["end0"]),
        helper.make_node("Unsqueeze", ["end0", "axis0"], ["end"]),
        helper.make_node("Slice", ["row", "zero1", "end"], ["piece"]),
        helper.make_node("SequenceInsert", ["seq_in", "piece"], ["seq_out"]),
    ]
    seq_f = helper.make_sequence_type_proto(helper.make_tensor_type_proto(F, None))
    return helper.make_graph(
        nodes, "body",
        [helper.make_tensor_value_info("i", I64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_value_info("seq_in", seq_f)],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_value_info("seq_out", seq_f)])


def while_body():
    # Doubles x (plus one) while its sum stays below 100: a loop whose
    # condition the body computes, carrying a tensor.
    nodes = [
        const("two", np.array(2, np.float32)),
        const("one", np.array(1, np.float32)),
        const("limit", np.array(100, np.float32)),
        helper.make_node("Mul", ["x_in", "two"], ["twice"]),
        helper.make_node("Add", ["twice", "one"], ["x_out"]),
        helper.make_node("ReduceSum", ["x_out"], ["total"], keepdims=0),
        helper.make_node("Less", ["total", "limit"], ["cond_out"]),
    ]
    return helper.make_graph(
        nodes, "while_body",
        [helper.make_tensor_value_info("j", I64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("x_in", F, [2, 3])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("x_out", F, [2, 3])])


def model():
    nodes = [
        helper.make_node("Neg", ["x"], ["nx"]),
        const("one_f", np.array(1, np.float32)),
        helper.make_node("Add", ["x", "one_f"], ["x1"]),
        helper.make_node("SequenceConstruct", ["x", "nx"], ["s"]),
        helper.make_node("SequenceInsert", ["s", "x1", "pos"], ["s2"]),
        const("first", np.array(0, np.int64)),
        helper.make_node("SequenceErase", ["s2", "first"], ["s3"]),
        helper.make_node("SequenceLength", ["s3"], ["len"]),
        const("last", np.array(-1, np.int64)),
        helper.make_node("SequenceAt", ["s3", "last"], ["at"]),
        helper.make_node("ConcatFromSequence", ["s3"], ["cat"], axis=0),
        helper.make_node("ConcatFromSequence", ["s3"], ["stacked"], axis=1, new_axis=1),
        const("splits", np.array([1, 2], np.int64)),
        helper.make_node("SplitToSequence", ["x", "splits"], ["parts"], axis=1),
        const("row_idx", np.array(0, np.int64)),
        helper.make_node("Gather", ["x", "row_idx"], ["row"], axis=0),
        helper.make_node("SequenceEmpty", [], ["empty"], dtype=F),
        const("go", np.array(True)),
        helper.make_node("Loop", ["n", "go", "empty"], ["prefixes"], body=loop_body()),
        helper.make_node("ConcatFromSequence", ["prefixes"], ["joined"], axis=0),
        helper.make_node("Abs", ["x"], ["ax"]),
        const("yes", np.array(True)),
        helper.make_node("Loop", ["", "yes", "ax"], ["grown"], body=while_body()),
        helper.make_node("Optional", ["parts"], ["maybe"]),
        helper.make_node("OptionalHasElement", ["maybe"], ["has"]),
    ]
    seq = lambda shape: helper.make_sequence_type_proto(helper.make_tensor_type_proto(F, shape))
    graph = helper.make_graph(
        nodes, "sequences",
        [helper.make_tensor_value_info("x", F, [2, 3]),
         helper.make_tensor_value_info("pos", I64, []),
         helper.make_tensor_value_info("n", I64, [])],
        [helper.make_tensor_value_info("len", I64, []),
         helper.make_tensor_value_info("at", F, [2, 3]),
         helper.make_tensor_value_info("cat", F, [4, 3]),
         helper.make_tensor_value_info("stacked", F, [2, 2, 3]),
         helper.make_value_info("parts", seq(None)),
         helper.make_value_info("prefixes", seq(None)),
         helper.make_tensor_value_info("joined", F, [None]),
         helper.make_tensor_value_info("grown", F, [2, 3]),
         helper.make_tensor_value_info("has", TensorProto.BOOL, [])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def save(value, name, path):
    if isinstance(value, list):
        proto = numpy_helper.from_list(value, name)
    else:
        proto = numpy_helper.from_array(np.asarray(value), name)
    with open(path, "wb") as f:
        f.write(proto.SerializeToString())


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    m = model()
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(out, "model.onnx"))
    x = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5
    sets = [{"x": x, "pos": np.array(1, np.int64), "n": np.array(3, np.int64)},
            {"x": x, "pos": np.array(7, np.int64), "n": np.array(2, np.int64)}]
    names = [o.name for o in m.graph.output]
    for k, inputs in enumerate(sets):
        d = os.path.join(out, "test_data_set_%d" % k)
        os.makedirs(d, exist_ok=True)
        for i, (name, v) in enumerate(inputs.items()):
            save(v, name, os.path.join(d, "input_%d.pb" % i))
        if k == 0:
            for i, v in enumerate(ReferenceEvaluator(m).run(None, inputs)):
                save(v, names[i], os.path.join(d, "output_%d.pb" % i))


if __name__ == "__main__":
    main()
