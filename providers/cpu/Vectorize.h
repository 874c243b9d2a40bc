//===- Vectorize.h - kiln-cpu-vectorize-contractions internals --*- C++ -*-===//
//
// What the parts of kiln-cpu-vectorize-contractions share: the pass and
// its matmul schedules (Vectorize.cpp), the convolutions through im2col
// (VectorizeConv.cpp) and the window loops of depthwise convs and max
// pools (VectorizeWindows.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PROVIDERS_CPU_VECTORIZE_H
#define KILN_PROVIDERS_CPU_VECTORIZE_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

#include <optional>

namespace kiln::vectorize {

// Work below which an op stays on one thread (no kiln.parallel loop), and
// the least a thread's share may have: a dispatch costs 0.3-1 us, a
// quarter million multiply-adds take 3-15. (At a million, small 1x1 convs
// of MobileNetV3 and LCNet ran on one thread: 2 threads 1.09x slower.)
constexpr int64_t kParallelMultiplyAdds = 1 << 18;
// A loop inside others is dispatched once per iteration of theirs: split
// it (rather than a loop around it with fewer ranges) when each dispatch
// covers this much.
constexpr int64_t kParallelDispatchMultiplyAdds = 1 << 19;
constexpr int64_t kParallelElements = 1 << 16;
// ... or, for other ops, this many iterations times their body's cost
// (iterationCost): one op on each of 65536 elements, an exp on each of
// 4096; a scalar loop's iteration counts kScalarIterationCost times a
// vector lane's.
constexpr int64_t kParallelWork = 1 << 16;
constexpr int64_t kScalarIterationCost = 8;
// ... or a contraction whose weights (N x K) pass 256 KiB: reading them is
// the cost.
constexpr int64_t kParallelWeights = 1 << 16;
// Ranges a split loop should have so that 2 to 8 threads get about even
// shares of it.
constexpr int64_t kParallelEvenTrips = 8;
// Weights up to this size stay in each core's L2 beside its activations:
// threads then split a contraction by rows (output positions), so that
// each reads the rows its producer wrote and writes those its consumer
// reads, rather than by weight panels, which makes every thread read the
// whole input (on a 2-vCPU Xeon VM a line another core wrote costs
// several times a local one).
constexpr int64_t kPerCoreWeightBytes = 256 * 1024;
// Larger weights: a matmul's threads take blocks of A's rows of about this
// size, which stay in L2 while every weight panel passes them (blocks of
// 64 or 256 rows of a 1024 x 1024 A, 256 KiB or 1 MiB, ran 6% and 1-3%
// slower on a Xeon with 2 MiB of L2), with k blocks of at most kRowBlockK.
constexpr int64_t kRowBlockABytes = 512 * 1024;
constexpr int64_t kRowBlockK = 1024;

// A matmul sized to stay in L2 (a conv's im2col block): no cache tiles.
inline constexpr llvm::StringLiteral kNoCacheTiles = "kiln.cv_no_cache_tiles";

/// Whether `t`'s elements are contiguous along its last dimension (a
/// strided layout whose last stride is 1; rank 0 counts).
inline bool unitInnerStride(mlir::MemRefType t) {
  llvm::SmallVector<int64_t> strides;
  int64_t offset;
  return t.getRank() == 0 ||
         (mlir::succeeded(mlir::getStridesAndOffset(t, strides, offset)) &&
          strides.back() == 1);
}
// A matmul reading B as packed panels (packedPanels): its own row tile.
inline constexpr llvm::StringLiteral kPanelB = "kiln.cv_panel_b";
// ... on a block of rows that stays in L2 while every panel passes it
// (panelRowBlock): at most k blocks of kRowBlockK, no other cache tiles.
inline constexpr llvm::StringLiteral kPanelRows = "kiln.cv_panel_rows";

/// True when the body is `yield(out + a * b)` on f32 (operands of the
/// add/mul in either order).
bool isMulAddBody(mlir::linalg::GenericOp g);
/// A host generic on buffers with two inputs and one init, all f32 (any
/// shape or layout).
bool isF32BufferGeneric(mlir::linalg::GenericOp g);
/// An f32 multiply-add generic on static buffers: what the schedules take.
bool isCandidate(mlir::linalg::GenericOp g);
bool hasIdentityLayout(mlir::Value v);

/// The loops of a matmul-like generic.
struct MatmulMatch {
  unsigned m, n, k;
  llvm::SmallVector<unsigned> batch; // out batch dims, in output order
  bool transA, transB;
};
/// k the one reduction loop, m the parallel loop of A and C only, n that of
/// B and C only, every other loop a batch loop (matrix dims at any position
/// of each operand).
std::optional<MatmulMatch> matchMatmul(mlir::linalg::GenericOp g);

/// A matrix view of `src` at the leading indices `lead` (its last two dims
/// whole).
mlir::Value matrixView(mlir::OpBuilder &b, mlir::Location loc, mlir::Value src,
                       llvm::ArrayRef<mlir::OpFoldResult> lead);
/// A 2-D matmul c += a * b (a or b transposed) marked for the schedule.
mlir::Operation *emitMatmul(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::Value a, mlir::Value bm, mlir::Value c,
                            bool transA, bool transB, int64_t &nextId);
/// `body` at every point of `extents` (loops only where an extent is not 1);
/// returns the outermost loop, or null when there is none.
mlir::Operation *
forEachBatch(mlir::OpBuilder &b, mlir::Location loc,
             llvm::ArrayRef<int64_t> extents,
             llvm::function_ref<void(mlir::OpBuilder &,
                                     llvm::ArrayRef<mlir::OpFoldResult>)>
                 body);
/// The cost of one iteration of `op`'s body, in simple ops: each op 1, an
/// exp, erf, tanh, log, pow or trigonometric op 16 (a polynomial of a dozen
/// ops or more), 4 more for a reduction; at least 1.
int64_t iterationCost(mlir::linalg::LinalgOp op);
/// Whether `op` is inside device code (a GPU launch, function or module).
bool inDeviceCode(mlir::Operation *op);
/// Whether `op` is inside a loop marked kiln.parallel.
bool inParallelLoop(mlir::Operation *op);
/// Up to 16 rows of 16 lanes of 32-bit elements (row r lane j) as 16
/// vectors of `rows.size()` lanes (vector j lane r), by register shuffles.
llvm::SmallVector<mlir::Value> transposeRows(mlir::OpBuilder &b,
                                             mlir::Location loc,
                                             llvm::ArrayRef<mlir::Value> rows);
/// Marks `loop` (if any) kiln.parallel, with the grain that gives each
/// thread at least `threshold` work at `perIteration` per iteration.
void markParallel(mlir::Operation *loop, int64_t threshold,
                  int64_t perIteration);
/// A copy of `g` (on buffers) at the builder's point on each operand's
/// view at [at, at + extent) along loop d (the whole of every other dim).
mlir::linalg::GenericOp copyAlong(mlir::OpBuilder &vb,
                                  mlir::linalg::GenericOp g, unsigned d,
                                  mlir::Value at, mlir::OpFoldResult extent);
/// `out` collapsed by `groups`.
mlir::Value collapsedOutput(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::Value out,
                            llvm::ArrayRef<mlir::ReassociationIndices> groups);
/// The register tile (rows, columns) of an M x N matmul's schedule for
/// vector registers of `vectorBits`, B read as packed panels or as it lies,
/// in a row block (kPanelRows) or not.
std::pair<int64_t, int64_t> registerTile(int64_t M, int64_t N,
                                         int64_t vectorBits,
                                         bool panelB = false,
                                         bool rowBlock = false);
/// Whether an M x N x K matmul's k loop is split into cache tiles (a
/// `rowBlock`, kPanelRows).
bool kCacheTiled(int64_t M, int64_t N, int64_t K, bool rowBlock = false);
/// Whether `op` sits in a k loop's body, beside its multiply-adds: a C tile
/// read or written there is a partial sum, not hoisted out of the k loop.
bool besideMultiplyAdds(mlir::Operation *op);

// How a conv's output starts (VectorizeWindows.cpp; used by both kinds).
/// How a conv's, depthwise conv's or pool's output starts before it
/// accumulates: a fill with a scalar (a max pool's -inf, a conv without
/// bias) or the bias broadcast over the channels (`op` writes it).
struct OutputInit {
  mlir::Value scalar, bias;
  mlir::Operation *op;
};
/// The op right before `g` that writes its whole output, if it is a fill or
/// a broadcast of a 1-D bias along output dim `biasDim` (a conv's channels,
/// dim 1 of n, c, h, w; a matmul's columns, its last dim).
std::optional<OutputInit> matchOutputInit(mlir::linalg::GenericOp g,
                                          unsigned biasDim = 1);

// Constant operands packed at compile time (VectorizePack.cpp).
/// The constant f32 global `v` reads (memref.get_global, or a whole view of
/// one, of a static, identity-layout constant with a dense value or a
/// dense_resource value whose blob is present), if any.
mlir::memref::GlobalOp constantGlobal(mlir::Value v);
/// The get_global of a private constant global `name` of `type` in
/// `module`, created with `values` (computed only then) and `alignment` the
/// first time: later calls with the same name share it.
mlir::Value derivedGlobal(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::ModuleOp module, llvm::StringRef name,
                          mlir::MemRefType type,
                          llvm::function_ref<mlir::DenseElementsAttr()> values,
                          mlir::IntegerAttr alignment);
/// The constant 2-D `bm` ([K, N], or [N, K] when `transB`) as panels of
/// `panel` columns, [N / panel][K][panel] (one global per weights and
/// width). `bm` must read a constantGlobal.
mlir::Value packedPanels(mlir::OpBuilder &b, mlir::Location loc, mlir::Value bm,
                         bool transB, int64_t panel);
/// Marks the globals of packedPanels that a matmul reads panel by panel,
/// each panel's tiles over all its rows (not in row blocks, kPanelRows):
/// prefetchPanels fetches their next slices.
inline constexpr llvm::StringLiteral kPanelsStreamed = "kiln.panels_streamed";
/// On a Resize's generic: linear resizing of the last axis ("x") and
/// maybe the one before ("y"), each a dictionary of its integer factor and
/// its phases' two taps (offsets from the input position o / factor,
/// clamped to the axis, and weights), or of its input size and each
/// output position's two taps (input indices and weights), which
/// kiln-cpu-vectorize-upsample runs as rows.
inline constexpr llvm::StringLiteral kLinearUpsample = "kiln.linear_upsample";
/// On the structured ops another provider's partition produced (they run
/// there, not on the CPU's kernels).
inline constexpr llvm::StringLiteral kDeviceOpAttr = "kiln.device";

// The channel-blocked layout (kiln-cpu-block-channels).
/// Channels per block: [n, c / 16, h, w, 16].
inline constexpr int64_t kBlockedLanes = 16;
/// On the generics that reorder [n, c, h, w] into blocks and back, and on
/// a conv over blocked tensors.
inline constexpr llvm::StringLiteral kToBlocked = "kiln.to_blocked";
inline constexpr llvm::StringLiteral kFromBlocked = "kiln.from_blocked";
inline constexpr llvm::StringLiteral kBlockedConv = "kiln.blocked_conv";
inline constexpr llvm::StringLiteral kBlockedWindow = "kiln.blocked_window";
/// On a sum or max over a blocked tensor's positions ([n, cb, h, w, 16]
/// into [n, cb, 16]: a global pool).
inline constexpr llvm::StringLiteral kBlockedGlobalPool =
    "kiln.blocked_global_pool";
/// On an elementwise generic over blocked tensors.
inline constexpr llvm::StringLiteral kBlockedElementwise =
    "kiln.blocked_elementwise";
/// Elements from which loops that mostly move data (transposes, copies;
/// the blocked layout's reorders, global pools and elementwise ops) split:
/// they read what the kernels' threads wrote, and on one thread the half
/// another core wrote costs several times its own (a 14x14x480 global
/// pool's sum took 3.2 us alone, 11 us after a conv on two threads).
inline constexpr int64_t kParallelMoveElements = 1 << 14;
/// Prefetches, in the register tiles' k loops over streamed packed panels
/// (kPanelsStreamed), the panels' next slice into L2; returns how many
/// loops. (Row blocks read panels from L2 or, the first pass, from L3: a
/// prefetch per k step cost a 1024 x 1024 x 1024 MatMul 7%.)
int64_t prefetchPanels(mlir::ModuleOp module);

// Convolutions through im2col (VectorizeConv.cpp).
int64_t convGroups(mlir::linalg::GenericOp g);
/// The strides and dilations of a 2-D conv generic without groups (loops
/// n, m, c, kh, kw, oh, ow; x read at (n, c, oh * sh + kh * dh, ow * sw +
/// kw * dw)), as the CPU lowers Conv and ConvInteger.
struct ConvMatch {
  int64_t sh, sw, dh, dw;
};
std::optional<ConvMatch> matchConv(mlir::linalg::GenericOp g);
/// The conv weights `w` [m, c, kh, kw] transposed at compile time into a
/// constant [c * kh * kw, m] global, or null when they are not a constant.
mlir::Value transposedWeights(mlir::OpBuilder &b, mlir::Location loc,
                              mlir::Value w);
bool convKCacheTiled(mlir::linalg::GenericOp g, int64_t groups);
mlir::Value rewriteConv(mlir::linalg::GenericOp g, int64_t groups,
                        int64_t &nextId);

// Elementwise ops and reductions (VectorizeElementwise.cpp).
inline constexpr llvm::StringLiteral kMark = "kiln.cv";
inline constexpr llvm::StringLiteral kId = "kiln.cv_id";
/// A host generic on buffers with one output and no linalg.index: what
/// the elementwise schedule and the blocks of run-time rows take.
bool isHostBufferGeneric(mlir::linalg::GenericOp g);
/// Whether `g` is an elementwise op or reduction the vector schedule takes.
bool isVectorizableElementwise(mlir::linalg::GenericOp g);
/// The run-time loops of an elementwise op or reduction that are outer
/// parallel loops over static inner loops; empty if none or another loop is
/// of run-time size.
llvm::SmallVector<unsigned> runtimeOuterLoops(mlir::linalg::GenericOp g);
/// `g` with its trailing loops folded into one when the innermost is short
/// (fewer than 64 iterations, not a multiple of 16) and every operand reads
/// them as contiguous trailing dims or broadcasts over them (a 7 x 7 plane
/// with per-channel scales becomes one loop of 49); else `g` itself.
mlir::linalg::GenericOp collapseTrailingLoops(mlir::linalg::GenericOp g);
/// A min or max of a whole static buffer into a scalar (a
/// DynamicQuantizeLinear's range) as partials of up to 16 chunks, which
/// threads split, then one reduction of the partials: the same result in
/// any order. Returns 1 if `g` was split (and erased), else 0.
int64_t splitMinMaxReduction(mlir::linalg::GenericOp g);
/// A row gather fused with elementwise ops (an embedding lookup and what
/// follows it), static, as loops over rows and 16-lane vectors of each
/// row: the gathered row read contiguously, the indices computed once per
/// row. (The elementwise schedule takes no linalg.index: it stayed a
/// scalar loop, 6.5 ns an element in QDQ BERT's embedding.) True if done.
bool rewriteRowGather(mlir::linalg::GenericOp g);
/// The transform script for one marked elementwise generic.
std::string elementwiseScheduleFor(mlir::linalg::LinalgOp op, int64_t id,
                                   int64_t vectorBits);
/// Vectorized sums, minima and maxima keep a vector of partial results
/// across their loop, reduced across lanes once after it; returns how many.
int64_t vectorAccumulators(mlir::Operation *root);
/// The transform step marking a loop handle kiln.parallel.
std::string annotateParallel(const std::string &handle);
/// The buffer `v` is a view of (itself if not a view).
inline mlir::Value rootOf(mlir::Value v) {
  while (auto view = v.getDefiningOp<mlir::ViewLikeOpInterface>())
    v = view.getViewSource();
  return v;
}
/// Whether an elementwise generic's body is scalar arith/math only (one
/// int or float result each) whose captured values all exist before `at`,
/// where a contraction applies it to its tiles.
bool isScalarBodyBefore(mlir::Block &body, mlir::Operation *at);
/// Erases buffer `buf` when it is an allocation that nothing reads (only
/// fills and deallocs use it).
void eraseIfWriteOnly(mlir::Value buf);
/// `v` broadcast to a vector of `shape` unless it is a vector (or the
/// shape is empty).
mlir::Value asVectorOf(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                       llvm::ArrayRef<int64_t> shape);
/// One scalar op of one result recreated on vectors of `shape`, its
/// operands looked up in `map` (scalars broadcast); maps the result.
void widenOp(mlir::OpBuilder &b, mlir::Location loc, mlir::Operation &op,
             mlir::IRMapping &map, llvm::ArrayRef<int64_t> shape);
/// The scalar arith/math body of an elementwise generic recreated on
/// vectors of `shape` (its arguments already mapped in `map`); constants
/// stay scalars, broadcast where used; an empty shape keeps scalars.
/// Returns the yielded value. `special` (may be null) may widen an op
/// itself (mapping its result) and return true.
mlir::Value
widenBody(mlir::OpBuilder &b, mlir::Location loc, mlir::Block &body,
          mlir::IRMapping &map, llvm::ArrayRef<int64_t> shape,
          llvm::function_ref<bool(mlir::OpBuilder &, mlir::Operation &,
                                  mlir::IRMapping &)>
              special = nullptr);
/// The elementwise generic right after contraction `g` that reads only its
/// result (a fused activation), which may be applied to its tiles before
/// they are stored; its output's allocation moved before `g`.
mlir::linalg::GenericOp findEpilogue(mlir::linalg::GenericOp g);
/// Whether the tiles of contraction `g` may be stored through epilogue `e`
/// into its output (nothing else reads g's output after it, unless `e`
/// writes in place); moves e's output allocation before `g`.
bool placeEpilogueOutput(mlir::linalg::GenericOp g, mlir::linalg::GenericOp e);

/// A 2-D conv (no groups, not 1x1 stride 1) on AVX-512 whose channels fill
/// panels of 32, as register tiles of 8 output positions x 32 channels
/// reading the input in place (no im2col), stored transposed into the
/// output through the fused activation (VectorizeDirectConv.cpp). True if
/// rewritten (`g` erased).
bool rewriteDirectConv(mlir::linalg::GenericOp g, int64_t vectorBits);
/// Whether a conv of these sizes is one the direct tiles take (constant
/// weights and static planes aside): the lowering asks it too, to keep the
/// conv's loops for them when only the batch is of run-time size.
bool directConvShape(int64_t vectorBits, int64_t groups, int64_t m, int64_t c,
                     int64_t kh, int64_t kw, int64_t sh, int64_t sw,
                     int64_t positions);

/// A conv whose output plane is a few positions past whole vectors (7x7:
/// 49 = 6 x 8 + 1, a scalar column that cost a third of its time) and
/// whose channels are whole vectors, as patches x weights^T: rows of
/// positions, columns of channels (the weights packed as B), then added
/// to the output transposed. True if rewritten (`g` erased).
bool transposeSmallConv(mlir::linalg::GenericOp g, int64_t vectorBits);

/// A conv (through im2col) whose matmuls start their accumulators from its
/// output's init (OutputInit) in registers rather than from the buffer the
/// init wrote: `c` is the buffer the matmuls accumulate into, `end` a
/// marker after the conv's code.
struct AccumulatorInit {
  OutputInit init;
  mlir::Value c;
  mlir::Operation *end;
  /// The bias runs along C's last dim, the tiles' lanes (a matmul's
  /// columns), not along dim 1 with the lanes over positions (a conv's).
  bool alongLanes = false;
};
/// Before rewriteConv: the conv's init and an end marker, where its
/// matmuls can start from the init.
std::optional<AccumulatorInit> markAccumulatorInit(mlir::linalg::GenericOp g,
                                                   int64_t groups);
/// The same for a matmul `g` (before rewriteMatmul) whose C starts as
/// zeros (a copy of a zero-filled buffer, or that buffer itself:
/// init.scalar and init.bias both null), a fill or a bias broadcast along
/// its columns, unless its k loop is split into cache tiles (partial
/// sums).
std::optional<AccumulatorInit>
markMatmulAccumulatorInit(mlir::linalg::GenericOp g, const MatmulMatch &mm,
                          int64_t vectorBits);
/// After the schedule: replaces the matmuls' reads of C's first value by
/// the bias or fill, and removes the marker. True if done: the init op may
/// then go (once nothing anchors on it).
bool startAccumulatorsFromInit(const AccumulatorInit &a);

// Depthwise convs and max pools (VectorizeWindows.cpp).
struct DepthwiseMatch {
  int64_t sh, dh, sw, dw;
};
std::optional<DepthwiseMatch> matchDepthwise(mlir::linalg::GenericOp g);
/// A max pool, or an average pool's sums (f32).
std::optional<DepthwiseMatch> matchPool(mlir::linalg::GenericOp g);
/// A window op's input that is a padded copy of another buffer: an
/// allocation filled with the pad value, the source copied into its
/// interior (the last two dims), read by `g` alone. Each thread then pads
/// its own channel planes in a small scratch buffer instead.
struct PaddedSource {
  mlir::Value src, pad;
  int64_t top = 0, left = 0;
  llvm::SmallVector<mlir::Operation *> ops; // to erase, in order
  // A filled buffer the padded copy started as a copy of (bufferization
  // shares one fill between the convs that pad alike); null if none.
  mlir::Value filled;
  // g's output is the source's buffer: each channel must be read whole
  // before its first output row is stored.
  bool inPlace = false;
};
/// x of `g` as a padded copy (see PaddedSource), if it is one. With
/// `planesAnyway` (the kernel copies its planes anyway), also where the
/// padded copy would be made once for several convs or in place.
std::optional<PaddedSource> matchPaddedSource(mlir::linalg::GenericOp g,
                                              bool planesAnyway);
/// The buffers a window op's rewrite writes: g's output, and the outputs of
/// the linalg op right after it (an epilogue fused into the stores).
llvm::SmallVector<mlir::Value> writtenWith(mlir::linalg::GenericOp g);
/// Whether any of `written` is a view of `src`'s buffer (bufferization
/// reused the source's): rows stored early would overwrite source rows
/// still to be read.
bool writesInto(llvm::ArrayRef<mlir::Value> written, mlir::Value src);
/// Erases the padded copy `x` of `ps.src` (and its fill, copy and views)
/// once the window op that alone read it reads the source instead.
void erasePaddedSource(const PaddedSource &ps, mlir::Value x);
/// max(acc, x) of f32 max pools: NaNs propagate, either zero may come out.
mlir::Value poolMaxF32(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                       mlir::Value acc);
/// The same for an f32 depthwise conv stepping 2 columns whose output
/// starts as a fill or a bias: returns the op before the new loops (null:
/// none), or nothing when `g` is not one.
std::optional<mlir::Operation *>
rewriteStridedDepthwise(mlir::linalg::GenericOp g, const DepthwiseMatch &dm,
                        int64_t vectorBits);
/// Rewrites `g`, an undilated f32 max pool whose columns step by 2 (padded
/// or not) on 512-bit registers, into row loops that take each source
/// row's max over the window's columns once (VectorizeStridedWindows.cpp);
/// false, and nothing changed, for any other pool.
bool rewriteStridedMaxPool(mlir::linalg::GenericOp g, const DepthwiseMatch &dm,
                           int64_t vectorBits);
/// The max of a max pool's body on `t` (f32, or an 8-bit integer with the
/// signedness the body's max has), or the add of an f32 average pool's;
/// null if it is neither.
mlir::Operation *poolReduce(mlir::Block &body, mlir::Type t);
bool isRuntimeDepthwise(mlir::linalg::GenericOp g);
/// A depthwise conv of 8-bit data by 8-bit weights into i32 (ConvInteger's
/// form, static channels and taps) whose sums f32 holds exactly.
bool isEightBitDepthwise(mlir::linalg::GenericOp g);
struct ConvEpilogue;
/// `vectorBits`: the target's vector registers (chunks kept in them).
/// `epilogue` (8-bit convs): applied to each chunk before it is stored, into
/// its own output (the caller erases it). Returns the op before the new
/// loops (null: none).
mlir::Operation *rewriteDepthwise(mlir::linalg::GenericOp g,
                                  const DepthwiseMatch &dm, int64_t vectorBits,
                                  bool isPool = false,
                                  const ConvEpilogue *epilogue = nullptr);

// 8-bit convs (IntegerContractions.cpp).
/// For a body `yield(out + ext(x) * ext(w))` into i32 of 8-bit x and w
/// (the product's operands in either order): whether x's and w's
/// extensions are unsigned.
std::optional<std::pair<bool, bool>> eightBitMulAdd(mlir::linalg::GenericOp g);
/// The constant 8-bit weights `w` reads (a constant global) as f32,
/// converted at compile time (one global per weights); null if w is not
/// one.
mlir::Value floatWeights(mlir::OpBuilder &b, mlir::Location loc, mlir::Value w,
                         bool isUnsigned);
/// An elementwise generic right after an 8-bit conv that reads its i32
/// result C (the requantization: zero-point correction, bias, scale,
/// rounding, clamp; a residual Add fused in), applied to each accumulator
/// vector before it is stored, into the generic's own output: C is never
/// written, and the 8-bit result leaves the registers once.
struct ConvEpilogue {
  mlir::linalg::GenericOp op;
  /// Per input: C, a tensor of C's shape read alike, or one value per
  /// output channel (or per image and channel; or one for all).
  enum Kind { Acc, Full, PerChannel };
  llvm::SmallVector<Kind> kinds;
};
/// How C of `g` starts when it holds zeros, which g's rewrite makes
/// redundant (every element of C is stored): the op right before g that
/// sets it to 0 (a fill, or a copy of a zero-filled buffer, as
/// bufferization shares one zero fill between convs), to erase; or null
/// when C itself is that shared buffer (the fill stays for its copies).
struct ZeroInit {
  mlir::Operation *erase = nullptr;
};
std::optional<ZeroInit> zeroInitBefore(mlir::linalg::GenericOp g,
                                       mlir::Value c);
/// The epilogue of 8-bit conv `g` writing C = `c`, if the next reader of C
/// is one (the ops between can run after it); moves what it uses before g.
std::optional<ConvEpilogue> matchConvEpilogue(mlir::linalg::GenericOp g,
                                              mlir::Value c);
/// `ep`'s body on `acc` (a vector, or one value) of output channel
/// `channel` of image `image`, at the epilogue's location (the profiler
/// then lists its node among the kernel's); `full(i, type)` reads input
/// i of kind Full where acc lies.
mlir::Value
convEpilogueValue(mlir::OpBuilder &b, const ConvEpilogue &ep, mlir::Value acc,
                  mlir::Value image, mlir::Value channel,
                  llvm::function_ref<mlir::Value(unsigned, mlir::Type)> full);

} // namespace kiln::vectorize

#endif
