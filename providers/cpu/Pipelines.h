//===- Pipelines.h - the CPU code generation pipelines ----------*- C++ -*-===//
//
// Shared by the compile driver (compiler/Pipeline.cpp) and by constant
// folding (providers/FoldConstants.cpp), which JIT-compiles folded ops with
// exactly the code the model would run, so both see the same numerics.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PROVIDERS_CPU_PIPELINES_H
#define KILN_PROVIDERS_CPU_PIPELINES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "providers/cpu/Vectorize.h"

namespace kiln::cpu {

/// Tensors to memrefs (after the providers lowered onnx to linalg/tensor).
inline constexpr const char *kBufferizePipeline =
    "one-shot-bufferize{bufferize-function-boundaries "
    "function-boundary-type-conversion=identity-layout-map},"
    "func.func(canonicalize,cse)";

/// Buffers and loops to the LLVM dialect; functions take bare pointers.
inline constexpr const char *kToLlvmPipeline =
    "kiln-expand-bf16,func.func(convert-linalg-to-loops),expand-strided-metadata,lower-affine,"
    "convert-scf-to-cf,func.func(canonicalize,cse),"
    "convert-math-to-llvm,convert-math-to-libm,finalize-memref-to-llvm,convert-arith-to-llvm,"
    "convert-index-to-llvm,"
    "convert-func-to-llvm{use-bare-ptr-memref-call-conv=1},convert-cf-to-llvm,"
    "gpu-to-llvm,reconcile-unrealized-casts,canonicalize";

/// Between the two: strided copies would call MLIR's C runner library
/// (memrefCopy). They become plain loops instead, so compiled models stay
/// freestanding and the constant-folding JIT needs no runtime library: with
/// `vectorRows` (code that lowers vector ops) each contiguous innermost row
/// is one vector transfer, else linalg.copy's scalar loops (LLVM keeps
/// those scalar when source and target come from one arena). With
/// `parallelAttr`, the outermost row loop of more than one iteration of a
/// copy of at least `parallelElements` is marked with it (threads split
/// it, each taking at least that many elements).
inline void stridedCopiesToLoops(mlir::Operation *root, bool vectorRows,
                                 llvm::StringRef parallelAttr = {},
                                 int64_t parallelElements = 0) {
  using namespace mlir;
  root->walk([&](memref::CopyOp copy) {
    auto src = cast<MemRefType>(copy.getSource().getType());
    auto dst = cast<MemRefType>(copy.getTarget().getType());
    if (src.getLayout().isIdentity() && dst.getLayout().isIdentity())
      return;
    OpBuilder b(copy);
    Location loc = copy.getLoc();
    if (!vectorRows || src.getRank() == 0 || !src.hasStaticShape() ||
        src.getShape().back() < 4 || !kiln::vectorize::unitInnerStride(src) ||
        !kiln::vectorize::unitInnerStride(dst)) {
      b.create<linalg::CopyOp>(loc, copy.getSource(), copy.getTarget());
      copy.erase();
      return;
    }
    SmallVector<Value> ivs;
    SmallVector<scf::ForOp> nest;
    ArrayRef<int64_t> outer = src.getShape().drop_back();
    // (Bounds before the nest: coalescing needs them outside it.)
    Value zero = b.create<arith::ConstantIndexOp>(loc, 0),
          one = b.create<arith::ConstantIndexOp>(loc, 1);
    SmallVector<Value> extents;
    for (int64_t d : outer)
      extents.push_back(b.create<arith::ConstantIndexOp>(loc, d));
    for (Value extent : extents) {
      nest.push_back(b.create<scf::ForOp>(loc, zero, extent, one));
      b.setInsertionPoint(nest.back().getBody()->getTerminator());
      ivs.push_back(nest.back().getInductionVar());
    }
    ivs.push_back(zero);
    auto row = VectorType::get({src.getShape().back()}, src.getElementType());
    Value pad = b.create<arith::ConstantOp>(loc, b.getZeroAttr(src.getElementType()));
    auto inBounds = b.getBoolArrayAttr({true});
    auto rowMap = AffineMapAttr::get(
        AffineMap::getMinorIdentityMap(src.getRank(), 1, b.getContext()));
    Value v = b.create<vector::TransferReadOp>(loc, row, copy.getSource(), ivs, rowMap, pad,
                                               Value(), inBounds);
    b.create<vector::TransferWriteOp>(loc, v, copy.getTarget(), ivs, rowMap, Value(), inBounds);
    // Threads split the outermost loop of more than one trip, joined with
    // the loops inside it while it has fewer than 8 (a stem's pad copy: 3
    // channels of 224 rows, grain 2, was one range; 672 rows make 2).
    int64_t elements = src.getNumElements();
    size_t i =
        llvm::find_if(outer, [](int64_t d) { return d > 1; }) - outer.begin();
    if (!parallelAttr.empty() && elements >= parallelElements &&
        i < outer.size()) {
      size_t j = i + 1;
      for (int64_t trips = outer[i];
           j < outer.size() && trips < kiln::vectorize::kParallelEvenTrips; ++j)
        trips *= outer[j];
      if (j > i + 1) {
        IRRewriter rewriter(b);
        (void)coalesceLoops(rewriter, MutableArrayRef(nest).slice(i, j - i));
      }
      int64_t perTrip = src.getShape().back();
      for (int64_t d : outer.drop_front(j))
        perTrip *= d;
      int64_t grain = (parallelElements + perTrip - 1) / perTrip;
      nest[i]->setAttr(parallelAttr, b.getI64IntegerAttr(grain));
    }
    copy.erase();
  });
}

} // namespace kiln::cpu

#endif
