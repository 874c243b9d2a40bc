//===- IntegerKernels.h - 8-bit register and tile kernels -------*- C++ -*-===//
//
// The inner kernels of kiln-cpu-integer-contractions: register tiles of
// u8 x s8 products into i32 on AVX-512 VNNI (vpdpbusd), AMX tiles and AVX2
// (vpmaddwd), and the packed weights they read. IntegerContractions.cpp
// matches the products and packs the operands; these emit the loops.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PROVIDERS_CPU_INTEGERKERNELS_H
#define KILN_PROVIDERS_CPU_INTEGERKERNELS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

#include <functional>
#include <optional>

namespace kiln::vectorize {
struct ConvEpilogue;
struct PaddedSource;
} // namespace kiln::vectorize

namespace kiln::int8 {

using namespace mlir;

inline constexpr int64_t kLanes = 16; // i32 lanes of a 512-bit register
inline constexpr int64_t kRows = 6;   // rows of A per register tile
inline constexpr int64_t kPanels = 4; // 16-column panels per register tile
inline constexpr llvm::StringLiteral kVpdpbusd = "llvm.x86.avx512.vpdpbusd.512";
// A conv's last panel with at most this many positions goes as per-position
// dot products instead (kPanels x 16 lanes would mostly compute nothing).
inline constexpr int64_t kTailPositions = 4;
// AMX: accumulator tiles of 16 rows x 16 i32 columns, up to 2 x 2 of them
// (with two tiles of A and two of B, the 8 tile registers); a k chunk is
// 16 steps (64 bytes of a row of A, 16 rows of a panel).
inline constexpr int64_t kAmxTileRows = 16;
inline constexpr int64_t kAmxRows = 2 * kAmxTileRows;
inline constexpr int64_t kAmxSteps = 16;
// k chunks per straight-line block. MLIR 19's AMX lowering cannot carry a
// tile through a loop (its phi would take the LLVM array type, not
// x86_amx), so the accumulators go through memory between blocks.
inline constexpr int64_t kAmxChunksPerBlock = 8;
// AVX2 (no VNNI): vpmaddwd multiplies 16 s16 pairs and adds each pair
// into an i32 lane, 8 lanes: A's u8 and B's s8 widened to s16 first, so no
// sum saturates (255 * 127 * 2 < 2^31; vpmaddubsw's s16 pair sums would).
// Register tiles of 6 rows x 2 panels of 8 columns (12 of the 16 ymm).
inline constexpr int64_t kLanes8 = 8;
inline constexpr int64_t kPanels8 = 2;
inline constexpr llvm::StringLiteral kVpmaddwd = "llvm.x86.avx2.pmadd.wd";

/// Whether the kernels run on AMX tiles, and how many do.
struct AmxTiles {
  bool enabled;
  int64_t kernels = 0;
  int64_t zeroTags = 0; // Kernel::zeroTags
  int64_t directConvs = 0; // of the kernels, direct convs
  /// A kernel whose C starts at 0 (`zeroInit`) takes the tiles.
  bool use(bool zeroInit) {
    kernels += enabled && zeroInit;
    return enabled && zeroInit;
  }
};

/// Stores a finished accumulator (builder, location, vector or value,
/// row, first column, lane mask or null): a fused epilogue's store.
using StoreHook =
    std::function<void(OpBuilder &, Location, Value, Value, Value, Value)>;

/// The operands of one register-tiled 8-bit product C[rows, cols] +=
/// sum over k steps of bcast[row, 4 bytes] x vec[panel, step, 16 x 4 bytes]:
/// for a MatMul the rows are A's (u8) and the panels B's (s8, packed at
/// compile time); for a Conv the rows are the weights (s8) and the panels
/// the patches (u8, packed at run time), the columns output positions.
struct Kernel {
  Value bcast, vec, c;
  int64_t steps;
  bool bcastUnsigned;
  // C holds zeros (its fill goes): the accumulators start at 0, not from C.
  bool zeroInit = false;
  // Stores a finished accumulator (row, first column, lane mask or null)
  // in C's stead: a fused epilogue's. Null: stored into C.
  StoreHook store = nullptr;
  // On AMX tiles (only with zeroInit: the tiles start at 0); `zeroTags`
  // numbers the amx.tile_zero ops apart (see emitAmxTile).
  bool amx = false;
  int64_t *zeroTags = nullptr;
  // On AVX2's vpmaddwd: `vec` holds s16 pairs [N/8][K/2][16], `wide` is
  // scratch for a tile's rows of A widened to s16 ([kRows][K rounded up
  // to 16]; set by emitColumns).
  bool avx2 = false;
  Value wide = nullptr;
  // On AMX with A (constant weights) stored as whole tiles, each 16 rows
  // of one k chunk 1 KB of its own: [rows / 16][bcastTiles chunks][16][64]
  // (bcast viewed as [rows / 16 * chunks * 16][64]). 0: A is [rows][K].
  int64_t bcastTiles = 0;
  // On AMX with B read where it lies (the direct conv's input, no packed
  // `vec`): the tile of panel `panel` at step `step` (a multiple of 16).
  std::function<Value(OpBuilder &, Location, Value panel, Value step)> amxB =
      nullptr;
  // Where panel `panel`'s accumulator goes when its lanes are not C's
  // consecutive columns: permutes `acc` and sets the first column and the
  // lane mask (the direct conv's positions past a row's end dropped).
  std::function<void(OpBuilder &, Location, Value panel, Value &acc, Value &col,
                     Value &mask)>
      remap = nullptr;
};

/// B [K][N] as vpdpbusd reads it: panels of 16 columns, each k step four
/// k values of a column side by side, [N/16][K/4][16][4], zero-padded.
Value packedWeights(OpBuilder &b, Location loc, memref::GetGlobalOp get,
                    ArrayRef<int8_t> w, int64_t k, int64_t n);

/// B [K][N] (s8) as vpmaddwd reads it, widened to s16: panels of 8
/// columns, each k step two k values of a column side by side,
/// [N/8][K/2][8][2], zero-padded.
Value packedWeights16(OpBuilder &b, Location loc, memref::GetGlobalOp get,
                      ArrayRef<int8_t> w, int64_t k, int64_t n);

/// Rows [rowStart, rowEnd) of the panels: tiles of kRows rows (fewer when
/// `staticRows`, the count when known, is smaller), then the rest: one
/// tile when the count is known, else single rows. With kn.amx, tiles of
/// 32 and 16 rows on AMX first; with kn.avx2, the vpmaddwd kernel.
void emitColumns(OpBuilder &b, Location loc, const Kernel &kn, Value rowStart,
                 Value rowEnd, Value vP0, Value cP0, int64_t panels,
                 int64_t lastLanes, int64_t staticRows);

/// The column tiles of `lanes`-column panels: whole tiles of up to
/// `maxPanels` panels of whole columns across threads (`perTile` work
/// each, for the grain), then one tile with the rest, its last panel
/// `lastLanes` wide. `body(b, loc, first panel, panels, lastLanes)` emits a
/// tile.
void forEachColumnTile(
    OpBuilder &b, Location loc, int64_t columns, int64_t perTile,
    function_ref<void(OpBuilder &, Location, Value, int64_t, int64_t)> body,
    int64_t lanes = kLanes, int64_t maxPanels = kPanels);

/// A conv's output tiles: `tiles` of `tile` panels, then one of `rest`
/// (0: none), each split into blocks of output channels when the tiles
/// are too few to share out (rowBlocks blocks of blockRows of `rows`).
struct ConvUnits {
  int64_t tiles, tile, rest, rowBlocks, blockRows, rows;
  // Units by blocks of rows (output channels) first, tiles within: the
  // threads of a 2-way split then write channel halves (as a depthwise
  // conv reading the output splits) and read weight halves (else position
  // halves).
  bool rowsOuter = false;
  ConvUnits(int64_t tiles, int64_t tile, int64_t rest, int64_t rows,
            int64_t rowAlign);
  int64_t units() const { return tiles + (rest ? 1 : 0); }
};

/// A loop over `u`'s tiles x blocks of rows across threads (`perUnit`
/// work each, for the grain): `unit(b, loc, first panel, panels, whether
/// it is the rest, first row, row end)` emits one.
void forEachConvUnit(OpBuilder &b, Location loc, const ConvUnits &u,
                     int64_t perUnit,
                     function_ref<void(OpBuilder &, Location, Value, int64_t,
                                       bool, Value, Value)>
                         unit);

// Shared by the matmul, conv and depthwise rewrites
// (IntegerContractions.cpp).
/// True when the body is `yield(out + extui(a) * extsi(b))` into i32 (the
/// product's operands in either order).
bool isU8S8MulAdd(linalg::GenericOp g);
/// The bytes of `v` when it is a constant global of static shape.
std::optional<SmallVector<int8_t>> constantBytes(Value v);
/// `v` (identity layout) as a row-major [rows, cols] at element `offset`.
Value rowMajor(OpBuilder &b, Location loc, Value v, OpFoldResult rows,
               int64_t cols, OpFoldResult offset);
/// Four vectors of 16 bytes (k values t = 0..3 of 16 columns) as one step
/// of a panel, column j's four bytes side by side: [16][4].
Value interleaveSteps(OpBuilder &b, Location loc, ArrayRef<Value> rows);
/// scf.if `cond`: `body(b, loc, true)` in its then region,
/// `body(b, loc, false)` in its else region.
void emitIfElse(OpBuilder &b, Location loc, Value cond,
                function_ref<void(OpBuilder &, Location, bool)> body);
/// A constant global of i32 `values`, named `name`, and its get_global.
Value i32Table(OpBuilder &b, Location loc, ModuleOp module, StringRef name,
               ArrayRef<int32_t> values);

/// A 2-D conv's static sizes: input [n, c, h, w], weights [m, c, kh, kw],
/// output [n, m, oh, ow], strides and dilations.
struct ConvSizes {
  int64_t n, c, h, w, m, kh, kw, oh, ow, sh, sw, dh, dw;
  // Threads split the output channels outermost (ConvUnits::rowsOuter).
  bool channelsOuter = false;
  /// The input, kernel, strides and dilations as a name suffix (tables
  /// per conv carry the shapes they were built for); with `output`, the
  /// output plane too.
  std::string name(bool output) const;
};
/// Whether the direct AMX conv (IntegerAmxConv.cpp) takes a conv of these
/// sizes.
bool amxDirectConvFits(const ConvSizes &s);
/// Emits `out` = conv(`x`, weights `w` [m][c][kh][kw]) as the direct AMX
/// conv: the input relaid per image as 4-channel dwords, split by stride
/// phase, and the tiles loaded from it in place (no patches packed);
/// `store` (may be null) applies the epilogue of an image.
/// `padded` (may be null): the padded copy x is made of, which the
/// relayout reads instead (x then never written).
void emitAmxDirectConv(
    OpBuilder &b, Location loc, const ConvSizes &s, Value x,
    const vectorize::PaddedSource *padded, Value out, ArrayRef<int8_t> w,
    StringRef weightsName,
    function_ref<StoreHook(OpBuilder &, Location, Value)> store, AmxTiles &amx);

/// The store hook applying `ep` for image `image`, C viewed per image as
/// [channels, positions] (`rows`, `positions`): (builder, location,
/// accumulator vector, channel, first position, lane mask or null).
StoreHook convEpilogueStore(OpBuilder &b, Location loc,
                            const vectorize::ConvEpilogue &ep, Value image,
                            int64_t rows, int64_t positions);

/// Rewrites `g` when it is an 8-bit depthwise conv (u8 data padded with
/// its zero point, constant s8 weights, C starting at 0) that the VNNI
/// depthwise kernel takes (IntegerDepthwise.cpp); `epilogue` is then the
/// requantization applied in its stores, for the caller to erase.
bool rewriteDepthwise(linalg::GenericOp g,
                      std::optional<vectorize::ConvEpilogue> &epilogue);

} // namespace kiln::int8

#endif
