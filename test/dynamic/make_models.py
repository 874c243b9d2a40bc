"""Builds the small models of the run-time-size tests (onnx.helper, fixed
seeds), each with symbolic dimensions that kiln compiles once."""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def const(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def save(graph, path):
    """The graph as a checked opset-18 model at `path`."""
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=9)
    onnx.checker.check_model(model)
    onnx.save(model, path)


def encoder_block(path):
    """MatMul/Add/Relu, LayerNorm, self-attention-like scores over a
    symbolic sequence, a Reshape whose shape comes from Shape/Gather/Concat,
    a ReduceMean and Transpose: batch and sequence both symbolic."""
    rng = np.random.default_rng(7)
    e, h = 16, 32
    inits = [
        const("w1", rng.standard_normal((e, h)).astype(np.float32) * 0.3),
        const("b1", rng.standard_normal(h).astype(np.float32) * 0.1),
        const("gamma", rng.standard_normal(h).astype(np.float32)),
        const("beta", rng.standard_normal(h).astype(np.float32)),
        const("zero", np.array([0], dtype=np.int64)),
        const("minus_one", np.array([-1], dtype=np.int64)),
        const("axes_last", np.array([-1], dtype=np.int64)),
        const("scale", np.array(0.25, dtype=np.float32)),
    ]
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["mm"]),
        helper.make_node("Add", ["mm", "b1"], ["pre"]),
        helper.make_node("Relu", ["pre"], ["act"]),
        helper.make_node("LayerNormalization", ["act", "gamma", "beta"], ["ln"], axis=-1),
        helper.make_node("Transpose", ["ln"], ["lnT"], perm=[0, 2, 1]),
        helper.make_node("MatMul", ["ln", "lnT"], ["scores"]),
        helper.make_node("Mul", ["scores", "scale"], ["scaled"]),
        helper.make_node("Add", ["scaled", "mask"], ["masked"]),
        helper.make_node("Softmax", ["masked"], ["probs"], axis=-1),
        helper.make_node("MatMul", ["probs", "ln"], ["ctx"]),
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Gather", ["shape", "zero"], ["batch"], axis=0),
        helper.make_node("Concat", ["batch", "minus_one"], ["flat_shape"], axis=0),
        helper.make_node("Reshape", ["ctx", "flat_shape"], ["flat"]),
        helper.make_node("ReduceMean", ["ctx", "axes_last"], ["mean"], keepdims=1),
        helper.make_node("Tanh", ["mean"], ["mean_t"]),
    ]
    graph = helper.make_graph(
        nodes, "encoder_block",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "sequence", e]),
         helper.make_tensor_value_info("mask", TensorProto.FLOAT, ["batch", 1, "sequence"])],
        [helper.make_tensor_value_info("flat", TensorProto.FLOAT, ["batch", None]),
         helper.make_tensor_value_info("ctx", TensorProto.FLOAT, ["batch", "sequence", h]),
         helper.make_tensor_value_info("mean_t", TensorProto.FLOAT, ["batch", "sequence", 1])],
        inits)
    save(graph, path)


def kv_concat(path):
    """A KV-cache step: the new key is appended to the past one along a
    symbolic length (total = past + seq), attention reads the whole cache;
    `present` has length past + seq."""
    rng = np.random.default_rng(11)
    d = 8
    inits = [const("wk", rng.standard_normal((d, d)).astype(np.float32) * 0.4)]
    nodes = [
        helper.make_node("MatMul", ["x", "wk"], ["k"]),
        helper.make_node("Concat", ["past", "k"], ["present"], axis=1),
        helper.make_node("Transpose", ["present"], ["presentT"], perm=[0, 2, 1]),
        helper.make_node("MatMul", ["x", "presentT"], ["scores"]),
        helper.make_node("Softmax", ["scores"], ["probs"], axis=-1),
        helper.make_node("MatMul", ["probs", "present"], ["out"]),
    ]
    graph = helper.make_graph(
        nodes, "kv_concat",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", d]),
         helper.make_tensor_value_info("past", TensorProto.FLOAT, ["batch", "past_seq", d])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, ["batch", "seq", d]),
         helper.make_tensor_value_info("present", TensorProto.FLOAT,
                                       ["batch", "past_seq + seq", d])],
        inits)
    save(graph, path)


def add_two_symbols(path):
    """Add of two inputs whose lengths are different symbols: kiln cannot
    prove them equal, so the run checks it."""
    nodes = [helper.make_node("Add", ["a", "b"], ["y"])]
    graph = helper.make_graph(
        nodes, "add_two_symbols",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, ["n"]),
         helper.make_tensor_value_info("b", TensorProto.FLOAT, ["m"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n"])])
    save(graph, path)


def if_runtime_branch(path):
    """An If on a run-time scalar input (a mode flag) whose branches compute
    with different intermediate shapes over a symbolic batch: concatenated
    features [n, 2c] times one weight, or [n, c] times another."""
    rng = np.random.default_rng(23)
    c, k = 6, 4
    w_then = numpy_helper.from_array(rng.standard_normal((2 * c, k)).astype(np.float32), "w_then")
    w_else = numpy_helper.from_array(rng.standard_normal((c, k)).astype(np.float32), "w_else")
    then_graph = helper.make_graph(
        [helper.make_node("Concat", ["x", "x2"], ["wide"], axis=1),
         helper.make_node("MatMul", ["wide", "w_then"], ["then_out"])],
        "then", [], [helper.make_tensor_value_info("then_out", TensorProto.FLOAT, ["n", k])],
        [w_then])
    else_graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w_else"], ["else_out"])],
        "else", [], [helper.make_tensor_value_info("else_out", TensorProto.FLOAT, ["n", k])],
        [w_else])
    nodes = [
        helper.make_node("Mul", ["x", "x"], ["x2"]),
        helper.make_node("If", ["mode"], ["branch"], then_branch=then_graph,
                         else_branch=else_graph),
        helper.make_node("Relu", ["branch"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "if_runtime_branch",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", c]),
         helper.make_tensor_value_info("mode", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", k])])
    save(graph, path)


def fcn(path):
    """A segmentation/detection-style CNN over a symbolic batch, height and
    width: strided Conv+Relu, Conv+BatchNorm, MaxPool, a 1x1 head with a
    Sigmoid ([n, 4, ~h/4, ~w/4]) and a pooled classifier ([n, 5])."""
    rng = np.random.default_rng(31)
    w = lambda *s: rng.standard_normal(s).astype(np.float32) * 0.3  # noqa: E731
    inits = [
        const("w1", w(8, 3, 3, 3)), const("b1", w(8)),
        const("w2", w(8, 8, 3, 3)),
        const("scale", (1 + 0.1 * rng.standard_normal(8)).astype(np.float32)),
        const("bias", w(8)), const("mean", w(8)),
        const("var", (1 + 0.1 * rng.random(8)).astype(np.float32)),
        const("w3", w(4, 8, 1, 1)), const("b3", w(4)),
        const("wc", w(5, 8)), const("bc", w(5)),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2"], ["c2"], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c2", "scale", "bias", "mean", "var"], ["bn"]),
        helper.make_node("Relu", ["bn"], ["r2"]),
        helper.make_node("MaxPool", ["r2"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p", "w3", "b3"], ["head"]),
        helper.make_node("Sigmoid", ["head"], ["mask"]),
        helper.make_node("GlobalAveragePool", ["r2"], ["g"]),
        helper.make_node("Flatten", ["g"], ["f"]),
        helper.make_node("Gemm", ["f", "wc", "bc"], ["logits"], transB=1),
    ]
    graph = helper.make_graph(
        nodes, "fcn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3, "h", "w"])],
        [helper.make_tensor_value_info("mask", TensorProto.FLOAT, ["n", 4, None, None]),
         helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["n", 5])],
        inits)
    save(graph, path)


def across_batch(path):
    """Ops that mix samples (a Softmax and a mean over the batch axis), which
    the per-sample scheme refuses: kiln falls back to run-time sizes."""
    nodes = [helper.make_node("Softmax", ["x"], ["s"], axis=0),
             helper.make_node("ReduceMean", ["x", "axes"], ["m"], keepdims=1),
             helper.make_node("Sub", ["s", "m"], ["y"])]
    graph = helper.make_graph(
        nodes, "across_batch",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 4])],
        [const("axes", np.array([0], dtype=np.int64))])
    save(graph, path)



def decoder_heads(path):
    """Ops a decoder's head and mask code uses over a symbolic batch and
    sequence: position ids as a CumSum of the mask, a causal Trilu mask,
    GatherElements by those ids (tiled twice), a Gemm, and ArgMax and TopK
    over the logits."""
    rng = np.random.default_rng(29)
    d, v = 8, 11
    w = const("w", rng.standard_normal((d, v)).astype(np.float32))
    bias = const("bias", rng.standard_normal((v,)).astype(np.float32))
    nodes = [
        helper.make_node("Greater", ["mask", "zero_f"], ["on"]),
        helper.make_node("Cast", ["on"], ["on_f"], to=TensorProto.FLOAT),
        helper.make_node("CumSum", ["on_f", "axis1"], ["pos1"]),
        helper.make_node("Sub", ["pos1", "one"], ["pos"]),
        helper.make_node("Relu", ["pos"], ["pos_nn"]),
        helper.make_node("Cast", ["pos_nn"], ["pos_i"], to=TensorProto.INT64),
        helper.make_node("GatherElements", ["x0", "pos_i"], ["picked"], axis=1),
        # scores [b, s, s] masked to the causal lower triangle
        helper.make_node("MatMul", ["x", "xt"], ["scores"]),
        helper.make_node("Trilu", ["scores"], ["causal"], upper=0),
        helper.make_node("ReduceSum", ["causal", "axis2"], ["mixed"], keepdims=1),
        helper.make_node("Mul", ["x", "mixed"], ["feat"]),
        helper.make_node("Flatten", ["feat"], ["rows"], axis=2),
        helper.make_node("Shape", ["x"], ["xs"]),
        helper.make_node("Slice", ["xs", "zero", "two"], ["bs"]),
        helper.make_node("Concat", ["minus1", "d"], ["rows_shape"], axis=0),
        helper.make_node("Reshape", ["feat", "rows_shape"], ["rows2"]),
        helper.make_node("Gemm", ["rows2", "w", "bias"], ["logits2"]),
        helper.make_node("Concat", ["bs", "vdim"], ["logits_shape"], axis=0),
        helper.make_node("Reshape", ["logits2", "logits_shape"], ["logits"]),
        helper.make_node("ArgMax", ["logits"], ["tokens"], axis=-1, keepdims=0),
        helper.make_node("TopK", ["logits", "k3"], ["top_vals", "top_idx"], axis=-1),
        helper.make_node("Tile", ["picked", "reps"], ["tiled"]),
        helper.make_node("Transpose", ["x"], ["xt"], perm=[0, 2, 1]),
        helper.make_node("ReduceMean", ["x", "axis2"], ["x0"], keepdims=0),
    ]
    inits = [w, bias,
             const("axis1", np.array(1, np.int64)), const("axis2", np.array([2], np.int64)),
             const("one", np.array(1.0, np.float32)), const("zero", np.array([0], np.int64)),
             const("zero_f", np.array(0.0, np.float32)),
             const("two", np.array([2], np.int64)), const("minus1", np.array([-1], np.int64)),
             const("d", np.array([d], np.int64)), const("vdim", np.array([v], np.int64)),
             const("k3", np.array([3], np.int64)), const("reps", np.array([1, 2], np.int64))]
    # Topological order: Transpose and ReduceMean first.
    nodes = nodes[-2:] + nodes[:-2]
    graph = helper.make_graph(
        nodes, "decoder_heads",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", d]),
         helper.make_tensor_value_info("mask", TensorProto.FLOAT, ["batch", "seq"])],
        [helper.make_tensor_value_info("tokens", TensorProto.INT64, ["batch", "seq"]),
         helper.make_tensor_value_info("picked", TensorProto.FLOAT, ["batch", "seq"]),
         helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", "seq", v]),
         helper.make_tensor_value_info("top_vals", TensorProto.FLOAT, ["batch", "seq", 3]),
         helper.make_tensor_value_info("top_idx", TensorProto.INT64, ["batch", "seq", 3]),
         helper.make_tensor_value_info("tiled", TensorProto.FLOAT, ["batch", None])],
        inits)
    save(graph, path)


def loop_growing(path):
    """A Loop of known trip count whose carried value grows by a row each
    iteration (a Concat), with a scan output per iteration, over a symbolic
    batch: each iteration has its own shapes."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond"], ["cond_out"]),
         helper.make_node("Cast", ["i"], ["fi"], to=TensorProto.FLOAT),
         helper.make_node("Mul", ["x", "fi"], ["row"]),
         helper.make_node("Unsqueeze", ["row", "ax1"], ["row3"]),
         helper.make_node("Concat", ["acc", "row3"], ["acc_out"], axis=1),
         helper.make_node("ReduceSum", ["acc_out", "ax1"], ["total"], keepdims=0)],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc", TensorProto.FLOAT, ["n", None, 4])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_out", TensorProto.FLOAT, ["n", None, 4]),
         helper.make_tensor_value_info("total", TensorProto.FLOAT, ["n", 4])],
        [const("ax1", np.array([1], np.int64))])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["trips", "", "acc0"], ["acc", "totals"], body=body)],
        "loop_growing",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 4]),
         helper.make_tensor_value_info("acc0", TensorProto.FLOAT, ["n", 1, 4])],
        [helper.make_tensor_value_info("acc", TensorProto.FLOAT, ["n", None, 4]),
         helper.make_tensor_value_info("totals", TensorProto.FLOAT, [None, "n", 4])],
        [const("trips", np.array(5, np.int64))])
    save(graph, path)


def fpn_head(path):
    """A feature-pyramid style block over a symbolic batch, height and
    width: a strided Conv, a MaxPool in ceil mode, an AveragePool (pads not
    counted), a MaxPool
    with auto_pad SAME_UPPER (pads computed at run time), a nearest
    Resize by constant scales, a reflect Pad, and a linear Resize to the
    input's own size (sizes from Shape, as F.interpolate(size=...) exports),
    added to a 1x1 Conv of the input."""
    rng = np.random.default_rng(31)
    c = 4
    w1 = const("w1", (rng.standard_normal((c, 3, 3, 3)) * 0.3).astype(np.float32))
    w2 = const("w2", (rng.standard_normal((c, c, 3, 3)) * 0.3).astype(np.float32))
    w3 = const("w3", (rng.standard_normal((c, 3, 1, 1)) * 0.3).astype(np.float32))
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["c1"], strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("MaxPool", ["c1"], ["p0"], kernel_shape=[3, 3], strides=[2, 2],
                         ceil_mode=1),
        helper.make_node("AveragePool", ["p0"], ["p1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                         count_include_pad=0),
        helper.make_node("MaxPool", ["p1"], ["p2"], kernel_shape=[3, 3], strides=[2, 2],
                         auto_pad="SAME_UPPER"),
        helper.make_node("Resize", ["p2", "", "scales"], ["up"], mode="nearest"),
        helper.make_node("Pad", ["up", "pads"], ["padded"], mode="reflect"),
        helper.make_node("Conv", ["padded", "w2"], ["c2"]),
        helper.make_node("Shape", ["c2"], ["s2"]),
        helper.make_node("Shape", ["x"], ["sx"]),
        helper.make_node("Slice", ["s2", "zero", "two"], ["nc"]),
        helper.make_node("Slice", ["sx", "two", "four"], ["hw"]),
        helper.make_node("Concat", ["nc", "hw"], ["sizes"], axis=0),
        helper.make_node("Resize", ["c2", "", "", "sizes"], ["back"], mode="linear",
                         coordinate_transformation_mode="half_pixel"),
        helper.make_node("Conv", ["x", "w3"], ["skip"]),
        helper.make_node("Add", ["back", "skip"], ["y"]),
    ]
    inits = [w1, w2, w3, const("scales", np.array([1, 1, 2, 2], np.float32)),
             const("pads", np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64)),
             const("zero", np.array([0], np.int64)), const("two", np.array([2], np.int64)),
             const("four", np.array([4], np.int64))]
    graph = helper.make_graph(
        nodes, "fpn_head",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3, "h", "w"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", c, "h", "w"])], inits)
    save(graph, path)


def random_const(rng, name, shape, scale=0.3):
    """A float32 initializer of normal values times `scale`."""
    return const(name, (rng.standard_normal(shape) * scale).astype(np.float32))


def mobile_block(path):
    """A MobileNet/ResNeXt-style block over a symbolic batch, height and
    width: a strided Conv + Relu, a wider 3x3 Conv (row blocks of the
    patches at the larger sizes), a grouped Conv (group 4) + Relu, a
    depthwise Conv, a 1x1 Conv and a residual Add."""
    rng = np.random.default_rng(37)
    c = 8
    w = lambda name, shape: random_const(rng, name, shape)
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2"], ["c2"], pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["c2", "wg", "bg"], ["g"], pads=[1, 1, 1, 1], group=4),
        helper.make_node("Relu", ["g"], ["rg"]),
        helper.make_node("Conv", ["rg", "wd"], ["dw"], pads=[1, 1, 1, 1], group=2 * c),
        helper.make_node("Conv", ["dw", "wp"], ["pw"]),
        helper.make_node("Add", ["pw", "r1"], ["y"]),
    ]
    inits = [w("w1", (c, 3, 3, 3)), w("b1", (c,)), w("w2", (2 * c, c, 3, 3)),
             w("wg", (2 * c, c // 2, 3, 3)), w("bg", (2 * c,)), w("wd", (2 * c, 1, 3, 3)),
             w("wp", (c, 2 * c, 1, 1))]
    graph = helper.make_graph(
        nodes, "mobile_block",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3, "h", "w"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", c, "oh", "ow"])], inits)
    save(graph, path)


def unet_decoder(path):
    """A segmentation-style encoder/decoder over a symbolic batch, height
    and width: strided Convs down, ConvTransposes up (stride 2, kernel 2;
    and kernel 3 with pads 1 and output_padding 1, grouped), skip Adds."""
    rng = np.random.default_rng(41)
    w = lambda name, shape: random_const(rng, name, shape)
    nodes = [
        helper.make_node("Conv", ["x", "we"], ["e1"], strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["e1"], ["r1"]),
        helper.make_node("Conv", ["r1", "we2"], ["e2"], strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("ConvTranspose", ["e2", "wt1", "bt1"], ["u1"], strides=[2, 2]),
        helper.make_node("Add", ["u1", "r1"], ["s1"]),
        helper.make_node("ConvTranspose", ["s1", "wt2"], ["u2"], strides=[2, 2],
                         pads=[1, 1, 1, 1], output_padding=[1, 1], group=2),
        helper.make_node("Add", ["u2", "xs"], ["y"]),
        helper.make_node("Conv", ["x", "wx"], ["xs"]),
    ]
    # (Nodes in topological order.)
    nodes = nodes[:-2] + [nodes[-1], nodes[-2]]
    inits = [w("we", (4, 3, 3, 3)), w("we2", (8, 4, 3, 3)), w("wt1", (8, 4, 2, 2)),
             w("bt1", (4,)), w("wt2", (4, 2, 3, 3)), w("wx", (4, 3, 1, 1))]
    graph = helper.make_graph(
        nodes, "unet_decoder",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3, "h", "w"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 4, "h", "w"])], inits)
    save(graph, path)


def recurrent(path):
    """An LSTM and a bidirectional GRU over a symbolic sequence and batch
    (as OCR and speech models run them over a run-time width or length):
    kiln loops over the time steps at run time."""
    rng = np.random.default_rng(37)
    i, h = 6, 8
    def w(*shape):
        return (rng.standard_normal(shape) * 0.4).astype(np.float32)
    inits = [const("W", w(1, 4 * h, i)), const("R", w(1, 4 * h, h)), const("B", w(1, 8 * h)),
             const("Wg", w(2, 3 * h, h)), const("Rg", w(2, 3 * h, h)), const("Bg", w(2, 6 * h))]
    nodes = [
        helper.make_node("LSTM", ["x", "W", "R", "B"], ["y", "y_h"], hidden_size=h),
        helper.make_node("Squeeze", ["y", "one"], ["y3"]),
        helper.make_node("GRU", ["y3", "Wg", "Rg", "Bg"], ["g", "g_h"], hidden_size=h,
                         direction="bidirectional", linear_before_reset=1),
    ]
    inits.append(const("one", np.array([1], np.int64)))
    graph = helper.make_graph(
        nodes, "recurrent",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["seq", "batch", i])],
        [helper.make_tensor_value_info("g", TensorProto.FLOAT, ["seq", 2, "batch", h]),
         helper.make_tensor_value_info("g_h", TensorProto.FLOAT, [2, "batch", h]),
         helper.make_tensor_value_info("y_h", TensorProto.FLOAT, [1, "batch", h])],
        inits)
    save(graph, path)


def loop_rows(path):
    """A scripted loop over the rows of a symbolic batch (`for i in
    range(x.size(0))`, as torch.jit.script exports it): the trip count is
    a dim of the input, known only at run time; a running sum is carried
    and each iteration's value is a scan output."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond"], ["cond_out"]),
         helper.make_node("Gather", ["x", "i"], ["row"], axis=0),
         helper.make_node("Add", ["acc", "row"], ["acc_out"]),
         helper.make_node("Mul", ["acc_out", "acc_out"], ["sq"])],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_out", TensorProto.FLOAT, [4]),
         helper.make_tensor_value_info("sq", TensorProto.FLOAT, [4])])
    graph = helper.make_graph(
        [helper.make_node("Shape", ["x"], ["xs"]),
         helper.make_node("Gather", ["xs", "zero"], ["n"], axis=0),
         helper.make_node("Loop", ["n", "", "acc0"], ["total", "squares"], body=body)],
        "loop_rows",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 4])],
        [helper.make_tensor_value_info("total", TensorProto.FLOAT, [4]),
         helper.make_tensor_value_info("squares", TensorProto.FLOAT, ["n", 4])],
        [const("zero", np.array(0, np.int64)), const("acc0", np.zeros(4, np.float32))])
    save(graph, path)

if __name__ == "__main__":
    out = sys.argv[1]
    encoder_block(f"{out}/encoder_block.onnx")
    kv_concat(f"{out}/kv_concat.onnx")
    add_two_symbols(f"{out}/add_two_symbols.onnx")
    if_runtime_branch(f"{out}/if_runtime_branch.onnx")
    fcn(f"{out}/fcn.onnx")
    across_batch(f"{out}/across_batch.onnx")
