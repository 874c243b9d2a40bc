//===- BlockedKernels.h - kernels of the channel-blocked layout -*- C++ -*-===//
//
// What the kernels of kiln-cpu-vectorize-blocked share: the ops a blocked
// conv's output starts from and ends with (its bias or fill, the fused
// epilogue) and the task loops. VectorizeBlocked.cpp runs direct convs,
// pools and reorders; VectorizeWinograd.cpp 3x3 convs as Winograd tiles.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PROVIDERS_CPU_BLOCKEDKERNELS_H
#define KILN_PROVIDERS_CPU_BLOCKEDKERNELS_H

#include "providers/cpu/Vectorize.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

#include <optional>

namespace kiln::blocked {

using namespace mlir;

inline constexpr int64_t kLanes = vectorize::kBlockedLanes;

Value idx(OpBuilder &b, Location loc, int64_t v);
/// A static f32 buffer whose innermost stride is 1.
bool staticBuffer(Value v);
/// The coefficient of loop `loop` in result `result` of `map` (linear).
int64_t coefficient(AffineMap map, unsigned loop, unsigned result);
/// Splits task index `t` into the digits of `extents` (outermost first).
SmallVector<Value> digits(OpBuilder &b, Location loc, Value t,
                          ArrayRef<int64_t> extents);
/// A task's image, channel block (or block group) and row, rows outer
/// (`rowsOuter`) or blocks outer; returned as {image, block, row}.
SmallVector<Value> taskDigits(OpBuilder &b, Location loc, Value t, int64_t n,
                              int64_t blocks, int64_t rows, bool rowsOuter);
/// A loop over `count` tasks marked parallel for `perTask` work each.
scf::ForOp taskLoop(OpBuilder &b, Location loc, int64_t count,
                    int64_t threshold, int64_t perTask);

/// How a blocked conv's output starts: the op right before it (allocs and
/// views aside) that fills it or broadcasts a [mb, 16] bias into it.
struct BlockedInit {
  Operation *op;
  Value scalar, bias;
};
std::optional<BlockedInit> matchBlockedInit(linalg::GenericOp g);
/// The elementwise generic right after blocked conv `g` that reads its
/// output at each position (a fused activation, a residual Add), its other
/// operands buffers of the output's shape, per-channel [mb, 16] ones or
/// constants, all written before `g`; its output's allocation moved
/// before `g`.
linalg::GenericOp findBlockedEpilogue(linalg::GenericOp g);
/// The rows [top, end) of blocked conv `g`'s padded input that hold its
/// source (kiln.blocked_conv's value; all of them without one): kernel
/// rows reading only the others read padding.
std::pair<int64_t, int64_t> sourceRows(linalg::GenericOp g);
/// Erases what a blocked kernel replaced: `g`, the op starting its output
/// and its epilogue (counted in `fused`), then g's own output buffer when
/// the epilogue's took its place.
void eraseRewritten(linalg::GenericOp g, Operation *init,
                    linalg::GenericOp epilogue, int64_t &fused);
/// Epilogue `e` of a blocked kernel whose output `out` holds `v` at `pos`
/// (block `block`): its other operands read at the same position (same
/// shape), per block ([mb, 16]) or as scalars (constant indices).
Value applyEpilogue(OpBuilder &ib, Location loc, linalg::GenericOp e, Value out,
                    Value v, ValueRange pos, Value block);

/// Constant global `global`'s f32 values repacked by `pack` (the values,
/// the packed buffer) into a derived constant global of `shape`, named
/// after it with `suffix`, 64-byte aligned; packed once per name.
Value packedWeights(
    OpBuilder &b, Location loc, memref::GlobalOp global, StringRef suffix,
    ArrayRef<int64_t> shape,
    function_ref<void(ArrayRef<float>, MutableArrayRef<float>)> pack);

/// Rewrites blocked conv `g` when it is a 3x3 conv at stride 1 on enough
/// channels: Winograd F(2x2, 3x3) tiles (VectorizeWinograd.cpp).
bool rewriteWinogradConv(linalg::GenericOp g, int64_t &fused);
/// Rewrites a kiln.blocked_window generic (a max or sum pool, a depthwise
/// conv) as row tasks, blocks outer where its input is in `blocksOuter`
/// (its output then added there) (VectorizeBlockedWindows.cpp).
bool rewriteBlockedWindow(linalg::GenericOp g, int64_t &fused,
                          llvm::DenseSet<mlir::Value> &blocksOuter);
/// Rewrites a kiln.blocked_global_pool generic as row partials folded in a
/// fixed order, its tasks rows outer as its input's producer split them
/// (`rowsOuter`) or blocks outer (VectorizeBlockedWindows.cpp).
bool rewriteBlockedGlobalPool(linalg::GenericOp g, bool rowsOuter);

} // namespace kiln::blocked

#endif
