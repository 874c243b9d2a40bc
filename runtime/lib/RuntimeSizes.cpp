// Run-time sizes (model ABI 9): symbols, shape function, allocator, abort.
#include "RuntimeSizes.h"
#include "Error.h"

#include <algorithm>
#include <csetjmp>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace kiln::rt {
namespace {

thread_local std::jmp_buf *RunJump = nullptr;

const char *symbolName(const kiln_model_info &M, int32_t I) {
  return I >= 0 && I < M.num_symbols && M.symbol_names && M.symbol_names[I]
             ? M.symbol_names[I]
             : "?";
}

/// Evaluates the size program at Pos (advanced past its END); false on a
/// malformed program, a division by zero or an overflow.
bool evaluate(const int64_t *Program, int64_t Length, int64_t &Pos,
              const std::vector<int64_t> &Symbols, int64_t &Value) {
  int64_t Stack[32];
  int N = 0;
  for (; Pos + 1 < Length; Pos += 2) {
    int64_t Op = Program[Pos], Arg = Program[Pos + 1];
    if (Op == KILN_SIZE_END) {
      Pos += 2;
      if (N != 1)
        return false;
      Value = Stack[0];
      return true;
    }
    if (Op == KILN_SIZE_CONST || Op == KILN_SIZE_SYMBOL) {
      if (N == 32 || (Op == KILN_SIZE_SYMBOL &&
                      (Arg < 0 || Arg >= static_cast<int64_t>(Symbols.size()))))
        return false;
      Stack[N++] = Op == KILN_SIZE_CONST ? Arg : Symbols[Arg];
      continue;
    }
    if (N < 2)
      return false;
    int64_t B = Stack[--N], A = Stack[--N], R = 0;
    switch (Op) {
    case KILN_SIZE_ADD:
      if (__builtin_add_overflow(A, B, &R))
        return false;
      break;
    case KILN_SIZE_MUL:
      if (__builtin_mul_overflow(A, B, &R))
        return false;
      break;
    case KILN_SIZE_FLOORDIV:
    case KILN_SIZE_CEILDIV:
    case KILN_SIZE_MOD: {
      if (B == 0)
        return false;
      int64_t Q = A / B, M = A % B;
      if (M != 0 && ((M < 0) != (B < 0))) {
        --Q;
        M += B;
      }
      R = Op == KILN_SIZE_MOD ? M : (Op == KILN_SIZE_CEILDIV && M != 0 ? Q + 1 : Q);
      break;
    }
    default:
      return false;
    }
    Stack[N++] = R;
  }
  return false;
}

} // namespace

bool hasRuntimeSizes(const kiln_model_info &M) {
  return M.abi_version >= 9 && (M.flags & KILN_MODEL_RUNTIME_SIZES);
}

kiln_status checkRuntimeSizes(const kiln_model_info &M) {
  auto bad = [&](const std::string &What) {
    return fail(KILN_ERROR_INVALID_ARGUMENT,
                "malformed model info of " + quoted(M.name) + ": " + What);
  };
  if (M.num_symbols < 0 || (M.num_symbols > 0 && !M.symbol_names) || M.num_output_sizes < 0 ||
      (M.num_output_sizes > 0 && !M.output_sizes))
    return bad("run-time size tables");
  size_t Entry = 0;
  for (int32_t I = 0; I < M.num_inputs; ++I)
    for (int32_t D = 0; D < M.inputs[I].rank; ++D, ++Entry) {
      int32_t Sym = M.input_dim_symbols ? M.input_dim_symbols[Entry] : -1;
      if ((M.inputs[I].shape[D] == -1) != (Sym >= 0) || Sym >= M.num_symbols)
        return bad("input " + quoted(M.inputs[I].name) + " dimension " + std::to_string(D) +
                   " has no symbol");
    }
  // Every dynamic output dim has a program that runs with all symbols 1.
  std::vector<int64_t> Ones(M.num_symbols, 1);
  int64_t Pos = 0;
  for (int32_t I = 0; I < M.num_outputs; ++I) {
    if (M.output_kinds && M.output_kinds[I] != KILN_VALUE_TENSOR)
      continue;
    for (int32_t D = 0; D < M.outputs[I].rank; ++D) {
      int64_t V;
      if (M.outputs[I].shape[D] == -1 &&
          !evaluate(M.output_sizes, M.num_output_sizes, Pos, Ones, V))
        return bad("output " + quoted(M.outputs[I].name) + " has no size program");
    }
  }
  return KILN_OK;
}

kiln_status RunSizes::bind(const kiln_model_info &M, const kiln_tensor *Given,
                           int32_t NumGiven) {
  // (Sizes of the vectors stay from run to run: a run at sizes seen
  // before allocates nothing here.)
  Symbols.assign(M.num_symbols, -1);
  From.assign(M.num_symbols, -1);
  Inputs.resize(M.num_inputs);
  Outputs.resize(M.num_outputs);
  First.assign(M.num_inputs + 1, 0);
  for (int32_t I = 0; I < M.num_inputs; ++I) {
    Inputs[I].assign(M.inputs[I].shape, M.inputs[I].shape + M.inputs[I].rank);
    First[I + 1] = First[I] + static_cast<size_t>(M.inputs[I].rank);
  }
  for (int32_t I = 0; I < M.num_outputs; ++I)
    Outputs[I].assign(M.outputs[I].shape, M.outputs[I].shape + std::max(M.outputs[I].rank, 0));
  // kiln_session_run's own checks report counts, names and ranks.
  if (NumGiven != M.num_inputs || (NumGiven && !Given))
    return KILN_OK;
  for (int32_t G = 0; G < NumGiven; ++G) {
    const kiln_tensor &T = Given[G];
    int32_t I = matchTensor(M.inputs, M.num_inputs, T, G);
    if (I < 0)
      continue;
    const kiln_tensor_info &Info = M.inputs[I];
    if (T.rank != Info.rank || (T.rank > 0 && !T.shape))
      continue;
    for (int32_t D = 0; D < Info.rank; ++D) {
      int32_t Sym = M.input_dim_symbols[First[I] + D];
      if (Sym < 0)
        continue;
      int64_t Size = T.shape[D];
      Inputs[I][D] = Size;
      if (Size < 0)
        return fail(KILN_ERROR_SHAPE_MISMATCH,
                    "input " + quoted(Info.name) + ": dimension " + std::to_string(D) +
                        " is negative (" + std::to_string(Size) + ")");
      if (M.symbol_max && M.symbol_max[Sym] > 0 && Size > M.symbol_max[Sym])
        return fail(KILN_ERROR_SHAPE_MISMATCH,
                    "input " + quoted(Info.name) + ": dimension " + std::to_string(D) + " (" +
                        quoted(symbolName(M, Sym)) + ") is " + std::to_string(Size) +
                        ", beyond the bound " + std::to_string(M.symbol_max[Sym]) +
                        " the model was compiled with (--dim-max)");
      if (From[Sym] >= 0 && Symbols[Sym] != Size)
        return fail(KILN_ERROR_SHAPE_MISMATCH,
                    "inputs " + quoted(M.inputs[From[Sym]].name) + " and " + quoted(Info.name) +
                        " disagree on dimension " + quoted(symbolName(M, Sym)) + ": " +
                        std::to_string(Symbols[Sym]) + " and " + std::to_string(Size));
      Symbols[Sym] = Size;
      From[Sym] = I;
    }
  }
  // An input left a symbol unbound (a wrong rank, a missing input): the
  // session's checks of the inputs say what is wrong.
  for (int64_t V : Symbols)
    if (V < 0)
      return KILN_OK;
  int64_t Pos = 0;
  for (int32_t I = 0; I < M.num_outputs; ++I) {
    const kiln_tensor_info &Info = M.outputs[I];
    bool Tensor = !M.output_kinds || M.output_kinds[I] == KILN_VALUE_TENSOR;
    for (int32_t D = 0; Tensor && D < Info.rank; ++D) {
      if (Info.shape[D] != -1)
        continue;
      int64_t V = -1;
      if (!evaluate(M.output_sizes, M.num_output_sizes, Pos, Symbols, V) || V < 0)
        return fail(KILN_ERROR_SHAPE_MISMATCH,
                    "output " + quoted(Info.name) + ": dimension " + std::to_string(D) +
                        " has no valid size at these input shapes (a division by zero, an "
                        "overflow or a negative size)");
      Outputs[I][D] = V;
    }
  }
  return KILN_OK;
}

void RunSizes::store(const kiln_model_info &M, void *Arena) const {
  char *Slot = static_cast<char *>(Arena) + KILN_ARENA_SIZES;
  auto put = [&](const kiln_tensor_info &Info, const std::vector<int64_t> &Dims) {
    for (int32_t D = 0; D < Info.rank; ++D)
      if (Info.shape[D] == -1) {
        int64_t V = D < static_cast<int32_t>(Dims.size()) ? Dims[D] : 0;
        std::memcpy(Slot, &V, sizeof(V));
        Slot += sizeof(V);
      }
  };
  for (int32_t I = 0; I < M.num_inputs; ++I)
    put(M.inputs[I], Inputs[I]);
  for (int32_t I = 0; I < M.num_outputs; ++I)
    if (!M.output_kinds || M.output_kinds[I] == KILN_VALUE_TENSOR)
      put(M.outputs[I], Outputs[I]);
}

namespace {
void *hostAllocate(uint64_t Bytes) { return std::aligned_alloc(64, Bytes); }
void hostRelease(void *Ptr) { std::free(Ptr); }
} // namespace

DynAllocator::DynAllocator() : Memory{hostAllocate, hostRelease} {}

DynAllocator::~DynAllocator() {
  reset();
  if (Block)
    Memory.Release(Block);
}

void *DynAllocator::allocate(uint64_t Bytes) {
  uint64_t Size = (std::max<uint64_t>(Bytes, 1) + 63) & ~uint64_t(63);
  InUse += Size;
  Peak = std::max(Peak, InUse);
  // First fit between the ranges in use.
  uint64_t Offset = 0;
  size_t At = 0;
  for (; At < Used.size(); ++At) {
    if (Offset + Size <= Used[At].Offset)
      break;
    Offset = Used[At].Offset + Used[At].Size;
  }
  if (Offset + Size <= Capacity) {
    Used.insert(Used.begin() + At, Range{Offset, Size});
    return Block + Offset;
  }
  // Beyond the block: memory of its own this run; the block grows after.
  void *P = Memory.Allocate(Size);
  if (!P)
    kilnRunFailed();
  Overflow.push_back(P);
  return P;
}

void DynAllocator::release(void *Ptr) {
  char *P = static_cast<char *>(Ptr);
  if (Block && P >= Block && P < Block + Capacity) {
    uint64_t Offset = P - Block;
    auto It = std::lower_bound(Used.begin(), Used.end(), Offset,
                               [](const Range &R, uint64_t O) { return R.Offset < O; });
    if (It != Used.end() && It->Offset == Offset) {
      InUse -= It->Size;
      Used.erase(It);
    }
    return;
  }
  // Overflow memory stays until the run ends (its size is not recorded).
}

void DynAllocator::reset() {
  bool Grow = !Overflow.empty();
  for (void *P : Overflow)
    Memory.Release(P);
  Overflow.clear();
  Used.clear();
  InUse = 0;
  if (Grow && Peak > Capacity) {
    if (Block)
      Memory.Release(Block);
    Block = static_cast<char *>(Memory.Allocate(Peak));
    Capacity = Block ? Peak : 0;
  }
  Peak = 0;
}

bool runGuarded(kiln_partition_fn Fn, void *const *In, void *const *Out, void *Arena) {
  std::jmp_buf Jump;
  std::jmp_buf *Outer = RunJump;
  if (setjmp(Jump)) {
    RunJump = Outer;
    return false;
  }
  RunJump = &Jump;
  Fn(In, Out, Arena);
  RunJump = Outer;
  return true;
}

} // namespace kiln::rt

extern "C" {

void *kilnDynAlloc(int64_t Allocator, int64_t Bytes) {
  auto *A = reinterpret_cast<kiln::rt::DynAllocator *>(static_cast<uintptr_t>(Allocator));
  if (!A || Bytes < 0)
    kilnRunFailed();
  return A->allocate(static_cast<uint64_t>(Bytes));
}

void kilnDynFree(int64_t Allocator, void *Ptr) {
  if (auto *A = reinterpret_cast<kiln::rt::DynAllocator *>(static_cast<uintptr_t>(Allocator)))
    A->release(Ptr);
}

void kilnRunFailed(void) {
  if (kiln::rt::RunJump)
    std::longjmp(*kiln::rt::RunJump, 1);
  // Compiled code called outside a session run: nothing can continue.
  std::abort();
}
}
