//===- BlockChannelsMatch.h - what kiln-cpu-block-channels blocks -*- C++
//-*-===//
//
// The matchers of kiln-cpu-block-channels (BlockChannelsMatch.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PROVIDERS_CPU_BLOCKCHANNELSMATCH_H
#define KILN_PROVIDERS_CPU_BLOCKCHANNELSMATCH_H

#include "providers/cpu/Vectorize.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <functional>
#include <optional>

namespace kiln::blocking {

using namespace mlir;

/// The conv generic `g` (no groups, constant weights, static f32, channels
/// in whole blocks) as parts: its unpadded input, the zero padding around
/// it (top, left), and how its output starts.
struct ConvParts {
  vectorize::ConvMatch cm{1, 1, 1, 1};
  Value src;
  int64_t top = 0, left = 0;
  RankedTensorType paddedType;
  Value bias;       // 1-D, or null
  Value fillScalar; // when no bias
  Value padValue;   // null: not padded
  // An input of fewer than 16 channels (a stem's 3), read as it lies.
  bool plain = false;
};

/// A window op's input: `src` as it is, or inserted at (top, left) into a
/// tensor filled with `padValue`, channels whole.
struct PaddedInput {
  Value src;
  int64_t top = 0, left = 0;
  Value padValue; // null: not padded
};

/// The strides and dilations of a window generic on tensors of 6 loops,
/// with two inputs, whose x map is (n, c, oh * sh + kh * dh, ow * sw + kw *
/// dw) for loops n = 0, c = 1 and oh, kh, ow, kw at the given positions
/// (the kernel loops the reductions).
struct WindowLoops {
  int64_t sh, sw, dh, dw;
};

/// A pool or depthwise conv: its strides and dilations, its input (maybe
/// padded) and how its output starts.
struct WindowParts {
  int64_t sh = 1, sw = 1, dh = 1, dw = 1;
  PaddedInput in;
  RankedTensorType paddedType;
  Value bias, fillScalar; // (a pool: its fill)
  bool depthwise = false;
};

/// A static f32 [n, c, h, w] tensor type whose channels fill blocks, the
/// last maybe padded (from 24 channels on).
bool blockable(Type t);
/// Whether `t`'s channels fill whole blocks (no padding).
bool wholeBlocks(Type t);
/// [n, c, h, w] as [n, c / 16 (rounded up), h, w, 16].
RankedTensorType blockedType(RankedTensorType t);
/// Whether `g`'s body gives finite results for finite operands.
bool finiteOnFinite(linalg::GenericOp g);
/// Whether constant weights `w` can be read (to pad them).
bool readableWeights(Value w);
/// Constant weights [m, c, ...] with m and c (when `padInputs`) padded
/// with zeros to whole blocks; `w` itself when whole.
Value paddedWeights(OpBuilder &b, Value w, bool padInputs);
SmallVector<utils::IteratorType> parallelIters(unsigned n);
std::optional<PaddedInput> matchPaddedInput(Value x, bool wholeBlocks = true);
/// How a conv's output starts: from a 1-D bias along the channels, or a
/// fill or splat; false if neither.
bool matchOutputStart(Value out, Value &bias, Value &fillScalar);
std::optional<ConvParts> matchConvParts(linalg::GenericOp g);
std::optional<WindowLoops> matchWindowLoops(linalg::GenericOp g, unsigned oh,
                                            unsigned kh, unsigned ow,
                                            unsigned kw);
std::optional<WindowParts> matchPoolParts(linalg::GenericOp g);
std::optional<WindowParts> matchDepthwiseParts(linalg::GenericOp g);
/// A body builder that clones `g`'s body.
std::function<void(OpBuilder &, Location, ValueRange)>
sameBody(linalg::GenericOp g);
/// Whether `map` reads a per-channel operand `v` ([c], [c, 1, 1]).
bool perChannelMap(AffineMap map, Value v, int64_t channels);
/// Whether `map` reads a per-image, per-channel operand `v` [n, c, 1, 1].
bool perImageChannelMap(AffineMap map, Value v, RankedTensorType out);
/// Whether `g` is a global sum or max pool [n, c, h, w] -> [n, c].
bool isGlobalPool(linalg::GenericOp g);
/// The add or max a pool's body yields that takes the accumulator (its
/// last argument) once, and the value it folds in.
struct PoolFold {
  Operation *fold;
  Value term;
};
std::optional<PoolFold> matchPoolFold(Block &body);

} // namespace kiln::blocking

#endif
