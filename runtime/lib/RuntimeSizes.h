// Models compiled with run-time sizes (model ABI 9, KILN_MODEL_RUNTIME_SIZES):
// binding the symbols from a run's input shapes, the shape function, the
// allocator of the run's dynamically sized buffers and the run's abort
// path for a failed fatal check.
#ifndef KILN_RUNTIME_RUNTIMESIZES_H
#define KILN_RUNTIME_RUNTIMESIZES_H

#include "kiln/kiln_rt.h"
#include "kiln/model_abi.h"

#include <cstdint>
#include <string>
#include <vector>

extern "C" {
/// Called by compiled code: `bytes` from the run's allocator (`allocator`
/// is the arena's bytes 16-23), 64-byte aligned; never NULL (an allocation
/// failure ends the run).
void *kilnDynAlloc(int64_t allocator, int64_t bytes);
void kilnDynFree(int64_t allocator, void *ptr);
/// A fatal kiln.check failed (its message is in the arena's status slot):
/// ends the run at once.
[[noreturn]] void kilnRunFailed(void);
}

namespace kiln::rt {

bool hasRuntimeSizes(const kiln_model_info &M);
/// Validates a model's ABI 9 fields; KILN_OK or a failure naming what.
kiln_status checkRuntimeSizes(const kiln_model_info &M);

/// The sizes of one run: each symbol's value, and every input's and
/// output's dims.
struct RunSizes {
  std::vector<int64_t> Symbols;
  std::vector<std::vector<int64_t>> Inputs, Outputs;
  /// From the caller's inputs (matched by name or position as
  /// kiln_session_run does): inputs that share a symbol must agree, and a
  /// bound (--dim-max) must hold. Then the outputs' dims by the shape
  /// function.
  kiln_status bind(const kiln_model_info &M, const kiln_tensor *Given, int32_t NumGiven);
  /// The dynamic dims in the arena's order (inputs', then outputs').
  void store(const kiln_model_info &M, void *Arena) const;

private:
  std::vector<int32_t> From;  // the input that set each symbol
  std::vector<size_t> First;  // each input's first entry in input_dim_symbols
};

/// Memory for the buffers of run-time size of one session's runs: first
/// fit in one block, which grows (between runs) to the most a run needed,
/// so that runs at sizes seen before do not allocate. Host memory by
/// default; a session's CUDA partitions get one over device memory (the
/// addresses are only computed with, never dereferenced here).
class DynAllocator {
public:
  struct Backing {
    /// 64-byte aligned memory, or null.
    void *(*Allocate)(uint64_t Bytes);
    void (*Release)(void *Ptr);
  };
  DynAllocator();
  explicit DynAllocator(Backing B) : Memory(B) {}
  /// Before the first allocation only.
  void setBacking(Backing B) {
    if (!Block && Overflow.empty())
      Memory = B;
  }
  DynAllocator(const DynAllocator &) = delete;
  DynAllocator &operator=(const DynAllocator &) = delete;
  ~DynAllocator();
  void *allocate(uint64_t Bytes);
  void release(void *Ptr);
  /// Ends a run: everything is free again; the block grows to the run's
  /// peak if the run needed overflow memory.
  void reset();
  uint64_t capacity() const { return Capacity; }

private:
  struct Range {
    uint64_t Offset, Size;
  };
  Backing Memory;
  char *Block = nullptr;
  uint64_t Capacity = 0, InUse = 0, Peak = 0;
  std::vector<Range> Used; // sorted by offset
  std::vector<void *> Overflow;
};

/// Runs Fn(In, Out, Arena); false when a fatal check ended it early.
bool runGuarded(kiln_partition_fn Fn, void *const *In, void *const *Out, void *Arena);

} // namespace kiln::rt

#endif
