/* kiln model ABI: what a compiled model object exports and what libkiln_rt
 * consumes. C only, stable: bump KILN_ABI_VERSION on any layout change. */
#ifndef KILN_MODEL_ABI_H
#define KILN_MODEL_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KILN_ABI_VERSION 10u

/* Element types use ONNX TensorProto.DataType numbers. */
typedef enum kiln_dtype {
  KILN_DTYPE_UNDEFINED = 0,
  KILN_DTYPE_FLOAT = 1,
  KILN_DTYPE_UINT8 = 2,
  KILN_DTYPE_INT8 = 3,
  KILN_DTYPE_UINT16 = 4,
  KILN_DTYPE_INT16 = 5,
  KILN_DTYPE_INT32 = 6,
  KILN_DTYPE_INT64 = 7,
  KILN_DTYPE_STRING = 8, /* one `const char *` (NUL-terminated) per element */
  KILN_DTYPE_BOOL = 9,
  KILN_DTYPE_FLOAT16 = 10,
  KILN_DTYPE_DOUBLE = 11,
  KILN_DTYPE_UINT32 = 12,
  KILN_DTYPE_UINT64 = 13,
  KILN_DTYPE_BFLOAT16 = 16,
  KILN_DTYPE_FLOAT8E4M3FN = 17,
  KILN_DTYPE_FLOAT8E4M3FNUZ = 18,
  KILN_DTYPE_FLOAT8E5M2 = 19,
  KILN_DTYPE_FLOAT8E5M2FNUZ = 20,
  /* Sub-byte integers are passed one element per byte, in the low bits
   * (ONNX packs two or four per byte in TensorProto raw data). */
  KILN_DTYPE_UINT4 = 21,
  KILN_DTYPE_INT4 = 22,
  /* float4e2m1 one element per byte like int4 (ONNX packs two), and
   * float8e8m0 (a power of two; 0xFF is NaN). */
  KILN_DTYPE_FLOAT4E2M1 = 23,
  KILN_DTYPE_FLOAT8E8M0 = 24,
  KILN_DTYPE_UINT2 = 25,
  KILN_DTYPE_INT2 = 26
} kiln_dtype;

typedef struct kiln_tensor_info {
  const char *name;     /* graph input/output name */
  int32_t dtype;        /* kiln_dtype */
  int32_t rank;
  const int64_t *shape; /* rank entries; -1 only for a dimension that a
                           shape-variant model resolves at run time (ABI 7) */
} kiln_tensor_info;

/* A partition entry point. inputs/outputs hold one pointer per model
 * input/output (dense, row-major); arena is a per-session scratch buffer of
 * kiln_model_info.arena_size bytes aligned to arena_alignment. Entry points
 * are reentrant: two sessions may run concurrently. */
typedef void (*kiln_partition_fn)(void *const *inputs, void *const *outputs,
                                  void *arena);

typedef struct kiln_partition_info {
  const char *name;     /* e.g. "cpu_0" */
  const char *provider; /* e.g. "cpu" */
  int32_t num_ops;      /* ONNX nodes in this partition */
  kiln_partition_fn fn;
} kiln_partition_info;

typedef struct kiln_model_info {
  uint32_t abi_version; /* KILN_ABI_VERSION */
  const char *name;
  const char *producer; /* "kiln <version>" */
  int32_t num_inputs;
  const kiln_tensor_info *inputs;
  int32_t num_outputs;
  const kiln_tensor_info *outputs;
  uint64_t arena_size;
  uint64_t arena_alignment;
  int32_t num_partitions; /* run in order */
  const kiln_partition_info *partitions;
  /* ABI 2. Providers the partitions above need beyond the CPU
   * (KILN_PROVIDER_* bits). When the machine lacks one (no CUDA driver or
   * device) or the caller asks for the CPU, the session runs
   * fallback_partitions instead: the same model compiled for the CPU alone,
   * with its own arena size. */
  uint32_t required_providers;
  int32_t num_fallback_partitions;
  const kiln_partition_info *fallback_partitions;
  uint64_t fallback_arena_size;
  /* ABI 3. KILN_MODEL_* bits. With KILN_MODEL_CHECKS (for the partitions)
   * or KILN_MODEL_FALLBACK_CHECKS (for the fallback partitions), the first
   * 8 bytes of that variant's arena hold a `const char *`: the runtime sets
   * it to NULL before a run, and a failed run-time check (a shape-deciding
   * input that disagrees with the compiled shapes) points it at its
   * message, which becomes the run's error. */
  uint32_t flags;
  /* ABI 4, no longer made: a batch resolved per sample
   * (KILN_MODEL_DYNAMIC_BATCH, which the runtime now refuses: a symbolic
   * batch compiles with run-time sizes). Kept NULL for the layout. */
  const int32_t *input_batch_axes;
  const int32_t *output_batch_axes;
  const char *batch_name;
  /* ABI 5. Device-resident I/O: the partitions above compiled once more
   * with every input and output pointer in device memory (CUDA), and the
   * host arena size of that variant. Empty for a model without CUDA
   * partitions. KILN_MODEL_DEVICE_IO_CHECKS: the first 8 bytes of its
   * arena are the status slot, as for KILN_MODEL_CHECKS. */
  int32_t num_device_io_partitions;
  const kiln_partition_info *device_io_partitions;
  uint64_t device_io_arena_size;
  /* ABI 6. What each input and output is (KILN_VALUE_*), or NULL when all
   * are tensors. A sequence or optional value is a runtime-owned object
   * (kiln_sequence in kiln_rt.h); its kiln_tensor_info describes the
   * elements, with rank -1 when unknown and -1 for an unknown dimension.
   * The partitions get, for such an input, a pointer to an int64 slot that
   * holds the object's handle, and for such an output a slot that they set
   * to the handle of the result; the runtime copies that into the caller's
   * object once the run has succeeded. */
  const int32_t *input_kinds;
  const int32_t *output_kinds;
  /* ABI 7. KILN_MODEL_SHAPE_VARIANTS: the model keeps symbolic dimensions
   * other than its batch (a sequence length, an image size) and was
   * compiled once per value the user listed (kiln compile --dim-values).
   * This info is the model as callers see it: -1 for each such dimension
   * in inputs/outputs, no partitions of its own (all partition counts 0,
   * arena sizes 0). shape_variants[i] is a complete model info with those
   * dimensions static and everything else (names, dtypes, kinds, ranks,
   * batch axes, flags but this one) the same. A run uses the first variant
   * whose input shapes match the caller's; dim_names[j] names symbolic
   * dimension j (for messages), num_dim_names of them. The last variant may
   * be the model compiled with run-time sizes (ABI 9,
   * KILN_MODEL_RUNTIME_SIZES), which matches any size of its -1 dimensions
   * and may differ from the model in its dynamic batch. */
  int32_t num_shape_variants;
  const struct kiln_model_info *const *shape_variants;
  int32_t num_dim_names;
  const char *const *dim_names;
  /* ABI 8. The CPU the host code was compiled for (kiln compile
   * --target-cpu, the build machine's CPU by default), e.g. "znver5". */
  const char *target_cpu;
  /* ABI 9. KILN_MODEL_RUNTIME_SIZES: the model keeps symbolic dimensions
   * and its partitions compute with the sizes of each run (compiled once
   * for all of them); inputs/outputs hold -1 for those dimensions.
   * num_symbols symbols name them (a dim_param, or "<input>:<axis>" for an
   * unnamed dimension). input_dim_symbols has, for each input in order,
   * one entry per dimension: the symbol its size gives, or -1 where the
   * size is static; inputs naming one symbol must agree. output_sizes is
   * the shape function: one size program per dynamic output dimension
   * (outputs in order, then dimensions), KILN_SIZE_* (opcode, operand)
   * pairs in postfix order over the symbols' values, each ended by
   * KILN_SIZE_END; num_output_sizes counts its int64 entries. symbol_max[i]
   * bounds symbol i (kiln compile --dim-max), 0 for none. Before a run the
   * runtime stores in the arena, as int64 from byte KILN_ARENA_SIZES, the
   * size of every dynamic input dimension, then of every dynamic output
   * dimension, in that order, and at bytes 16-23 the run's allocator
   * (kilnDynAlloc/kilnDynFree) for buffers whose size is a run-time
   * value. */
  int32_t num_symbols;
  const char *const *symbol_names;
  const int32_t *input_dim_symbols;
  int64_t num_output_sizes;
  const int64_t *output_sizes;
  const int64_t *symbol_max;
} kiln_model_info;
#define KILN_MODEL_CHECKS 1u
#define KILN_MODEL_FALLBACK_CHECKS 2u
#define KILN_MODEL_DYNAMIC_BATCH 4u /* refused: see input_batch_axes */
#define KILN_MODEL_DEVICE_IO_CHECKS 8u
#define KILN_MODEL_SHAPE_VARIANTS 16u
/* ABI 8. The partitions (resp. fallback, device-I/O partitions) call
 * kilnProfileBegin/kilnProfileEnd(context, descriptor) around each node's
 * kernel when bytes 8-15 of their arena hold a profiler context (not 0);
 * the runtime stores it (or 0) there before every run. A descriptor is
 * "node\x1fop type\x1fprovider\x1fJSON args" (without braces). */
#define KILN_MODEL_PROFILE_HOOKS 32u
#define KILN_MODEL_FALLBACK_PROFILE_HOOKS 64u
#define KILN_MODEL_DEVICE_IO_PROFILE_HOOKS 128u
#define KILN_MODEL_RUNTIME_SIZES 256u
/* ABI 10. Some partition runs on AMX tiles (Intel AMX-INT8: kiln compile
 * for a CPU that has it). On Linux a process must ask for the tile state
 * (arch_prctl ARCH_REQ_XCOMP_PERM) before its first tile instruction; the
 * runtime does so when it creates a session, and refuses the model when
 * the machine or the OS cannot give it. */
#define KILN_MODEL_AMX_TILES 512u

/* ABI 9 size programs (output_sizes). */
#define KILN_SIZE_CONST 0    /* push operand */
#define KILN_SIZE_SYMBOL 1   /* push the value of symbol `operand` */
#define KILN_SIZE_ADD 2      /* pop b, a; push a + b */
#define KILN_SIZE_MUL 3      /* a * b */
#define KILN_SIZE_FLOORDIV 4 /* floor(a / b) */
#define KILN_SIZE_CEILDIV 5  /* ceil(a / b) */
#define KILN_SIZE_MOD 6      /* a - b * floor(a / b) */
#define KILN_SIZE_END 7      /* the one value left is the size */
/* Where a model with run-time sizes finds them in its arena. */
#define KILN_ARENA_ALLOCATOR 16
#define KILN_ARENA_SIZES 24

#define KILN_PROVIDER_CUDA 1u

/* ABI 6 value kinds. An optional tensor is a kiln_sequence that is none or
 * holds exactly one element. */
#define KILN_VALUE_TENSOR 0
#define KILN_VALUE_SEQUENCE 1
#define KILN_VALUE_OPTIONAL 2
#define KILN_VALUE_OPTIONAL_SEQUENCE 3
/* An output tensor whose shape is known only at run time (NonZero, Unique,
 * ...): the caller passes a kiln_sequence that the run fills with exactly
 * one element, the tensor (not none). Only outputs have this kind; the
 * partitions set its slot to a handle, as for a sequence output, and its
 * kiln_tensor_info gives the dtype and what is known of the shape (rank
 * -1 when unknown, -1 for an unknown dimension). */
#define KILN_VALUE_DYNAMIC 4

/* Every compiled model object defines
 *   const kiln_model_info *kiln_model_<name>(void);
 * and a weak alias with the fixed name below, so that a generic loader can
 * dlsym() it in any libNAME.so. */
#define KILN_MODEL_ENTRY_SYMBOL "kiln_model"
typedef const kiln_model_info *(*kiln_model_entry_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* KILN_MODEL_ABI_H */
