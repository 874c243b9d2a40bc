//===- Passes.td - provider passes --------------------------*- tablegen -*-===//
#ifndef KILN_PROVIDERS_PASSES_TD
#define KILN_PROVIDERS_PASSES_TD

include "mlir/Pass/PassBase.td"

def LowerPartitions : Pass<"kiln-lower-partitions", "::mlir::ModuleOp"> {
  let summary = "Lower every kiln.partition with its provider";
  let description = [{
    Hands each `kiln.partition` to the provider named on it, which rewrites
    the onnx ops inside into its codegen dialects (linalg/tensor for the
    CPU). Partitions of providers that compile into the host function are
    then inlined; the module keeps the list of partitions in
    `kiln.partitions` for the model descriptor and profiling.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def CudaOffload : Pass<"kiln-cuda-offload", "::mlir::ModuleOp"> {
  let summary = "Place the buffers of CUDA partitions on the device and make their kernels";
  let description = [{
    Runs after bufferization. Structured ops tagged `kiln.device = "cuda"`
    run on the device: buffers only they touch become `gpu.alloc`s, other
    buffers get a device twin, and `gpu.memcpy` is inserted only where the
    side about to use a buffer holds a stale copy (one transfer per tensor
    per direction). Contractions become shared-memory tiled `gpu.launch`
    kernels and associative reductions parallel tree reductions
    (providers/cuda/Kernels.h); the other device ops become `scf.parallel`
    nests with the parallel dimensions outermost and the innermost one
    tiled by up to 256 threads, ready for gpu-map-parallel-loops and
    convert-parallel-loops-to-gpu. Counts of each kind go to
    `kiln.report.cuda_*` for `kiln compile --report`.

    A constant (a `memref.get_global` of a constant global) that device ops
    read gets a device twin marked `kiln.device_constant`, filled by a call
    to `kilnDeviceUploadOnce(dst, src, bytes)`: the runtime copies it on a
    session's first run only, so weights cross once per session.

    With `device-io`, the function's arguments and results are device
    memory (the caller's device-resident inputs and outputs): host ops get
    host copies, made only where they read or write them, and the function
    is marked `kiln.device_io` so that kiln-plan-memory writes its results
    with device copies.
  }];
  let options = [
    Option<"deviceIO", "device-io", "bool", "false",
           "Arguments and results are device memory">
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect", "::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect", "::mlir::func::FuncDialect",
                           "::mlir::arith::ArithDialect"];
}

def CudaEmulate : Pass<"kiln-cuda-emulate", "::mlir::ModuleOp"> {
  let summary = "Turn CUDA kernels and device buffers into host code, to test kernels without a GPU";
  let description = [{
    Runs after kiln-cuda-offload, instead of the GPU pipeline
    (`kiln compile --cuda-emulate`). A `gpu.launch` becomes loops over its
    blocks; its body is split at each `gpu.barrier` (at the kernel's top
    level or in an `scf.for` whose bounds all threads share), and each
    stretch between barriers loops over the block's threads, which keeps
    CUDA's semantics: every thread ends a phase before any starts the next.
    Shared memory becomes a host buffer, private memory one slice per
    thread, both filled with NaN (or an integer pattern) as each block
    starts, so that a kernel reading what it did not write fails its check. `gpu.alloc`, `gpu.memcpy` and the upload of constants become
    host allocations and copies, and one-thread-per-element loop nests stay
    host loops. A value of one thread used across a barrier is an error.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect", "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect"];
}

def NameKernels : Pass<"kiln-name-kernels", "::mlir::ModuleOp"> {
  let summary = "Name each outlined kernel after the ONNX node it computes";
  let description = [{
    Runs after gpu-kernel-outlining. Each kernel module that one
    `gpu.launch_func` uses, and its kernel, take the name of the node in the
    launch's location (`/fc1/Gemm` becomes `fc1_Gemm`, then `fc1_Gemm_1`
    for the node's next kernel), so that profiles, `--emit=ptx` and driver
    errors name nodes. Launches without a node name keep the outliner's
    names.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def FoldConstants : Pass<"kiln-fold-constants", "::mlir::ModuleOp"> {
  let summary = "Evaluate onnx ops whose inputs are all constants with the CPU codegen";
  let description = [{
    Collects the onnx ops of every function whose operands all come from
    `onnx.Constant` ops (or from other such ops) and whose results have a
    static type, clones them into a temporary module `@fold` that returns
    the values still needed by the rest of the graph, lowers it with the CPU
    provider (`cpu::lowerOnnxToLinalg`), the bufferization and LLVM
    pipelines of the compiler, runs it once with the MLIR ExecutionEngine
    and replaces those values by `onnx.Constant` ops. Folding therefore has
    exactly the numerics of the generated code. `Shape` and `Size` fold from
    their input's static type alone. Rounds repeat (shape inference in
    between) while a round makes new shape inputs constant.

    Results larger than `max-bytes` stay computed at run time; if lowering
    or JIT compilation fails the ops stay too: folding never fails the
    compile. Counts are recorded on the module as
    `kiln.report.fold-constants.*` for `kiln compile --report`.

    The pass lives with the providers because it links the CPU lowering
    (passes/ must not depend on providers/).
  }];
  let options = [
    Option<"maxBytes", "max-bytes", "int64_t", "64 << 20",
           "Largest folded result in bytes (kiln compile --fold-limit)">,
    Option<"maxRounds", "max-rounds", "unsigned", "32",
           "Fold rounds (one JIT each) at most; shape chains through many blocks (ShuffleNet) need one per block">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect", "::mlir::memref::MemRefDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::cf::ControlFlowDialect", "::mlir::LLVM::LLVMDialect",
    "::mlir::affine::AffineDialect", "::mlir::index::IndexDialect",
    "::kiln::KilnDialect"
  ];
}

def CpuVectorizeContractions : Pass<"kiln-cpu-vectorize-contractions", "::mlir::ModuleOp"> {
  let summary = "Tile and vectorize the CPU provider's f32 matmul and conv generics";
  let description = [{
    Runs after bufferization and before kiln-plan-memory. f32 linalg.generic
    ops on static memrefs whose body is `out + a * b` are recognized as
    matmuls (one reduction loop, any loop order, A or B transposed, batch
    dims possibly broadcast) or as 2-D group-1 convolutions (loops n, m, c,
    kh, kw, oh, ow as the CPU provider emits them). Matmuls become 2-D
    `linalg.matmul` / `matmul_transpose_a` / `matmul_transpose_b` ops on
    rank-reduced subviews (one scf.for per batch dim) accumulating into the
    same output buffer; convolutions become an im2col copy into a new
    scratch buffer (placed in the arena by kiln-plan-memory) and one such
    matmul per image, or, when that im2col matrix would pass 1 MiB, one
    im2col and matmul per block of output rows sized to stay in L2 (with no
    cache tiles, so that the k loop stays whole). A transform-dialect schedule built from the static
    shapes then tiles them (cache tiles that divide the shape for large
    problems, register tiles [8, 32, 1], or [8, 16, 1] where that leaves a
    smaller n remainder, as for 7x7 maps, or [1, 128, 1] for one or two
    rows; with 256-bit vectors [4, 16, 1] and [1, 64, 1], so that the
    accumulators fit AVX2's 16 registers), peels loops that have a
    remainder, vectorizes, hoists the accumulator tile out of the k loop and
    lowers the contractions to FMAs. 2-D depthwise convolutions (loops n, m,
    oh, kh, kw, ow) become vector loops instead: up to eight 16-lane chunks
    of output rows held in registers across the taps, one FMA per chunk and
    tap with the broadcast weight (every sw-th lane of a wider load for
    stride sw), row ends masked. 8-bit depthwise convs (ConvInteger's form:
    i32 sums of widened 8-bit data and weights) take the same loops in f32,
    exact while 255 * 128 * taps < 2^24: each channel's plane converted
    once as it is built, constant weights converted at compile time (an
    f32 global); the requantizing generic that reads their sums is applied to each
    chunk before it is stored, so the sums never reach memory and the
    output stays 8-bit. A fused activation right after (an
    elementwise epilogue) is applied to the accumulators before they are
    stored, where the k loop is not cache-tiled; likewise, a conv's
    accumulators start from its bias (or fill) in registers instead of from
    a pass that wrote it over the whole output first. Then, in a second schedule,
    elementwise generics and reductions over the last dims (parallel loops
    then reduction loops, static f32 operands read contiguously along the
    innermost loop or broadcast across it, a body of scalar arith/math that
    the vectorizer accepts) are tiled to one vector of up to 16 lanes along
    the innermost loop, the remainder peeled, and vectorized; those whose
    only run-time sizes are outer parallel loops (rows over a run-time
    batch) first become loops around static blocks of one row. Other bodies
    and element types stay on the naive loops.
  }];
  let options = [
    Option<"matmul", "matmul", "bool", "true", "Rewrite matmul-like generics">,
    Option<"conv", "conv", "bool", "true", "Rewrite convolutions (im2col + matmul; depthwise as vector loops)">,
    Option<"elementwise", "elementwise", "bool", "true", "Vectorize elementwise generics along their innermost loop">,
    Option<"vectorBits", "vector-bits", "int64_t", "512",
           "The target's vector register width: 512 (AVX-512, 32 registers) "
           "or 256 (AVX2, 16 registers) sizes the matmul register tiles">
  ];
  let statistics = [
    Statistic<"numAccumulatorsFromInit", "accumulators-from-init",
              "Convs whose accumulators start from the bias in registers">,
    Statistic<"numDirectConvs", "direct-convs",
              "Convs as tiles of positions x channels on the input in place">,
    Statistic<"numTransposedConvs", "transposed-convs",
              "Convs of small planes computed as patches x weights^T">,
    Statistic<"numRowGathers", "row-gathers",
              "Row gathers fused with elementwise ops as vector loops">,
    Statistic<"numSplitReductions", "split-min-max-reductions",
              "Whole-buffer min or max reductions split into chunks">,
    Statistic<"numPanelPrefetches", "panel-prefetches",
              "Register tiles' k loops prefetching their packed panels' next slice">,
    Statistic<"numEightBitDepthwise", "int8-depthwise",
              "8-bit depthwise convs as vector loops summing in f32">,
    Statistic<"numVectorAccumulators", "vector-accumulators",
              "Row reductions keeping a vector of partial results">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect"
  ];
}

def CpuIntegerContractions : Pass<"kiln-cpu-integer-contractions", "::mlir::ModuleOp"> {
  let summary = "8-bit matmuls and convs with constant weights on AVX-512 VNNI kernels";
  let description = [{
    Runs after bufferization, before kiln-cpu-vectorize-contractions. A
    matmul-like generic (MatMulInteger without zero points, as
    kiln-decompose-ops leaves it) of u8 activations A[..., M, K] by s8
    constant weights B[K, N] into i32 becomes a register-tiled loop nest of
    `vpdpbusd` (llvm.x86.avx512.vpdpbusd.512: four u8 x s8 products summed
    into each i32 lane): B is copied at compile time into panels of 16
    columns, four k values per lane, [N/16][K/4][16][4], the last panel
    padded with zeros; each tile of up to 6 rows x 4 panels keeps its
    accumulators in registers, broadcasting four bytes of A per row and k
    step. Leading dims of A and C fold into M (any M, also a run-time one);
    the column tiles are split across threads. K must be a multiple of 4.
    A B known only at run time (attention's products; B [K, N] or one per
    batch of A) is packed per batch into thread scratch in the same panel
    order (4 rows of 16 columns a step, one byte permutation), and threads
    take batches.
    A 2-D conv generic (ConvInteger without zero points or pads; loops n,
    m, c, kh, kw, oh, ow) of u8 data by s8 constant weights takes the same
    tile with the roles swapped: the weights' rows (k padded to whole
    steps) broadcast against patches packed at run time, per tile of 64
    output positions, into thread scratch in panel order. A panel's
    positions as up to 3 runs on output rows at stride 1 or 2 are loaded
    16 or 32 bytes per tap and merged by lane, other panels gather aligned
    dwords (never crossing a page); tables of each tap's and position's
    input offset are built at compile time. Small planes (few tiles) are
    packed first, then threads take tiles x blocks of output channels. A
    last panel of 1 to 4 positions (7 x 7, 14 x 14 planes) is computed as
    dot products of each weight row with those positions' patches instead
    (a panel would waste most of its 16 lanes; on AMX tiles, where a
    product costs little, it is a panel like the others).
    Accumulators start at 0 when C's zero fill is right before (it goes).
    The elementwise generic right after a conv that reads its result (the
    requantization, a residual Add fused in: per-channel values, tensors
    of C's shape) is applied to each accumulator vector before it is
    stored, into that generic's output; C is never written.
    With AMX-INT8 (option amx=1), kernels whose C starts at 0 run on AMX
    tiles instead: per 32 rows and pair of panels 2 x 2 accumulator tiles
    of 16 x 16 i32, fed 16 rows x 64 bytes of A and 16 steps of each panel
    a k chunk (tdpbusd / tdpbsud), k straight-line up to 15 chunks, else in
    blocks of 8 with the sums through a 32 x 32 scratch between them (MLIR
    19 cannot carry a tile through a loop), then each row's vectors stored
    as the VNNI kernel stores its accumulators. Every tile is 16 x 64
    bytes (LLVM 19 gives a tile register one shape per function): convs
    pad K to whole chunks with zero weights and take tiles from K >= 64
    with channels in whole tiles of 16; matmuls need K % 64 == 0; rows past
    the last tile of 16 stay on the VNNI kernel (a matmul of fewer known rows takes no
    tiles). The module gets kiln.amx_tiles (the runtime asks the OS for the
    tile state).
    Without VNNI but with AVX2 (options vnni=0 avx2=1), matmuls by constant
    weights run on vpmaddwd instead: B widened to s16 pairs at compile time
    [N/8][K/2][16], tiles of 6 rows x 2 panels of 8 i32 lanes, each tile's
    rows of A widened to s16 first; no pair sum saturates (255 * 127 * 2 <
    2^31; vpmaddubsw's s16 sums would, and are not used).
    Without VNNI (option vnni=0) otherwise, or for other shapes, the
    generic stays on the naive loops, exact in i32. `kiln compile
    --report`: int8_kernels, int8_amx_kernels, int8_amx_direct_convs,
    int8_epilogues, int8_depthwise_vnni.
    On AMX, a conv whose input channels fill 64-byte k chunks (c % 64 ==
    0), output channels whole tiles of 16, at stride 1 or 2, packs no
    patches (IntegerAmxConv.cpp): per image the input is relaid once as
    4-channel dwords, [c / 4][stride phase][h / sh][w / sw] (threads take
    channel quads), and each k chunk (one tap's 64 channels; the weights
    [m][kh][kw][c] at compile time) loads its tile of 16 quads x 16
    positions where it lies, the rows a quad apart. Positions run over
    the phase plane's whole width, so every tap is one offset; those past
    an output row's end are computed and dropped in the store, which
    moves each panel's kept lanes together (vpermd through a table; none
    where the plane is as wide as the output). A quantize and dequantize
    in the middle of the fused epilogue (before a residual Add) clamp the
    rounded value once, without adding and subtracting the zero point.
    With VBMI as well (option vbmi=1), 2-D depthwise convs of u8 data (the
    zero-point-padded copy) by constant s8 weights into i32 whose C starts
    at 0 run on a VNNI kernel too (IntegerDepthwise.cpp): per kernel row
    and group of 4 taps, one 64-byte load of the unpadded source row
    (masked inside the row) and one two-register byte permutation
    (vpermt2b) with a register of the pad value put the 4 bytes each of 16
    output positions of a row in their i32 lanes, and one vpdpbusd adds
    their products with the 4 weights broadcast; a plane of up to 64 bytes
    is one register, and a vector any 16 of its positions. Output rows
    whose windows reach the pad rows are unrolled, the others run in
    blocks of up to 8 vectors; the padded copy goes. The epilogue is
    applied in the stores as for convs; where it would store into the
    source itself, it gets a buffer of its own (the source's later
    readers read that). Other depthwise convs are left to
    kiln-cpu-vectorize-contractions (in f32).
  }];
  let options = [
    Option<"vnni", "vnni", "bool", "true",
           "The target has AVX-512 VNNI (vpdpbusd on 512-bit registers)">,
    Option<"amx", "amx", "bool", "false",
           "The target has AMX-INT8 (tile dot products of u8/s8 bytes)">,
    Option<"avx2", "avx2", "bool", "false",
           "Without VNNI, the target has AVX2 (vpmaddwd on s16 pairs)">,
    Option<"vbmi", "vbmi", "bool", "false",
           "With VNNI, the target has AVX-512 VBMI (vpermb: any byte of a "
           "register to any lane)">
  ];
  let statistics = [
    Statistic<"numKernels", "int8-kernels", "8-bit matmuls on VNNI kernels">,
    Statistic<"numDepthwise", "int8-depthwise-vnni",
              "8-bit depthwise convs on the VNNI depthwise kernel">,
    Statistic<"numAmxKernels", "int8-amx-kernels",
              "8-bit matmuls and convs on AMX tiles">,
    Statistic<"numAmxDirectConvs", "int8-amx-direct-convs",
              "8-bit convs on AMX tiles read from the relaid input in place">,
    Statistic<"numEpilogues", "int8-epilogues",
              "elementwise epilogues applied in 8-bit convs' stores">
  ];
  let dependentDialects = [
    "::mlir::amx::AMXDialect", "::mlir::arith::ArithDialect",
    "::mlir::LLVM::LLVMDialect", "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect", "::mlir::vector::VectorDialect"
  ];
}

def CpuBlockChannels : Pass<"kiln-cpu-block-channels", "::mlir::func::FuncOp"> {
  let summary = "Run conv chains on channel-blocked tensors (NCHWc, c = 16)";
  let description = [{
    Runs on tensors after kiln-fuse-elementwise, before bufferization, with
    vector-bits of 512 or more. A conv generic (loops n, m, c, kh, kw, oh,
    ow, no groups) on static f32 tensors with constant weights whose input
    and output channels are multiples of 16 or at least 24 (the last block
    then padded with zeros, as ONNX Runtime's NCHWc pads: the weights and
    bias padded with zeros at compile time, so padded channels hold 0 or,
    after an activation, finite values that meet zero weights; on padded
    blocks only elementwise ops that keep finite values finite run, and
    concats need whole blocks), its output started from a
    fill or a bias along the channels, its input maybe zero-padded by an
    insert_slice into a filled tensor, becomes a generic marked
    kiln.blocked_conv over [n, c / 16, h, w, 16] tensors (loops n, mb,
    oh, ow, mi, cb, kh, kw, ci; the weights read as they lie), the padding
    an insert_slice into a filled blocked tensor. An elementwise generic
    (parallel loops over [n, c, h, w], output from tensor.empty, no
    linalg.index) that reads a blocked value runs on blocked tensors too;
    its other operands are the same shape (made blocked), per-channel
    vectors ([c] expanded to [c / 16, 16]), per-image channel scales ([n,
    c, 1, 1] read at (n, c, 0, 0), a squeeze-and-excitation's, as [n, c /
    16, 16]) or constants; it is marked kiln.blocked_elementwise. A sum or
    max of a blocked value over its
    positions into [n, c] from a fill (a global pool) runs on the blocked
    value into [n, c / 16, 16] (marked kiln.blocked_global_pool), read back
    as [n, c]. A value enters
    the chain through a generic marked kiln.to_blocked and leaves it
    through one marked kiln.from_blocked (once, before its first reader
    outside the chain); kiln-cpu-vectorize-blocked runs all three.
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "int64_t", "512",
           "Vector register width in bits of the target CPU">
  ];
  let statistics = [
    Statistic<"numConvs", "blocked-convs", "Convs run on blocked tensors">,
    Statistic<"numPools", "blocked-pools", "Max and sum pools run on blocked tensors">,
    Statistic<"numConcats", "blocked-concats", "Channel concats of blocked tensors">,
    Statistic<"numGlobalPools", "blocked-global-pools",
              "Global sum and max pools of blocked tensors">,
    Statistic<"numElementwise", "blocked-elementwise",
              "Elementwise ops run on blocked tensors">,
    Statistic<"numReorders", "layout-reorders",
              "Reorders into or out of the blocked layout">
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect"];
}

def CpuVectorizeBlocked : Pass<"kiln-cpu-vectorize-blocked", "::mlir::ModuleOp"> {
  let summary = "Run blocked convs as register tiles and layout reorders as in-register transposes";
  let description = [{
    Runs after bufferization, before kiln-cpu-vectorize-contractions, on
    the module (the weights are packed into constant globals). A generic
    marked kiln.blocked_conv on static buffers becomes tasks of one output
    row of an image for two blocks of 32 output channels (one of 16 when
    the blocks are odd), each row in tiles of balanced widths, up to 9
    positions (12 on rows of at most 24, 14 with one block): per input block,
    kernel row and tap, each of the 16 input channels is one broadcast
    per position and one weight vector per output block, the weights
    packed at compile time as [mb][cb][kh][kw][ci][mi]. The accumulators
    start from the bias or the fill and go through the elementwise generic
    right after the conv (a fused activation, a residual Add: its other
    operands read at the same positions, per-channel ones per block), then
    are stored as whole vectors. A 3x3 conv at stride 1 (dilated or not)
    on two blocks of input and of output channels or more runs as Winograd
    F(2x2, 3x3) tiles instead where they cost less (4 products per output
    against 9, less the kernel rows on padding that the direct tiles
    skip): the input transform of each tile's 4x4 block, 16 matmuls on the
    same register tiles against G g G^T packed at compile time, the output
    transform with the bias and epilogue in the store (winograd=0: the
    direct tiles only). kiln.to_blocked and kiln.from_blocked generics run
    per image row as 16 x 16 transposes in registers. A generic marked
    kiln.blocked_global_pool (a sum or max over a blocked tensor's
    positions) folds each row of a block into a partial vector, then each
    block's partials in row order: the same order at any thread count.
    A generic marked kiln.blocked_elementwise that no kernel's store took
    (a squeeze-and-excitation's scale) runs as row tasks, a vector per
    position. Loops that only move data (reorders, global pools,
    elementwise ops) split from 16384 elements, a quarter of other loops'
    threshold: they read what the kernels' threads wrote.
    Tasks of the convs, windows, reorders and Winograd transforms run rows
    outer (a thread's share a band of rows across all channels, the band
    its producer wrote and its consumer reads), a conv with weights past
    256 KiB blocks outer (each thread reads its output blocks' weights
    alone).
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "int64_t", "512",
           "Vector register width in bits of the target CPU">,
    Option<"winograd", "winograd", "bool", "true",
           "Run 3x3 convs at stride 1 as Winograd F(2x2, 3x3) tiles">
  ];
  let statistics = [
    Statistic<"numConvs", "blocked-conv-kernels", "Blocked convs run as register tiles">,
    Statistic<"numWinograd", "winograd-convs", "Blocked 3x3 convs run as Winograd tiles">,
    Statistic<"numPools", "blocked-window-kernels",
              "Blocked pools and depthwise convs run on whole vectors">,
    Statistic<"numFused", "blocked-epilogues", "Elementwise ops fused into blocked convs' stores">,
    Statistic<"numReorders", "reorder-kernels", "Layout reorders run as transposes">,
    Statistic<"numGlobalPools", "blocked-global-pool-kernels",
              "Global pools of blocked tensors run as row partials">,
    Statistic<"numElementwise", "blocked-elementwise-kernels",
              "Elementwise ops on blocked tensors run as row tasks">
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect", "::mlir::vector::VectorDialect",
                           "::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect"];
}

def CpuUnshareFills : Pass<"kiln-cpu-unshare-fills", "::mlir::func::FuncOp"> {
  let summary = "Give each op that writes into a filled tensor a fill of its own";
  let description = [{
    Runs on tensors right before one-shot-bufferize. CSE merges identical
    linalg.fills of tensor.empty (the zeros a bias-free conv accumulates
    into, the pad value a padded input starts as: every conv of a shape
    shares one); bufferization then copies the one filled buffer for each
    op that writes into it, which costs a copy's read and write instead of
    a fill's write, and hides the fill from the kernels that start their
    accumulators from it (a DenseNet's bias-free 3x3 convs fell back from
    direct tiles to im2col). A fill (with its tensor.empty) with more than
    one use as a destination (a DPS init, an insert_slice's dest) is
    cloned right before each such user (where the kernels look for it);
    reads keep the original, which goes if none is left.
  }];
  let statistics = [
    Statistic<"numCloned", "cloned", "Fills cloned for a destination of their own">
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect"];
}

def CpuUnshareSliceSources : Pass<"kiln-cpu-unshare-slice-sources", "::mlir::func::FuncOp"> {
  let summary = "Give each tensor a concat inserts a tensor.empty of its own";
  let description = [{
    Runs on tensors right before one-shot-bufferize. A concat is a chain of
    tensor.insert_slice ops into a tensor.empty; its parts are produced by
    ops that write in place into a tensor.empty, which CSE merged with
    every other of the same shape (a SqueezeNet's two expand convs and the
    max pool before them share one), so bufferization gives them one buffer
    reused from part to part. For each insert of a contiguous static slice
    (unit dims, one partial dim, then whole dims: channels of one image),
    the tensor.empty at the root of its source's chain of DPS inits is
    cloned right before the op that writes into it, when it has other
    uses. Each part then has a buffer of its own, live until the concat
    copies it, which kiln-elide-slice-copies places inside the concat's.
  }];
  let statistics = [
    Statistic<"numCloned", "cloned", "tensor.empty ops cloned for a concat part">
  ];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

def CpuFuseRows : Pass<"kiln-cpu-fuse-rows", "::mlir::func::FuncOp"> {
  let summary = "Run a reduction over rows and the row-wise host ops after it as one loop over the rows";
  let description = [{
    Runs after bufferization and before kiln-cpu-vectorize-contractions. A
    host linalg.generic on static buffers that reduces over its last loops
    (a LayerNorm's row sums, a Softmax's row maxima) starts a chain; the
    generics right after it join while each reads and writes its rows
    only: its output rows (the first dim of extent above 1, at the same
    position and length for all) are a parallel loop, every buffer a
    chain op writes is read and written by the others at that position
    and no other (and through no other view), other operands are indexed
    by that loop as a plain dim or not at all, and bodies only compute.
    The all-parallel generic right before the reduction whose output the
    reduction reads (attention's scale and mask before a Softmax) joins
    at the chain's front under the same conditions, where its innermost
    dim is whole 16-lane vectors, unless an earlier chain took it.
    Allocations and inits (copies, fills) of buffers the chain has not
    touched yet that sit between them move before the chain. A chain of
    two ops or more becomes one scf.for over the rows whose iteration runs
    every op on its row's views (kiln-cpu-vectorize-contractions then
    vectorizes them as before), marked kiln.parallel when the whole has
    65536 units of work or more (iterationCost). Each row's ops keep their
    order, so results are the same as before and at any thread count; a
    row stays in cache from its sums to its normalized values.
  }];
  let statistics = [
    Statistic<"numChains", "chains", "Row-wise chains run as one loop">,
    Statistic<"numOps", "ops", "Ops in those chains">
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect", "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
}

def CpuVectorizeTransposes : Pass<"kiln-cpu-vectorize-transposes", "::mlir::func::FuncOp"> {
  let summary = "Transpose 32-bit buffers that move their innermost dim as 16x16 register tiles";
  let description = [{
    Runs after kiln-cpu-vectorize-contractions and before
    kiln-cpu-parallel-loops. A host linalg.transpose on static buffers of
    32-bit elements (unit inner stride on both sides) whose permutation
    moves the input's innermost dim (NCHW to NHWC, a detector head's
    [A, 85, H, W] to [A, H, W, 85], a ViT's [C, T] tokens to [T, C]) and
    whose two inner extents (the input's and the output's) are at least 4
    becomes loops over tiles of up to 16 x 16 elements: 16 contiguous
    vector loads along the input's inner dim, a transpose in registers,
    16 contiguous stores along the output's, instead of scalar loops whose
    reads or writes stride. Partial tiles at the edges take the same path
    with fewer rows or lanes (static sizes). The outermost loop of more
    than one iteration is marked kiln.parallel when the transpose has
    16384 elements or more (unless it is already inside a parallel loop);
    a transpose copies, so results do not depend on the thread count. Only
    with vector-bits of 512 or more (the tile is 16 lanes); device code is
    left alone.
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "int64_t", "512",
           "Vector register width in bits of the target CPU">
  ];
  let statistics = [
    Statistic<"numTransposes", "transposes", "Transposes run as register tiles">
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect", "::mlir::vector::VectorDialect",
                           "::mlir::arith::ArithDialect"];
}

def CpuVectorizeUpsample : Pass<"kiln-cpu-vectorize-upsample", "::mlir::ModuleOp"> {
  let summary = "Run nearest upsampling by integer factors and linear resizing as row loads, shuffles and gathers";
  let description = [{
    Runs after kiln-cpu-vectorize-contractions and before
    kiln-cpu-parallel-loops, on the module (the linear tables become
    constant globals). A host linalg.generic on static buffers of
    32-bit elements that copies its input to its output through
    `floordiv f` maps on the last dim and optionally the one before it
    (what the CPU provider emits for Resize and Upsample in nearest mode
    with integer scales: an FPN's or a YOLO neck's 2x), other dims as they
    are, becomes loops over the input rows: each 16-element chunk is
    loaded once, repeated f times by shuffles into f vectors, and stored
    into each of the output rows that repeat the input row. The outermost
    loop of more than one iteration is marked kiln.parallel when the output
    has 65536 elements or more (unless already inside a parallel loop).
    Only with vector-bits of 512 or more; device code is left alone.

    Also, with vector-bits of 256 or more, a generic marked
    kiln.linear_upsample (Resize in linear mode on the last axis or the
    last two: per axis, where the taps repeat with the phase o % f of an
    integer factor f, the factor and its phases' tap offsets and weights;
    else each output position's two input indices and weights, from the
    lowering's tables) on static f32 buffers: per image, an x pass over
    the input rows into a scratch plane, then each output row the weighted
    sum of two plane rows. With phases, the x pass loads each chunk's
    window of columns in two overlapping vector loads (or a column at a
    time, clamped at the row's edges) and picks each output vector's two
    taps from it by shuffles, weighed per phase, and the y pass clamps its
    rows to the plane; without, the x pass gathers the taps through the
    index table (a constant global [2][n]) and the y pass reads its rows
    and weights from the y tables. The source is the one non-constant
    buffer the generic's body loads, read as the output's shape over the
    axes' input sizes.
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "int64_t", "512",
           "Vector register width in bits of the target CPU">
  ];
  let statistics = [
    Statistic<"numUpsamples", "upsamples", "Upsampling copies run as repeated rows">,
    Statistic<"numLinearUpsamples", "linear-upsamples",
              "Linear upsamplings run as shuffled rows">
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect", "::mlir::vector::VectorDialect",
                           "::mlir::arith::ArithDialect"];
}

def CpuFillPadBorders : Pass<"kiln-cpu-fill-pad-borders", "::mlir::func::FuncOp"> {
  let summary = "Fill only the borders of a buffer whose interior a copy writes next";
  let description = [{
    Runs on buffers before kiln-cpu-parallel-loops. A padded input (a
    conv's, a pool's) is a linalg.fill of the whole buffer with the pad
    value, then a memref.copy of the source into a static, unit-stride
    subview of it: every interior element is written twice. Where nothing
    reads or writes the buffer (or a view of it) between the two, and the
    copy does not read it, the fill becomes fills of the slabs outside the
    subview: along each dim in turn, the ranges before and after the
    subview's, within the subview along the dims before it and whole along
    those after (a pad of H and W: rows above and below, then the columns
    beside the interior rows). A copy that covers the whole buffer drops
    the fill.
  }];
  let statistics = [
    Statistic<"numNarrowed", "narrowed", "Fills narrowed to the borders of a copy">,
    Statistic<"numSlabs", "slabs", "Border fills made">
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect", "::mlir::memref::MemRefDialect"];
}

def CpuParallelLoops : Pass<"kiln-cpu-parallel-loops", "::mlir::func::FuncOp"> {
  let summary = "Split the outer parallel loop of host linalg ops left on naive loops across threads";
  let description = [{
    Runs after kiln-cpu-vectorize-contractions (which splits the loops of
    what it vectorizes) and before kiln-plan-memory. A host linalg op on
    buffers that is still there (a transpose, a gather, a reduction over
    outer dims, an integer or otherwise unvectorized body) with at least
    65536 iterations, or run-time sizes, and a body that only computes and
    reads is tiled along its outermost parallel loop of more than one
    iteration: one iteration per tile, or runs of at least 16 when that
    loop is the innermost or comes after a reduction (so that reads stay
    contiguous). An outer loop of fewer than 8 trips takes the parallel
    loops inside it, short of the innermost, as one coalesced loop (a
    stem's pad fill over 3 channels: one range of its grain, 675 rows two).
    The tile loop is marked kiln.parallel with a grain of
    65536 iterations per thread; an op that only moves data (a transpose,
    copy or fill: its body a yield) splits from 16384 elements, a grain of
    16384 (it reads what other threads wrote). Reductions keep their order (only a
    parallel loop is split), so results are the same at any thread count.
    Ops in device code or already inside a parallel loop are left alone.
  }];
  let statistics = [
    Statistic<"numSplit", "split", "Linalg ops split across threads">
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect", "::mlir::affine::AffineDialect",
                           "::mlir::memref::MemRefDialect"];
}

def CpuDivideByConstant : Pass<"kiln-cpu-divide-by-constant", "::mlir::ModuleOp"> {
  let summary = "f32 divisions by a constant as a refined multiplication";
  let description = [{
    Runs on the host code before the lowering to LLVM. An f32 `arith.divf`
    whose divisor is one constant b (a scalar or a splat; finite, normal,
    with a normal reciprocal) becomes q0 = a * y with y = 1/b rounded,
    r = fma(-b, q0, a) and q = fma(r, y, q0): Markstein's correction,
    which gives the correctly rounded a / b, so outputs stay bit-identical
    (checked against division over every f32 in [0.001, 0.002), [1, 8)
    and [256, 512) and 20 million more in [-1e4, 1e4], for 12 divisors).
    Where the correction is NaN (an infinite a, or a * y past the largest
    float) q is q0: infinities and NaN come out as division gives them.
    That check is left out where the dividend is bounded well inside the
    range by construction (integers converted, finite constants, and sums,
    products, roundings, min/max and selects of them: an 8-bit epilogue's
    values), so it can be neither infinite nor NaN. QuantizeLinear divides
    by its scale in every 8-bit conv's and matmul's store; as a product
    and two FMAs, QDQ resnet18 ran 3-5% faster on an Intel Xeon VM.
  }];
  let statistics = [
    Statistic<"numDivisions", "divisions", "divisions by a constant rewritten">,
    Statistic<"numBounded", "bounded-divisions",
              "of them, dividends bounded well inside the range (no NaN check)">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::math::MathDialect"];
}

def ApproximateMath : Pass<"kiln-approximate-math", "::mlir::ModuleOp"> {
  let summary = "Polynomial erf, tanh and exp for host code, so that they vectorize";
  let description = [{
    Runs on the host code before the lowering to LLVM. f32 `math.erf`,
    `math.tanh` and `math.exp`, scalar or vector (GELU applied to a matmul's
    C tiles in registers, Softmax, Sigmoid/SiLU), become polynomial
    approximations instead of calls to libm's erff/tanhf/expf, which LLVM
    cannot vectorize: a vector erf stays one vector computation instead of
    one call per lane. erf is one rational function of the input clamped
    to [-4, 4] (at most 4.2e-7 off; MLIR's form picks coefficients per
    interval with 29 compares and selects a vector), tanh and exp MLIR's
    approximations (a few ulp): well inside ONNX's tolerances. The `math.fma` they use becomes
    LLVM's fma intrinsic (convert-math-to-llvm runs before
    convert-math-to-libm). Kernels of CUDA partitions keep libdevice's
    functions.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::math::MathDialect",
                           "::mlir::vector::VectorDialect"];
}

def ProfileKernels : Pass<"kiln-profile-kernels", "::mlir::ModuleOp"> {
  let summary = "Bracket each node of a host partition for the per-node profiler";
  let description = [{
    Runs after kiln-partition, before kiln-lower-partitions. In every
    partition whose provider runs on the calling thread (Provider::
    runsOnHostThread: the CPU), each op but constants gets a
    `kiln.profile_begin` before it and a `kiln.profile_end` after it. Their
    descriptor names the node (its first ONNX node, from the location), the
    op type and provider, and carries the event's args as ONNX Runtime's
    profiler writes them: `fused_nodes` (every node name the location
    holds: fusions fuse their locations), `input_type_shape`,
    `output_type_shape`, `output_size`, `parameter_size` (bytes of constant
    inputs) and `activation_size` (bytes of the others). kiln-plan-memory
    lowers the pairs. `kiln compile --no-profile-hooks` leaves this pass
    out.
  }];
  let dependentDialects = ["::kiln::KilnDialect"];
}

def ExpandBf16 : Pass<"kiln-expand-bf16", "::mlir::ModuleOp"> {
  let summary = "f32 <-> bf16 conversions in host code as integer ops";
  let description = [{
    Runs first in the lowering to LLVM (the compiled model's and constant
    folding's). LLVM turns an f32 -> bf16 `arith.truncf` into the
    instruction of CPUs with AVX512-BF16, which flushes denormals to zero,
    and elsewhere into a call of `__truncsfbf2`, which GCC 12's libgcc
    lacks, so a library compiled for x86-64 or x86-64-v3 did not load.
    MLIR's bf16 expansion (round to nearest-even, NaN stays NaN) gives one
    result on every CPU and needs no runtime function; `arith.extf` from
    bf16 becomes the shift it is. Kernels of CUDA partitions keep the
    NVPTX backend's conversions.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

#endif
