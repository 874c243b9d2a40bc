//===- IndexGeneric.h - ops computed per output index -----------*- C++ -*-===//
//
// out[i] = f(i): a linalg.generic over the output whose body computes each
// element from its index (tensor.extract of the inputs), with small index
// arithmetic helpers.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PROVIDERS_CPU_INDEXGENERIC_H
#define KILN_PROVIDERS_CPU_INDEXGENERIC_H

#include "providers/cpu/Lowering.h"

namespace kiln::cpu {

/// Small index arithmetic in a linalg body.
struct IB {
  mlir::OpBuilder &b;
  mlir::Location l;
  mlir::Value c(int64_t v) { return b.create<mlir::arith::ConstantIndexOp>(l, v); }
  mlir::Value add(mlir::Value x, mlir::Value y) { return b.create<mlir::arith::AddIOp>(l, x, y); }
  mlir::Value sub(mlir::Value x, mlir::Value y) { return b.create<mlir::arith::SubIOp>(l, x, y); }
  mlir::Value mul(mlir::Value x, mlir::Value y) { return b.create<mlir::arith::MulIOp>(l, x, y); }
  mlir::Value add(mlir::Value x, int64_t y) { return y ? add(x, c(y)) : x; }
  mlir::Value mul(mlir::Value x, int64_t y) { return y == 1 ? x : mul(x, c(y)); }
  mlir::Value div(mlir::Value x, int64_t y) { return y == 1 ? x : b.create<mlir::arith::DivSIOp>(l, x, c(y)); }
  mlir::Value rem(mlir::Value x, int64_t y) { return b.create<mlir::arith::RemSIOp>(l, x, c(y)); }
  /// Euclidean modulo (result in [0, y)).
  mlir::Value mod(mlir::Value x, int64_t y) { return rem(add(rem(x, y), y), y); }
  mlir::Value lt(mlir::Value x, mlir::Value y) { return b.create<mlir::arith::CmpIOp>(l, mlir::arith::CmpIPredicate::slt, x, y); }
  mlir::Value lt(mlir::Value x, int64_t y) { return lt(x, c(y)); }
  mlir::Value ge(mlir::Value x, int64_t y) { return b.create<mlir::arith::CmpIOp>(l, mlir::arith::CmpIPredicate::sge, x, c(y)); }
  mlir::Value eq(mlir::Value x, mlir::Value y) { return b.create<mlir::arith::CmpIOp>(l, mlir::arith::CmpIPredicate::eq, x, y); }
  mlir::Value andI(mlir::Value x, mlir::Value y) { return b.create<mlir::arith::AndIOp>(l, x, y); }
  mlir::Value sel(mlir::Value c0, mlir::Value x, mlir::Value y) { return b.create<mlir::arith::SelectOp>(l, c0, x, y); }
  mlir::Value clamp(mlir::Value x, int64_t lo, int64_t hi) {
    return b.create<mlir::arith::MaxSIOp>(l, b.create<mlir::arith::MinSIOp>(l, x, c(hi)), c(lo));
  }
  mlir::Value index(mlir::Value v) {
    if (v.getType().isIndex())
      return v;
    return b.create<mlir::arith::IndexCastOp>(l, b.getIndexType(), v);
  }
  /// An index read from an integer tensor, negatives wrapped by `dim`.
  mlir::Value wrapNeg(mlir::Value idx, int64_t dim) { return sel(lt(idx, 0), add(idx, dim), idx); }
  /// The same for a dim of run-time size (an index value).
  mlir::Value wrapNeg(mlir::Value idx, mlir::Value dim) {
    return sel(lt(idx, 0), add(idx, dim), idx);
  }
  /// x clamped to [0, n - 1] for a run-time n.
  mlir::Value clampBelow(mlir::Value x, mlir::Value n) {
    return b.create<mlir::arith::MaxSIOp>(l, b.create<mlir::arith::MinSIOp>(l, x, sub(n, c(1))),
                                          c(0));
  }
};

using IndexFn = std::function<mlir::Value(IB &, llvm::ArrayRef<mlir::Value>)>;

/// `dynSizes`: the result's run-time sizes (one per dynamic dim).
inline mlir::Value indexGeneric(mlir::OpBuilder &b, mlir::Location loc, mlir::RankedTensorType out,
                                const IndexFn &fn, mlir::ValueRange dynSizes = {}) {
  mlir::Value init = emptyTensor(b, loc, out, dynSizes);
  llvm::SmallVector<mlir::AffineMap> maps = {b.getMultiDimIdentityMap(out.getRank())};
  llvm::SmallVector<mlir::utils::IteratorType> iters(out.getRank(), mlir::utils::IteratorType::parallel);
  auto g = b.create<mlir::linalg::GenericOp>(
      loc, mlir::TypeRange{out}, mlir::ValueRange{}, mlir::ValueRange{init}, maps, iters,
      [&](mlir::OpBuilder &nb, mlir::Location l, mlir::ValueRange) {
        IB ib{nb, l};
        llvm::SmallVector<mlir::Value> idx;
        for (int64_t i = 0; i < out.getRank(); ++i)
          idx.push_back(nb.create<mlir::linalg::IndexOp>(l, i));
        nb.create<mlir::linalg::YieldOp>(l, fn(ib, idx));
      });
  return g.getResult(0);
}

} // namespace kiln::cpu

#endif
