//===- BufferAliases.h - uses of a buffer and its aliases -------*- C++ -*-===//
#ifndef KILN_PASSES_BUFFERALIASES_H
#define KILN_PASSES_BUFFERALIASES_H

#include "mlir/IR/Value.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace kiln {

/// Calls `fn` on every use of `root`'s buffer and of its aliases: views,
/// and the results of the scf.if or loop it is yielded out of or passed
/// into.
void forEachAliasUse(mlir::Value root,
                     llvm::function_ref<void(mlir::OpOperand &)> fn);

} // namespace kiln

#endif // KILN_PASSES_BUFFERALIASES_H
