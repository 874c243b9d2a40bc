//===- Passes.td - provider-independent kiln passes ---------*- tablegen -*-===//
#ifndef KILN_PASSES_PASSES_TD
#define KILN_PASSES_PASSES_TD

include "mlir/Pass/PassBase.td"

def ShapeInference : Pass<"kiln-shape-inference", "::mlir::func::FuncOp"> {
  let summary = "Infer static result shapes and element types of onnx ops";
  let description = [{
    Re-runs each op's shape inference rule in program order so that result
    types are as static as the inputs allow, then updates the function's
    result types. Dimensions that depend on unknown input dimensions stay
    dynamic (`?`). Inconsistent shapes are reported against the node.
  }];
}

def DecomposeRecurrent : Pass<"kiln-decompose-recurrent", "::mlir::func::FuncOp"> {
  let summary = "LSTM, GRU and RNN as onnx ops: unrolled steps or a Loop";
  let description = [{
    Rewrites each recurrent op (all directions, layouts, peepholes, clip,
    input_forget, linear_before_reset and the activation functions ONNX
    lists) into its time steps built from Gather, MatMul, Add, Slice,
    activations and Concat, which every provider lowers. The input
    projections of all steps are one MatMul before the steps (both biases
    added there), so a step multiplies h by R only (a GRU once per step).
    Sequences of up to 16 steps are unrolled; longer ones, and those of
    run-time length, become an onnx.Loop over the steps marked to stay a
    loop (kiln-decompose-ops unrolls other Loops of known trip count).
    Needs static W and R shapes, and X's unless run-time sizes are on
    (initial states of unknown shape are reshaped to the one X and W give);
    `sequence_lens` must be the full length, or the direction forward
    (finished rows are masked).
  }];
  let options = [
    Option<"skipDynamic", "skip-dynamic", "bool", "false",
           "Leave ops whose inputs are not static yet, for a later run after "
           "constant folding (the optimizer alternates the two)">
  ];
}

def WidenHalf : Pass<"kiln-widen-half", "::mlir::func::FuncOp"> {
  let summary = "Compute float16/bfloat16 values in float32, rounding at Casts and outputs";
  let description = [{
    Every half-precision value between the model's inputs and outputs
    becomes float32: inputs are widened on entry, results and explicit Casts
    to half round there (a Cast out of half rounds its input first), and
    half constants convert exactly. This matches ONNX's references, which
    round a composite op's result once, instead of rounding after each op
    of its decomposition. Functions with subgraphs are left unchanged.
  }];
}

def DecomposeOps : Pass<"kiln-decompose-ops", "::mlir::func::FuncOp"> {
  let summary = "Rewrite Attention, LinearAttention, RMSNormalization, CumSum, CumProd, quantization ops, CausalConvWithState, Loop and Scan into onnx ops";
  let dependentDialects = ["::kiln::KilnDialect"];
  let description = [{
    Rewrites ops without a provider lowering of their own into onnx ops that
    every provider lowers, following the ONNX reference implementation:
    Attention (3-D or 4-D Q/K/V, scale, is_causal, sliding windows, bool or
    float attn_mask, past/present key and value, GQA, softcap,
    qk_matmul_output_mode; fully masked rows give zeros) becomes
    MatMul/Softmax/Where; RMSNormalization becomes ReduceMean/Sqrt/Mul
    (except kiln-fuse-subgraphs' own, `kiln.fused`, which the CPU lowers);
    CumSum and CumProd over a constant axis of at most 256 elements are
    unrolled into Slice, a running Add or Mul, and Concat (exact for
    integers). QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear
    (per tensor, per axis or blocked; integer, 4-/2-bit or float8 side)
    compute in f32 with Round/Clip and a Cast to the quantized type;
    MatMulInteger (2-D or larger; zero points per tensor, the weights' also
    per column) becomes a zero-point-free MatMulInteger of u8 by s8 (s8
    data shifted by 128, u8 weights by -128) minus za * the weights' column
    sums (folded for constant weights) and, for a weight zero point that is
    not a constant 0, zw * (the rows' sums - K za), all exact in i32; 1-D
    operands an int32 MatMul. ConvInteger (2-D, group 1, s8 weights without
    a zero point) becomes an unpadded, zero-point-free ConvInteger on u8
    data padded with its zero point, minus za * each output channel's
    weight sum; other forms an f64 Conv (exact for int32 sums).
    QLinearMatMul is the same integer product requantized in f64 as ONNX's
    reference does, QLinearConv the f64 Conv plus its int32 bias
    requantized the same way (w_scale/w_zero_point per channel or not). The
    zero-point-free MatMulInteger and ConvInteger are left for the CPU
    lowering. CausalConvWithState a Concat with the past state, a
    depthwise Conv in f32 and a Slice for the present state;
    LinearAttention its recurrence unrolled over at most 64 steps in f32;
    Loop, when its trip count is known (constant or the scan outputs'
    length, at most 256) and the body passes its condition through,
    unrolled with the scan outputs stacked (a run-time trip count or
    condition is checked with kiln.check); Scan (opset 9 on) over static
    scan axes (at most 256 steps), unrolled with each step's slices taken
    by Gather and the scan outputs stacked, both honouring the directions.
    Needs static shapes; an op with dynamic shapes, a runtime
    `nonpad_kv_seqlen` or a runtime axis is left in place, so the
    partitioner reports it as unsupported.
  }];
}

def DecomposeLosses : Pass<"kiln-decompose-losses", "::mlir::func::FuncOp"> {
  let summary = "NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss as onnx ops";
  let description = [{
    Rewrites the two loss ops (all reductions, class weights, ignore_index,
    extra spatial dims) into GatherElements, Gather, Where, Mul and
    ReduceSum/ReduceMean, as their ONNX function bodies define them, so
    every provider runs them. Ops with non-static shapes are left alone for
    the partitioner to report.
  }];
}

def SymbolicShapes : Pass<"kiln-symbolic-shapes", "::mlir::func::FuncOp"> {
  let summary = "Bind the inputs' symbolic dims and express the outputs' sizes in them";
  let description = [{
    For a model compiled with run-time sizes. Each dynamic input dim binds
    a symbol: its dim_param (inputs naming the same one share it) or a
    fresh `<input>:<axis>`; arguments get `kiln.dim_symbols` (the symbol per
    dim, -1 where static) and the function the symbol names. Sizes flow
    forward as polynomials over the symbols through broadcasting,
    contractions, Reshape (with shapes computed by Shape, Gather, Concat,
    Unsqueeze, Slice and integer arithmetic), Flatten, Transpose, Concat,
    Gather, Squeeze/Unsqueeze and reductions. Each dynamic output dim must
    be such a size: results get `kiln.dim_sizes` (the size programs of
    model_abi.h, KILN_SIZE_*) and `kiln.dim_text`; an output whose size
    depends on data is an error naming it and the node that computes it.
    A result dim the sizes prove constant becomes static in its type (the
    pipeline runs shape inference after this pass, and the pass again).
  }];
  let statistics = [
    Statistic<"refinedDims", "refined-results", "Results whose dynamic dims became static">
  ];
}

def Partition : Pass<"kiln-partition", "::mlir::ModuleOp"> {
  let summary = "Assign ops to execution providers and group them into partitions";
  let description = [{
    Walks the graph in program order and assigns each onnx op to the first
    provider, in the user's priority order, whose capability query accepts
    it (like ONNX Runtime's GetCapability). Consecutive ops of one provider
    are wrapped into a `kiln.partition` region; values used after a
    partition become its results. An op no provider accepts is reported
    with each provider's reason. Device partitions whose largest result has
    fewer than `min-device-elements` elements move back to the CPU.
    Tensors crossing between the host and a device get one `kiln.transfer`
    per tensor and direction, shared by every consumer; each partition
    records the bytes it receives and sends (`kiln.bytes_in/out`).
  }];
  let options = [
    ListOption<"providers", "providers", "std::string",
               "Execution providers in priority order (default: cpu)">,
    Option<"assignment", "assignment", "std::string", "\"\"",
           "JSON file pinning node names or op types to a provider "
           "(keys nodes and op_types)">,
    Option<"minDeviceElements", "min-device-elements", "int64_t", "256",
           "Device partitions whose largest result has fewer elements run on "
           "the CPU instead (a transfer would cost more than the work)">
  ];
  let dependentDialects = ["::kiln::KilnDialect"];
}

def FlattenConstants : Pass<"kiln-flatten-constants", "::mlir::ModuleOp"> {
  let summary = "Make constant memref.globals one-dimensional";
  let description = [{
    Runs just before the lowering to LLVM. A multi-dimensional constant
    `memref.global` becomes the 1-D global of its elements, and each
    `memref.get_global` of it an expand_shape back to the original type (a
    view). LLVM represents a nested array initializer as one constant per
    innermost row, so a [512, 512, 3, 3] weight was 786432 uniqued
    constants: this halves the machine-code stage of a ResNet.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def OutlineLoops : Pass<"kiln-outline-loops", "::mlir::ModuleOp"> {
  let summary = "Move each top-level loop nest of a model function into its own function";
  let description = [{
    Runs on loops (after convert-linalg-to-loops), before the lowering to
    LLVM. Every top-level scf.for/scf.parallel nest of a function body
    becomes a private function `<function>_loop<N>` called in its place;
    constants it uses are cloned in, buffers and scalars become arguments
    (buffers with the identity layout, as the bare-pointer calling
    convention needs: one of run-time size travels as a one-element view of
    its pointer plus its dynamic sizes, and the function rebuilds its view;
    a nest capturing a strided buffer stays). Emit marks these functions noinline. LLVM's analyses (dominator
    trees, SCEV) grow faster than linearly with a function's size: one
    function per model made a DenseNet's machine-code stage take minutes.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect", "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
}

def ElideSliceCopies : Pass<"kiln-elide-slice-copies", "::mlir::func::FuncOp"> {
  let summary = "Place a concat's parts inside its result instead of copying them there";
  let description = [{
    Runs on buffers after the kernels are generated, before
    kiln-plan-memory. A concat bufferizes to a memref.copy of each part
    into a subview of the result's allocation. Where the part is an
    allocation of its own (kiln-cpu-unshare-slice-sources gives it one)
    used only before the copy, the subview is one contiguous run of the
    result starting on a 64-byte line, and nothing else touches those
    bytes of the result between the part's allocation and the copy, the
    result's allocation becomes a byte buffer (marked `kiln.sliced`, moved
    before the part's) viewed at offset 0 as the result and at the run's
    offset as the part: the part's producers write the result in place and
    the copy goes. Views keep the identity layouts the kernels were
    generated for. Allocations returned from the function stay (the
    output buffer is the caller's), as does anything a device touches.
  }];
  let statistics = [
    Statistic<"numElided", "elided", "Copies into a concat's result elided">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect"];
}

def PlanMemory : Pass<"kiln-plan-memory", "::mlir::ModuleOp"> {
  let summary = "Plan all intermediate buffers into one arena and pass outputs by pointer";
  let description = [{
    Runs after bufferization on `@main`. Results become output arguments
    (written in place where the producing buffer allows, copied otherwise),
    and every static `memref.alloc` becomes a `memref.view` into one arena
    argument at an offset chosen at compile time: buffers whose live ranges
    (including all their aliases) do not overlap share bytes. The arena
    size, before and after reuse, is recorded on the module as
    `kiln.arena_size` and `kiln.arena_size_unshared`.

    Where the function has `kiln.check` ops, the arena's first 64 bytes are
    the run's status slot: each check becomes a conditional store of its
    message's address there, and the module gets `kiln.checks`.

    `kiln.profile_begin`/`kiln.profile_end` pairs (kiln-profile-kernels)
    with work between become calls of `kilnProfileBegin`/`kilnProfileEnd`
    (profiler context, descriptor address) under one `scf.if` each on the
    context the function reads once at entry from the arena's bytes 8-15
    (the header is then 64 bytes too); the runtime stores it there before
    each run, 0 without a profiler. Pairs with no work between (a view)
    are dropped. The module gets `kiln.profile_hooks`.

    `gpu.alloc`s (left by kiln-cuda-offload) are planned the same way into
    a device arena that the runtime allocates once per session
    (`kilnDeviceArena(bytes)`, size in `kiln.device_arena_size`); a
    constant's device copy (`kiln.device_constant`) never shares bytes. In
    a `kiln.device_io` function, results that need a copy get a device
    copy.
  }];
  let options = [
    Option<"alignment", "alignment", "int64_t", "64", "Byte alignment of every buffer">
  ];
  let dependentDialects = ["::mlir::memref::MemRefDialect", "::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect", "::mlir::scf::SCFDialect",
                           "::mlir::func::FuncDialect", "::mlir::gpu::GPUDialect",
                           "::mlir::vector::VectorDialect"];
}

def LowerRuntimeCalls : Pass<"kiln-lower-runtime-calls", "::mlir::ModuleOp"> {
  let summary = "Turn bufferized kiln.runtime_call ops into calls of libkiln_rt";
  let description = [{
    Runs after bufferization and kiln-plan-memory. Each `kiln.runtime_call`
    on memrefs becomes a `func.call` of its callee (declared once per
    module): a memref operand passes as the address (i64) of its first
    element (its aligned pointer plus its offset: arena views have one),
    the `outs` buffers follow the scalar arguments, in order.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect", "::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect"];
}

def Simplify : Pass<"kiln-simplify", "::mlir::ModuleOp"> {
  let summary = "Remove no-op onnx ops and compose back-to-back ones";
  let description = [{
    Canonicalization-style rewrites of the onnx graph, applied greedily (the
    driver also erases dead ops): Identity, Dropout at inference (no or
    false training_mode, unused mask), Cast to the same type, and
    Reshape/Expand/Slice/Flatten/Squeeze/Unsqueeze whose static result type
    is the input's type become their input; Transpose of Transpose composes
    its permutations (an identity permutation disappears), and one that
    moves only dims of size 1 becomes a Reshape; Reshape of
    Reshape reshapes the original input; a Gemm between a Reshape that
    flattens the leading dims of its input and one that restores them (a
    linear layer as PyTorch's addmm or GPT-2's Conv1D exports it) becomes
    MatMul + Add on the unflattened input; an If whose condition is a
    constant becomes its taken branch. How often each rewrite fired is
    recorded on the module as `kiln.report.simplify.<rewrite>`.
  }];
}

def FuseSubgraphs : Pass<"kiln-fuse-subgraphs", "::mlir::ModuleOp"> {
  let summary = "Recognize GELU, LayerNorm, RMSNorm and attention blocks; mark skip LayerNorms";
  let description = [{
    Replaces the primitive-node spellings exporters use for GELU (the erf
    form `x * 0.5 * (1 + Erf(x / sqrt(2)))`, with Div by 1.41421 or Mul by
    0.70711 and the Mul by x and by 0.5 in either order, and the tanh
    approximation) with `onnx.Gelu`, and the
    ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div(/Mul gamma/Add beta) chain over
    trailing axes with `onnx.LayerNormalization` (the root also as
    Reciprocal/Div(1, .)/Pow -0.5; gamma may be folded into the factor s,
    as `(x - mean) * s + beta` or tf2onnx's `x * s + (beta - mean * s)`); without the centering (the square and
    the division of x itself: LLaMA's and T5's RMSNorm) with
    `onnx.RMSNormalization {kiln.fused}`, which kiln-decompose-ops leaves
    whole for the CPU kernel. Multi-head attention
    blocks, MatMul(Q, K^T) -> scale -> mask (Add, or Where with a constant
    condition) -> Softmax -> MatMul(V), become one
    `onnx.Attention {kiln.fused}`: on the 3-D Q/K/V when the heads are split
    by Reshape/Transpose (batch-first, or PyTorch's sequence-first with
    `kiln.layout = "seq_first"`), on 4-D [B, H, S, D] ones otherwise
    (`kiln.layout = "heads"`, e.g. after rotary embeddings). It marks
    LayerNormalization of a residual Add (`kiln.skip_layer_norm`), which the
    CPU lowering then computes from the Add's operands, and attention blocks
    it could not fuse (`kiln.pattern = "attention"` on the Softmax). Counts
    go to the module as `kiln.report.fuse_gelu`, `fuse_layer_norm`,
    `fuse_rms_norm`, `fuse_attention`, `skip_layer_norm` and
    `attention_blocks`.
  }];
}

def FuseConv : Pass<"kiln-fuse-conv", "::mlir::ModuleOp"> {
  let summary = "Fold BatchNormalization and per-channel bias Adds into Conv";
  let description = [{
    Conv followed by an inference-mode BatchNormalization, with constant
    weights, bias and statistics, becomes one Conv whose weights and bias are
    computed at compile time (`W' = W * s`, `B' = (B - mean) * s + beta`,
    `s = scale / sqrt(var + eps)`). A Conv followed by an Add of a constant
    per-channel (or scalar) tensor takes the constant into its bias. A
    linear layer (MatMul by constant weights, optionally plus a constant
    bias) multiplied by a constant per output column (a layer scale) takes
    the scale into its weights and bias. Counts: `kiln.report.fuse_conv_bn`,
    `kiln.report.fuse_conv_add`, `kiln.report.fold_linear_scale`.
  }];
}

def Conv1dAs2d : Pass<"kiln-conv1d-as-2d", "::mlir::func::FuncOp"> {
  let summary = "Run 1-D Convs as 2-D Convs of height 1";
  let description = [{
    A Conv of rank-3 input with static channels and length (and static
    weights) becomes Unsqueeze, a 2-D Conv (kernel, strides, dilations and
    pads with a height of 1 in front; constant weights reshaped in place)
    and Squeeze, so that it runs on the providers' 2-D conv kernels. Runs
    after the fusions: the Conv keeps its discardable attributes (a fused
    activation).
  }];
  let statistics = [
    Statistic<"converted", "converted", "1-D Convs run as 2-D">
  ];
}

def FuseQuantized : Pass<"kiln-fuse-quantized", "::mlir::ModuleOp"> {
  let summary = "Turn QDQ MatMul and Gemm layers into 8-bit integer products";
  let description = [{
    Runs before kiln-decompose-ops. A MatMul (or a Gemm with alpha = beta =
    1 and A not transposed) whose operands are DequantizeLinear of 8-bit
    activations (per tensor) and of constant 8-bit 2-D weights (per tensor
    or per output column) becomes
    `Cast(MatMulInteger(a, W, za, zw)) * (sa * sw)` (plus the Gemm's bias),
    which is the same product: kiln-decompose-ops then splits the zero
    points off, and the CPU runs the u8 x s8 product on VNNI kernels. A 2-D
    Conv (group 1) of such operands, the weights symmetric (no zero point)
    per tensor or per output channel, becomes ConvInteger scaled per
    channel plus its bias. A DequantizeLinear of a QuantizeLinear with the
    same per-tensor parameters, left for float readers (Add, Relu, pools),
    becomes the same rounding in f32 (it vectorizes and fuses), except
    where an Add or Mul joins it to a later contraction's output: that
    contraction's store will run the join, reading this tensor as 8 bits
    (a resnet block's downsample branch). A MaxPool
    between a DequantizeLinear and a QuantizeLinear with the same per-tensor
    parameters (a positive scale) runs on the 8-bit data. A QuantizeLinear
    (per tensor) of elementwise float ops on scalar constants whose only
    other input is one DequantizeLinear'd 8-bit tensor x (maybe through more
    quantize-dequantize pairs), with a Sigmoid, Tanh, Exp or Erf among them
    (a QDQ SiLU: x * Sigmoid(x)), is a function of x's 256 values: it
    becomes a Gather (marked kiln.indices_in_range: no range check) from a
    table made of the same ops on an arange of x's type, which
    kiln-fold-constants computes. Counts:
    `kiln.report.fuse_quantized_matmul`, `kiln.report.fuse_quantized_gemm`,
    `kiln.report.fuse_quantized_conv`, `kiln.report.fuse_quantized_maxpool`,
    `kiln.report.fuse_quantized_lookup`, `kiln.report.fuse_quantize_dequantize`.
  }];
  let options = [
    Option<"integerProducts", "integer-products", "bool", "true",
           "Rewrite MatMul, Gemm and Conv (the target has 8-bit kernels); "
           "without, only quantize-dequantize pairs become f32 rounding">
  ];
}

def FuseEpilogues : Pass<"kiln-fuse-epilogues", "::mlir::ModuleOp"> {
  let summary = "Fold activations, biases and transposes into contractions";
  let description = [{
    An activation (Relu, Clip with constant bounds, Sigmoid, Tanh,
    HardSigmoid, HardSwish, LeakyRelu, Gelu, and SiLU/Swish spelled
    `y * Sigmoid(y)` or `y * Sigmoid(a * y)`, QuickGELU's form) of a single-use Conv, MatMul or Gemm becomes
    the producer's discardable attributes `kiln.activation` and
    `kiln.activation_params`, applied by the CPU lowering in the
    contraction's epilogue. A 2-D MatMul (or a Gemm without C) followed by an
    Add of a constant bias over the last dim becomes a Gemm with that C; a
    batched MatMul gets the bias as `kiln.bias`, the initial value of its
    accumulator. A 2-D MatMul of a transposed operand becomes a Gemm with
    transA/transB. Counts: `kiln.report.fuse_{conv,matmul,gemm}_activation`,
    `fuse_matmul_bias`, `fuse_matmul_transpose`.
  }];
}

def FuseElementwise : Pass<"kiln-fuse-elementwise", "::mlir::ModuleOp"> {
  let summary = "Fuse chains of elementwise linalg.generic ops";
  let description = [{
    Runs after the partitions are lowered to linalg on tensors. MLIR's
    elementwise producer-consumer fusion merges a producer generic into its
    consumer when the producer has one use and the consumer reads it through
    a permutation map (so nothing is recomputed), which also merges a
    contraction's epilogue with the elementwise ops after it. A fused body
    stays below 256 ops, which keeps compile time linear in the chain's
    length (each fusion copies both bodies). A producer that reads along
    its innermost loop through other than that loop's index (a nearest
    upsampling's floordiv) stays apart: fused, its consumer would load it
    an element at a time. So does an op that narrows a contraction's
    result (a requantization to 8 bits) when the chain it would join also
    takes a later contraction's result: only the later one's store can run
    the join, which would read the earlier one's wide sums from memory;
    apart, the narrowing op runs in the earlier one's store. The number of
    generics removed is recorded as `kiln.report.fuse_elementwise`.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

#endif
