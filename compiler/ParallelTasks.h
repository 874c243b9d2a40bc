//===- ParallelTasks.h - calls of parallel loops' task functions -*- C++
//-*-===//
#ifndef KILN_COMPILER_PARALLELTASKS_H
#define KILN_COMPILER_PARALLELTASKS_H

namespace llvm {
class Module;
} // namespace llvm

namespace kiln {

/// kiln-outline-loops makes each parallel loop a task function F(lo, hi,
/// captured...) called once over all its iterations, F(0, n, ...), and
/// marks it kParallelTaskFnAttr. Each such call becomes
/// `kilnParallelFor(F_task, &captured, n, grain)` (grain: the attribute's
/// value, the fewest iterations per thread): the captured values are stored
/// in a struct on the caller's stack, and F_task(ctx, lo, hi) loads them
/// and calls F(lo, hi, ...). The runtime splits [0, n) across threads.
void lowerParallelTaskCalls(llvm::Module &module);

} // namespace kiln

#endif
