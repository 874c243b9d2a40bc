#!/usr/bin/env python3
"""Builds small ONNX models for the lit tests.

usage: make_model.py --kind KIND OUT.onnx [--npy-dir DIR]

With --npy-dir, also writes the model's input(s) as DIR/<name>.npy and the
expected outputs computed with numpy as DIR/expected_<name>.npy.
"""
import argparse
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def mlp_weights():
    rng = np.random.default_rng(7)
    w = rng.standard_normal((4, 16)).astype(np.float32)  # 256 bytes: resource
    b = rng.standard_normal((16,)).astype(np.float32)  # 64 bytes: inline
    x = rng.standard_normal((2, 4)).astype(np.float32)
    return w, b, x


def mlp(opset=17, batch=2):
    w, b, _ = mlp_weights()
    nodes = [
        helper.make_node("MatMul", ["x", "W"], ["h"], name="fc_matmul"),
        helper.make_node("Add", ["h", "B"], ["hb"], name="fc_add"),
        helper.make_node("Relu", ["hb"], ["r"], name="fc_relu"),
        helper.make_node("Constant", [], ["two"], name="two_const",
                         value=numpy_helper.from_array(np.array(2.0, np.float32))),
        helper.make_node("Mul", ["r", "two"], ["y"], name="scale"),
    ]
    graph = helper.make_graph(
        nodes, "mlp_graph",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, 16])],
        initializer=[numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "B")])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="kiln-lit")
    m.ir_version = 8
    return m


def mlp_reference(x):
    w, b, _ = mlp_weights()
    return {"y": np.maximum(x @ w + b, 0) * 2.0}


def attrs():
    """One model whose nodes carry every attribute kind."""
    nodes = [
        # int + float
        helper.make_node("Gemm", ["a", "bm"], ["g"], name="gemm_attrs",
                         transB=1, alpha=0.5),
        # string + ints
        helper.make_node("AveragePool", ["img"], ["p"], name="pool_attrs",
                         auto_pad="SAME_UPPER", kernel_shape=[3, 3], strides=[1, 1]),
        # strings + floats + string + int
        helper.make_node("LSTM", ["seq", "lw", "lr"], ["ly"], name="lstm_attrs",
                         hidden_size=2, direction="reverse",
                         activations=["Sigmoid", "Tanh", "Tanh"],
                         activation_alpha=[0.25, 0.5, 0.75]),
        # tensor
        helper.make_node("ConstantOfShape", ["shp"], ["filled"], name="fill_attrs",
                         value=numpy_helper.from_array(np.array([7], np.int32))),
    ]
    graph = helper.make_graph(
        nodes, "attrs_graph",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("bm", TensorProto.FLOAT, [5, 3]),
         helper.make_tensor_value_info("img", TensorProto.FLOAT, [1, 1, 4, 4]),
         helper.make_tensor_value_info("seq", TensorProto.FLOAT, [3, 1, 2]),
         helper.make_tensor_value_info("lw", TensorProto.FLOAT, [1, 8, 2]),
         helper.make_tensor_value_info("lr", TensorProto.FLOAT, [1, 8, 2]),
         helper.make_tensor_value_info("shp", TensorProto.INT64, [2])],
        [helper.make_tensor_value_info("g", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("p", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("ly", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("filled", TensorProto.INT32, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def unsqueeze11():
    nodes = [helper.make_node("Unsqueeze", ["x"], ["y"], name="unsq", axes=[0, 3])]
    graph = helper.make_graph(
        nodes, "unsq_graph",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])
    m.ir_version = 6
    return m


def shape_chain():
    """y = Relu(Reshape(x, [x.shape[0], -1])) with the shape computed as torch
    exports it (Shape -> Gather -> Unsqueeze -> Concat), plus an Identity and
    an inference Dropout."""
    i64 = lambda name, v: helper.make_node(
        "Constant", [], [name], name=name, value=numpy_helper.from_array(np.array(v, np.int64)))
    nodes = [
        helper.make_node("Identity", ["x"], ["xi"], name="ident"),
        helper.make_node("Shape", ["xi"], ["shp"], name="shape"),
        i64("idx0", 0),
        helper.make_node("Gather", ["shp", "idx0"], ["d0"], name="gather", axis=0),
        i64("axes0", [0]),
        helper.make_node("Unsqueeze", ["d0", "axes0"], ["d0u"], name="unsqueeze"),
        i64("minus1", [-1]),
        helper.make_node("Concat", ["d0u", "minus1"], ["newshape"], name="concat", axis=0),
        helper.make_node("Reshape", ["xi", "newshape"], ["flat"], name="reshape"),
        helper.make_node("Dropout", ["flat"], ["dropped"], name="dropout"),
        helper.make_node("Relu", ["dropped"], ["y"], name="relu"),
    ]
    graph = helper.make_graph(
        nodes, "shape_chain_graph",
        [helper.make_tensor_value_info("x", F, [2, 3, 4])],
        [helper.make_tensor_value_info("y", F, None)])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def single(op, name, inputs, outputs, opset=17, **kw):
    node = helper.make_node(op, [i[0] for i in inputs], [o[0] for o in outputs],
                            name=name, **kw)
    graph = helper.make_graph(
        [node], op.lower() + "_graph",
        [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
        [helper.make_tensor_value_info(n, t, s) for n, t, s in outputs])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


F = TensorProto.FLOAT


def microsoft(kind):
    """com.microsoft nodes: QLinearAdd (imported), Gelu (not), and
    QLinearAdd in a model that does not import the domain."""
    U8 = TensorProto.UINT8
    if kind == "ms-unsupported":
        node = helper.make_node("Inverse", ["x"], ["y"], name="inverse_1", domain="com.microsoft")
        io = [("x", F, [2]), ("y", F, [2])]
    else:
        node = helper.make_node("QLinearAdd", ["a", "s", "z", "b", "s", "z", "s", "z"], ["y"],
                                name="qadd_1", domain="com.microsoft")
        io = [("a", U8, [2, 3]), ("b", U8, [3]), ("y", U8, [2, 3])]
    inits = [numpy_helper.from_array(np.array(0.5, np.float32), "s"),
             numpy_helper.from_array(np.array(10, np.uint8), "z")]
    graph = helper.make_graph([node], "ms", [helper.make_tensor_value_info(*v) for v in io[:-1]],
                              [helper.make_tensor_value_info(*io[-1])],
                              inits if kind != "ms-unsupported" else [])
    opsets = [helper.make_opsetid("", 17)]
    if kind != "ms-no-import":
        opsets.append(helper.make_opsetid("com.microsoft", 1))
    m = helper.make_model(graph, opset_imports=opsets)
    m.ir_version = 8
    return m


def build(kind):
    if kind == "mlp":
        return mlp()
    if kind == "attrs":
        return attrs()
    if kind == "unsqueeze11":
        return unsqueeze11()
    if kind == "unknown-op":
        return single("NotARealOp", "mystery_1", [("x", F, [2])], [("y", F, [2])])
    if kind == "shape-chain":
        return shape_chain()
    if kind == "wrong-domain":
        # Binarizer exists, but in ai.onnx.ml, not in the default domain.
        return single("Binarizer", "bin_1", [("x", F, [2])], [("y", F, [2])])
    if kind.startswith("ms-"):
        return microsoft(kind)
    if kind == "det":
        # kiln-decompose-ops expands Det up to 4x4 only.
        return single("Det", "det_1", [("x", F, [6, 6])], [("y", F, [])])
    if kind == "opset99":
        return single("Relu", "relu_1", [("x", F, [2])], [("y", F, [2])], opset=99)
    if kind == "bad-add":
        return single("Add", "add_bad", [("a", F, [2, 3]), ("b", F, [4, 5])],
                      [("c", F, None)])
    if kind == "dup-output":
        # Two graph outputs that are the same tensor after Identity.
        nodes = [helper.make_node("Relu", ["x"], ["y"], name="relu"),
                 helper.make_node("Identity", ["y"], ["z"], name="ident")]
        graph = helper.make_graph(
            nodes, "dup_graph", [helper.make_tensor_value_info("x", F, [4])],
            [helper.make_tensor_value_info("y", F, [4]),
             helper.make_tensor_value_info("z", F, [4])])
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        m.ir_version = 8
        return m
    if kind == "cast-float4":
        return single("Cast", "to_f4", [("x", F, [4])],
                      [("y", TensorProto.FLOAT4E2M1, [4])], opset=23,
                      to=TensorProto.FLOAT4E2M1)
    if kind == "cast-complex":
        return single("Cast", "to_c64", [("x", F, [4])],
                      [("y", TensorProto.COMPLEX64, [4])], to=TensorProto.COMPLEX64)
    if kind == "if-optional":
        # A branch node with a missing optional input (Clip without min):
        # its `none` value lives in @main while the branch is imported.
        then_g = helper.make_graph(
            [helper.make_node("Clip", ["x", "", "hi"], ["t"], name="clip_then")],
            "then", [], [helper.make_tensor_value_info("t", F, [4])])
        else_g = helper.make_graph(
            [helper.make_node("Neg", ["x"], ["e"], name="neg_else")],
            "else", [], [helper.make_tensor_value_info("e", F, [4])])
        hi = helper.make_tensor("hi", F, [], [0.5])
        graph = helper.make_graph(
            [helper.make_node("If", ["c"], ["y"], name="branch",
                              then_branch=then_g, else_branch=else_g)],
            "if_graph", [helper.make_tensor_value_info("c", onnx.TensorProto.BOOL, []),
                         helper.make_tensor_value_info("x", F, [4])],
            [helper.make_tensor_value_info("y", F, [4])], [hi])
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        m.ir_version = 8
        return m
    if kind == "if-then-first":
        # The same If with then_branch written before else_branch, as
        # PyTorch's exporter orders them (onnx.helper sorts by name).
        m = build("if-optional")
        node = m.graph.node[0]
        ordered = sorted(node.attribute, key=lambda a: a.name != "then_branch")
        del node.attribute[:]
        node.attribute.extend(ordered)
        return m
    # Symbolic batch "N" (resolved at run time) and ops that mix samples.
    if kind == "batch-mlp":
        return mlp(batch="N")
    if kind == "batch-add":
        return single("Add", "add_n", [("a", F, ["N", 4]), ("b", F, ["N", 4])],
                      [("c", F, ["N", 4])])
    if kind == "batch-softmax0":
        return single("Softmax", "softmax_over_n", [("x", F, ["N", 4])],
                      [("y", F, ["N", 4])], axis=0)
    if kind == "batch-pairs":
        # Rows of N samples regrouped in pairs: [N, 3] -> [2, 3N/2], which
        # no batch of 1 can be.
        shape = numpy_helper.from_array(np.array([2, -1], np.int64), "pairs")
        graph = helper.make_graph(
            [helper.make_node("Reshape", ["x", "pairs"], ["y"], name="pair_rows")],
            "batch_pairs", [helper.make_tensor_value_info("x", F, ["N", 3])],
            [helper.make_tensor_value_info("y", F, [2, None])], [shape])
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        m.ir_version = 8
        return m
    if kind == "batch-reduce0":
        return single("ReduceMean", "mean_over_n", [("x", F, ["N", 4])],
                      [("y", F, [1, 4])], opset=13, axes=[0])
    if kind == "matmul-tile":
        # One register-tiled matmul: 12 x 64 times 64 x 32 (B too narrow for
        # packed panels).
        w = numpy_helper.from_array(
            np.arange(64 * 32, dtype=np.float32).reshape(64, 32) / 1000, "w")
        graph = helper.make_graph(
            [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], "matmul_tile",
            [helper.make_tensor_value_info("x", F, [12, 64])],
            [helper.make_tensor_value_info("y", F, [12, 32])], [w])
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        m.ir_version = 8
        return m
    if kind == "batch-seq-first":
        # As torch's MultiheadAttention: [N, 3, 4] -> [3, N, 4] -> [3*N, 4],
        # a row-wise MatMul, and back; the reshape interleaves the samples.
        w = numpy_helper.from_array(
            np.arange(16, dtype=np.float32).reshape(4, 4) / 10, "w")
        nodes = [
            helper.make_node("Transpose", ["x"], ["t"], perm=[1, 0, 2]),
            helper.make_node("Constant", [], ["flat"],
                             value=numpy_helper.from_array(np.array([-1, 4], np.int64))),
            helper.make_node("Reshape", ["t", "flat"], ["rows"], name="merge_rows"),
            helper.make_node("MatMul", ["rows", "w"], ["p"]),
            helper.make_node("Shape", ["t"], ["ts"]),
            helper.make_node("Reshape", ["p", "ts"], ["back"]),
            helper.make_node("Transpose", ["back"], ["y"], perm=[1, 0, 2]),
        ]
        graph = helper.make_graph(nodes, "seq_first",
                                  [helper.make_tensor_value_info("x", F, ["N", 3, 4])],
                                  [helper.make_tensor_value_info("y", F, ["N", 3, 4])], [w])
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        m.ir_version = 8
        return m
    if kind == "batch-two-symbols":
        return single("Relu", "relu_nt", [("x", F, ["N", "T"])], [("y", F, ["N", "T"])])
    if kind == "loop-untyped":
        # Range as its ONNX function spells it: a Loop whose loop-carried
        # body input declares no type (it takes the initial value's).
        body = helper.make_graph(
            [helper.make_node("Identity", ["cond"], ["cond_out"]),
             helper.make_node("Add", ["prev", "delta"], ["cur"]),
             helper.make_node("Identity", ["prev"], ["val"])],
            "body",
            [helper.make_tensor_value_info("i", TensorProto.INT64, []),
             helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
             onnx.ValueInfoProto(name="prev")],
            [onnx.ValueInfoProto(name="cond_out"), onnx.ValueInfoProto(name="cur"),
             onnx.ValueInfoProto(name="val")])
        trip = helper.make_tensor("trip", TensorProto.INT64, [], [4])
        graph = helper.make_graph(
            [helper.make_node("Loop", ["trip", "", "start"], ["last", "y"], name="range_loop",
                              body=body)],
            "loop_graph", [helper.make_tensor_value_info("start", F, []),
                           helper.make_tensor_value_info("delta", F, [])],
            [helper.make_tensor_value_info("y", F, [4])], [trip])
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        m.ir_version = 8
        return m
    if kind == "scan-untyped":
        # A running sum over the rows of x [3, 2], read along axis 0, with
        # untyped body inputs (as ONNX functions write them).
        body = helper.make_graph(
            [helper.make_node("Add", ["acc", "row"], ["acc_out"]),
             helper.make_node("Identity", ["acc_out"], ["y_t"])],
            "body",
            [onnx.ValueInfoProto(name="acc"), onnx.ValueInfoProto(name="row")],
            [onnx.ValueInfoProto(name="acc_out"), onnx.ValueInfoProto(name="y_t")])
        graph = helper.make_graph(
            [helper.make_node("Scan", ["init", "x"], ["last", "y"], name="running_sum",
                              body=body, num_scan_inputs=1)],
            "scan_graph", [helper.make_tensor_value_info("init", F, [2]),
                           helper.make_tensor_value_info("x", F, [3, 2])],
            [helper.make_tensor_value_info("last", F, None),
             helper.make_tensor_value_info("y", F, None)])
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        m.ir_version = 8
        return m
    if kind == "nonzero-unique":
        # Result lengths only the data decides: NonZero and Unique outputs.
        nodes = [helper.make_node("NonZero", ["x"], ["nz"], name="nz_1"),
                 helper.make_node("Unique", ["x"], ["u", "", "", "counts"], name="uniq_1")]
        graph = helper.make_graph(
            nodes, "dyn", [helper.make_tensor_value_info("x", F, [2, 3])],
            [helper.make_tensor_value_info("nz", TensorProto.INT64, [2, None]),
             helper.make_tensor_value_info("u", F, [None]),
             helper.make_tensor_value_info("counts", TensorProto.INT64, [None])])
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    if kind == "equal-strings":
        return single("Equal", "eq_str", [("a", TensorProto.STRING, [3]),
                                          ("b", TensorProto.STRING, [1])],
                      [("y", TensorProto.BOOL, [3])])
    if kind == "runtime-axes":
        # Axes computed at run time; the declared 3x2 result allows axis 1
        # or axis 2 of the 3x2x2 input.
        return single("ReduceSum", "sum_rt",
                      [("x", F, [3, 2, 2]), ("axes", TensorProto.INT64, [1])],
                      [("y", F, [3, 2])], opset=18, keepdims=0)
    if kind == "gather-const-index":
        # A constant index past the end of axis 0 (4 rows).
        node = helper.make_node("Gather", ["x", "idx"], ["y"], name="g_const", axis=0)
        graph = helper.make_graph(
            [node], "gather_graph", [helper.make_tensor_value_info("x", F, [4, 3])],
            [helper.make_tensor_value_info("y", F, [2, 3])],
            [helper.make_tensor("idx", TensorProto.INT64, [2], [1, 5])])
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        m.ir_version = 8
        return m
    if kind == "split-num-outputs":
        # num_outputs says 3, the node has 2 outputs (opset 18).
        return single("Split", "split3", [("x", F, [6])], [("a", F, [3]), ("b", F, [3])],
                      opset=18, axis=0, num_outputs=3)
    if kind in ("neg-dim", "dup-name", "cycle", "unsorted", "self-loop", "huge-constant",
                "overflow-constant", "overflow-input", "short-initializer", "undefined-input"):
        return graph_rules(kind)
    raise SystemExit("unknown kind " + kind)


def graph_rules(kind):
    """Models the ONNX checker refuses (or, unsorted, accepts)."""
    vi = helper.make_tensor_value_info
    x = vi("x", F, [2, 3])
    y = vi("y", F, [2, 3])
    relu = lambda i, o, n: helper.make_node("Relu", [i], [o], name=n)
    add = lambda a, b, o, n: helper.make_node("Add", [a, b], [o], name=n)
    inits = []
    if kind == "neg-dim":
        nodes, x = [relu("x", "y", "r")], vi("x", F, [2, -3])
    elif kind == "dup-name":
        nodes = [relu("x", "t", "first"), relu("x", "t", "second"), relu("t", "y", "last")]
    elif kind == "cycle":
        # a -> b -> c -> a, reachable from x.
        nodes = [add("x", "c", "a", "n_a"), relu("a", "b", "n_b"), relu("b", "c", "n_c"),
                 relu("b", "y", "n_y")]
    elif kind == "self-loop":
        nodes = [add("x", "a", "a", "n_a"), relu("a", "y", "n_y")]
    elif kind == "unsorted":
        # Listed consumer first: y = relu(relu(x) + x).
        nodes = [relu("s", "y", "last"), add("r", "x", "s", "mid"), relu("x", "r", "first")]
    elif kind in ("huge-constant", "overflow-constant"):
        # 100000 x 100000 x 100 floats (4e12 bytes), or 2^62 x 4 elements.
        dims = [100000, 100000, 100] if kind == "huge-constant" else [1 << 62, 4]
        inits = [helper.make_tensor("shape", TensorProto.INT64, [len(dims)], dims)]
        nodes = [helper.make_node("ConstantOfShape", ["shape"], ["big"], name="fill"),
                 helper.make_node("ReduceSum", ["big"], ["y"], name="sum", keepdims=0)]
        y = vi("y", F, [])
    elif kind == "short-initializer":
        # A 2x3 float initializer with the bytes of 5 floats.
        w = helper.make_tensor("w", F, [2, 3], b"\0" * 24, raw=True)
        w.raw_data = b"\0" * 20
        nodes, inits = [add("x", "w", "y", "add_w")], [w]
    elif kind == "undefined-input":
        nodes = [add("x", "nowhere", "y", "add_u")]
    elif kind == "overflow-input":
        nodes, x = [relu("x", "y", "r")], vi("x", F, [1 << 40, 1 << 40])
    graph = helper.make_graph(nodes, "rules", [x], [y], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def external(out, location):
    """The mlp with every initializer in external data at `location`."""
    m = mlp()
    d = os.path.dirname(os.path.abspath(out))
    if location is None:
        onnx.save(m, out, save_as_external_data=True, all_tensors_to_one_file=True,
                  location=os.path.basename(out) + ".data", size_threshold=0)
        return
    # Hand-made external reference (onnx.save refuses such locations).
    for init in m.graph.initializer:
        raw = init.raw_data or numpy_helper.to_array(init).tobytes()
        init.ClearField("raw_data")
        init.ClearField("float_data")
        init.data_location = TensorProto.EXTERNAL
        del init.external_data[:]
        for k, v in (("location", location), ("offset", "0"), ("length", str(len(raw)))):
            e = init.external_data.add()
            e.key, e.value = k, v
    with open(out, "wb") as f:
        f.write(m.SerializeToString())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kind", required=True)
    ap.add_argument("--location", help="external-data location for --kind external-ref")
    ap.add_argument("--npy-dir")
    ap.add_argument("out")
    args = ap.parse_args()
    if args.kind == "external":
        external(args.out, None)
    elif args.kind == "external-ref":
        external(args.out, args.location)
    else:
        onnx.save(build(args.kind), args.out)
    if args.npy_dir:
        os.makedirs(args.npy_dir, exist_ok=True)
        if args.kind == "shape-chain":
            x = np.random.default_rng(3).standard_normal((2, 3, 4)).astype(np.float32)
            ref = {"y": np.maximum(x.reshape(2, -1), 0)}
        elif args.kind == "batch-mlp":
            x = np.random.default_rng(5).standard_normal((5, 4)).astype(np.float32)
            ref = mlp_reference(x)
        else:
            _, _, x = mlp_weights()
            ref = mlp_reference(x)
        np.save(os.path.join(args.npy_dir, "x.npy"), x)
        x.tofile(os.path.join(args.npy_dir, "x.bin"))
        for k, v in ref.items():
            np.save(os.path.join(args.npy_dir, "expected_" + k + ".npy"), v)


if __name__ == "__main__":
    main()
