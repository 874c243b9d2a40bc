//===- Passes.h - provider-independent kiln passes --------------*- C++ -*-===//
#ifndef KILN_PASSES_PASSES_H
#define KILN_PASSES_PASSES_H

#include "dialects/kiln/KilnDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace kiln {

/// Marks an scf.for whose iterations are independent and write disjoint
/// data (the tile loops of a parallel dim that kiln-cpu-vectorize-contractions
/// schedules): kiln-outline-loops makes it a task function that the
/// runtime's kilnParallelFor splits across threads, and kiln-plan-memory
/// gives buffers allocated in its body per-thread memory. Its value, if an
/// integer, is the grain: the fewest iterations worth a thread of their own.
inline constexpr const char *kParallelAttr = "kiln.parallel";
/// The module attribute giving the CPU target's vector width in bits (512
/// for AVX-512), set before the providers lower: a lowering may pick the
/// form that width's kernels take (a conv over a run-time batch).
inline constexpr const char *kVectorBitsAttr = "kiln.vector_bits";
/// The module attribute saying its code runs on AMX tiles: the runtime must
/// ask the OS for the tile state first (KILN_MODEL_AMX_TILES).
inline constexpr const char *kAmxTilesAttr = "kiln.amx_tiles";
/// The grain of a loop that splits only into equal shares for the run's
/// thread count: otherwise it runs whole on the caller and the parallel
/// loops inside it split (a matmul's few cache blocks around its split
/// register tile rows: one dispatch rather than one per block when the
/// blocks divide among the threads).
inline constexpr int64_t kParallelEvenGrain = -1;
/// The LLVM function attribute of such a task function; Emit turns each
/// call of it into a call of kilnParallelFor (compiler/ParallelTasks.h).
inline constexpr const char *kParallelTaskFnAttr = "kiln-parallel-task";
/// Marks an onnx.Loop that kiln-decompose-ops keeps a loop even when its
/// trip count is known: a recurrent op's steps (kiln-decompose-recurrent),
/// where unrolling a long sequence costs compile time and code size.
inline constexpr const char *kKeepLoopAttr = "kiln.keep_loop";
/// Marks an onnx.Gather whose indices are in range by construction
/// (kiln-fuse-quantized's table lookups, indexed by 8-bit values): the
/// lowering checks no range.
inline constexpr const char *kIndicesInRangeAttr = "kiln.indices_in_range";

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

} // namespace kiln

#endif
