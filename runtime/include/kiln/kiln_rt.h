/* libkiln_rt: loads nothing, links nothing heavy; it validates caller
 * tensors against a compiled model's kiln_model_info, owns the per-session
 * arena and calls the model's partitions in order.
 *
 * Threading: distinct sessions may run concurrently from different threads,
 * also sessions of the same model (each owns its arena). One session must
 * not be used by two threads at once. Global mutable state: the
 * thread-local message behind kiln_last_error(), and for CUDA the driver
 * (loaded once), its module cache and stream/event pools (all locked).
 *
 * libkiln_rt also defines the mgpu* functions that CUDA partitions lowered
 * by MLIR's gpu-to-llvm call (mgpuLaunchKernel, mgpuMemcpy, ...), and the
 * kilnSeq* functions that models with sequence or optional values call, and
 * kilnNonZero, kilnCompress, kilnUnique and kilnNonMaxSuppression, which
 * compute tensors whose shape only the data decides. A
 * program that dlopen()s model libraries must export them: link
 * libkiln_rt.so, or libkiln_rt.a with -rdynamic (kiln-run does). */
#ifndef KILN_RT_H
#define KILN_RT_H

#include <stddef.h>
#include <stdint.h>

#include "kiln/model_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum kiln_status {
  KILN_OK = 0,
  KILN_ERROR_INVALID_ARGUMENT = 1,
  KILN_ERROR_SHAPE_MISMATCH = 2,
  KILN_ERROR_DTYPE_MISMATCH = 3,
  KILN_ERROR_OUT_OF_MEMORY = 4,
  KILN_ERROR_ABI_MISMATCH = 5,
  KILN_ERROR_PROVIDER = 6,
  KILN_ERROR_INTERNAL = 7,
  /* Makes every int32 a valid kiln_status in C++ (no UB on bad codes). */
  KILN_STATUS_MAX_ENUM = 0x7fffffff
} kiln_status;

typedef struct kiln_session kiln_session;

/* A caller-owned dense row-major buffer. For a model input/output that is
 * a sequence or optional value (kiln_model_info.input_kinds/output_kinds),
 * `data` is a kiln_sequence* instead and only `name` and `data` are read;
 * a run sets an output sequence's contents once it has succeeded. So for
 * an output of kind KILN_VALUE_DYNAMIC (a tensor whose shape only the run
 * decides): a successful run leaves the kiln_sequence not none with one
 * element, the tensor. */
typedef struct kiln_tensor {
  const char *name; /* may be NULL: then matched by position */
  int32_t dtype;    /* kiln_dtype */
  int32_t rank;
  const int64_t *shape; /* outputs: rank 0 with NULL shape skips the check */
  void *data;
  uint64_t size_bytes; /* capacity of data; must cover the model's tensor */
} kiln_tensor;

const char *kiln_status_string(kiln_status status);

/* A sequence of tensors of one dtype (ONNX seq(tensor)), or an optional
 * value: an optional tensor is none or holds one element, an optional
 * sequence is none or a sequence. Elements are copied in and immutable;
 * strings are not supported. Not thread-safe: one writer at a time. */
typedef struct kiln_sequence kiln_sequence;
kiln_status kiln_sequence_create(int32_t dtype, kiln_sequence **out);
void kiln_sequence_destroy(kiln_sequence *seq);
int32_t kiln_sequence_dtype(const kiln_sequence *seq);
int64_t kiln_sequence_length(const kiln_sequence *seq);
/* A new sequence is empty and not none. */
int32_t kiln_sequence_is_none(const kiln_sequence *seq);
/* Setting none also removes the elements. */
void kiln_sequence_set_none(kiln_sequence *seq, int32_t none);
/* Appends a copy of tensor->data (dense row-major, rank/shape as given;
 * dtype must be the sequence's). Fails on a none value. */
kiln_status kiln_sequence_append(kiln_sequence *seq, const kiln_tensor *tensor);
/* Element `index` (0 <= index < length) as a read-only view: dtype, rank,
 * shape, data and size_bytes (name NULL), valid until seq changes or is
 * destroyed. */
kiln_status kiln_sequence_at(const kiln_sequence *seq, int64_t index,
                             kiln_tensor *view);
/* Removes the elements (a none value stays none). */
void kiln_sequence_clear(kiln_sequence *seq);
/* Bytes per element, 0 if unknown or not byte-sized (string, int4). */
size_t kiln_dtype_size(int32_t dtype);
/* numpy-style name: "float32", "int64", ...; "unknown" otherwise. */
const char *kiln_dtype_name(int32_t dtype);
/* A float16 (IEEE binary16) or bfloat16 value, given as its bits, as
 * float: exact, subnormals, infinities and NaN included. */
float kiln_float16_to_float(uint16_t bits);
float kiln_bfloat16_to_float(uint16_t bits);

kiln_status kiln_session_create(const kiln_model_info *model,
                                kiln_session **out);

/* Execution providers. A model whose required_providers include
 * KILN_PROVIDER_CUDA runs its CUDA partitions when the CUDA driver
 * (libcuda.so.1, loaded at run time; $KILN_CUDA_DRIVER overrides the path)
 * finds a device, and otherwise its CPU fallback partitions; the choice is
 * made once, at create. $KILN_FORCE_CPU=1 acts like force_cpu for every
 * session. */
typedef struct kiln_session_options {
  int32_t force_cpu; /* nonzero: run the CPU fallback even if CUDA works */
  /* Threads for the model's parallel loops (ONNX Runtime's
   * intra_op_num_threads): 0 picks $KILN_NUM_THREADS if set, else the
   * machine's physical cores; 1 runs on the caller's thread alone. The
   * threads come from one pool shared by every session of the process;
   * the caller's thread is one of them; each worker is pinned to a core
   * of its own ($KILN_PIN_THREADS=0: unpinned). Results are the same at
   * any count. */
  int32_t num_threads;
  /* An app that makes its own threads (ONNX Runtime's custom thread
   * hooks): with both set, the session gets a pool of its own whose
   * num_threads - 1 workers are started at create by
   * create_thread(thread_user, worker, arg), a thread that must call
   * worker(arg) and return the handle it is joined by, and joined at
   * destroy by join_thread(thread_user, handle). A NULL handle fails the
   * create. Both NULL: the shared pool. */
  void *(*create_thread)(void *thread_user, void (*worker)(void *arg),
                         void *arg);
  void (*join_thread)(void *thread_user, void *handle);
  void *thread_user;
} kiln_session_options;

/* options may be NULL (defaults: all zero). */
kiln_status kiln_session_create_with_options(const kiln_model_info *model,
                                             const kiln_session_options *options,
                                             kiln_session **out);
/* The threads a run of the session uses (its num_threads, resolved). */
int32_t kiln_session_num_threads(const kiln_session *session);
/* "cuda" when the session runs the model's CUDA partitions, else "cpu". */
const char *kiln_session_provider(const kiln_session *session);
/* Why a model that wants CUDA runs on the CPU ("CPU requested", "CUDA
 * unavailable: no CUDA driver: ..."); "" otherwise. */
const char *kiln_session_provider_note(const kiln_session *session);
void kiln_session_destroy(kiln_session *session);
const kiln_model_info *kiln_session_model(const kiln_session *session);
/* A model with run-time sizes (kiln_model_has_runtime_sizes) takes any
 * size of its symbolic dimensions; size its outputs with
 * kiln_model_output_shape. A model with shape variants runs
 * the variant that kiln_model_select picks for the inputs (creating its
 * session on first use, variant 0's at create); its outputs must have that
 * variant's shapes. */
/* On a "cuda" session, a CUDA failure inside the partitions (launch, copy,
 * allocation, kernel fault) returns KILN_ERROR_PROVIDER with the driver's
 * message; the outputs are then undefined. The session makes device 0's
 * primary context current on the calling thread. A sequence operation
 * of the model that fails (a position out of range, an element whose shape
 * differs from the compiled one) fails the run with its message, leaving
 * the sequence/optional outputs untouched. Strings the
 * run makes (StringConcat) belong to the session until its next run. */
kiln_status kiln_session_run(kiln_session *session, const kiln_tensor *inputs,
                             int32_t num_inputs, kiln_tensor *outputs,
                             int32_t num_outputs);
/* Device-resident inputs and outputs (like ONNX Runtime's IOBinding).
 * On a "cuda" session of a model compiled with CUDA partitions (model ABI
 * 5), kiln_session_run_device takes every input's and output's `data` as
 * a device pointer (CUdeviceptr) and runs the model's device I/O variant:
 * inputs are read and outputs written in device memory, and host copies
 * are made only for the ops that run on the host. It returns
 * KILN_ERROR_PROVIDER on a CPU session, for a model without that variant
 * (kiln_session_has_device_io says which) and for a model with sequence,
 * optional or dynamic-shape inputs/outputs. Shapes, dtypes and sizes are checked as by
 * kiln_session_run. */
int32_t kiln_session_has_device_io(const kiln_session *session);
kiln_status kiln_session_run_device(kiln_session *session,
                                    const kiln_tensor *inputs,
                                    int32_t num_inputs, kiln_tensor *outputs,
                                    int32_t num_outputs);
/* Device memory on device 0 through the lazily loaded driver, so that an
 * app need not link the CUDA runtime: KILN_ERROR_PROVIDER without CUDA.
 * kiln_device_copy copies between any two host or device pointers
 * (unified addressing) and returns when the copy is done. */
kiln_status kiln_device_alloc(uint64_t size_bytes, void **device_ptr);
kiln_status kiln_device_free(void *device_ptr);
kiln_status kiln_device_copy(void *dst, const void *src, uint64_t size_bytes);

/* What input/output `index` is (KILN_VALUE_*): KILN_VALUE_TENSOR for a
 * model before ABI 6 or without input/output kinds, and out of range. */
int32_t kiln_model_value_kind(const kiln_model_info *model, int32_t is_output,
                              int32_t index);

/* The shape of input/output `index` as compiled (rank entries written to
 * `shape`): -1 for a symbolic dimension (size those with
 * kiln_model_output_shape or, with shape variants, on the variant that
 * kiln_model_select picks). For a sequence or optional value, the model's
 * element shape as is (-1: unknown; nothing when the rank is -1). */
void kiln_model_shape_at(const kiln_model_info *model, int32_t is_output,
                         int32_t index, int64_t *shape);
/* The shape function of a model compiled with run-time sizes
 * (KILN_MODEL_RUNTIME_SIZES, kiln_model_has_runtime_sizes): the shape of
 * output `index` (rank entries written to `shape`) for `inputs`, matched
 * like kiln_session_run's; only their shapes are read. Size each output
 * buffer with it before the run. KILN_ERROR_SHAPE_MISMATCH (kiln_last_error
 * says why) when two inputs disagree on a symbolic dimension or one
 * exceeds its bound (kiln compile --dim-max). For a model with shape
 * variants, the shape on the variant kiln_model_select picks for `inputs`
 * (failing as it does). For any other model, its shape as compiled
 * (kiln_model_shape_at). */
kiln_status kiln_model_output_shape(const kiln_model_info *model,
                                    const kiln_tensor *inputs,
                                    int32_t num_inputs, int32_t index,
                                    int64_t *shape);
int32_t kiln_model_has_runtime_sizes(const kiln_model_info *model);
/* For a model with run-time sizes, the symbol (an index into its
 * symbol_names) that sizes dimension `dim` of input `input`; -1 for a
 * static dimension, any other model, or out of range. */
int32_t kiln_model_dim_symbol(const kiln_model_info *model, int32_t input,
                              int32_t dim);
/* Shape variants (KILN_MODEL_SHAPE_VARIANTS): the compiled variant of
 * `model` that runs `inputs` (matched like kiln_session_run's), whose
 * shapes are all static: size output buffers with kiln_model_shape_at
 * on it. For sizes no listed variant has, it may be the model's generic
 * code (kiln_model_has_runtime_sizes): size them with
 * kiln_model_output_shape. The model itself when it has no variants;
 * KILN_ERROR_SHAPE_MISMATCH (kiln_last_error says why) when none
 * matches. */
kiln_status kiln_model_select(const kiln_model_info *model,
                              const kiln_tensor *inputs, int32_t num_inputs,
                              const kiln_model_info **variant);

/* Message of the last failed call on this session, "" if none failed yet.
 * Not cleared by later successful calls. */
const char *kiln_session_error(const kiln_session *session);
/* Message of the last failure on the calling thread (covers create). */
const char *kiln_last_error(void);

/* Providers this machine can run (ONNX Runtime's get_available_providers):
 * every provider libkiln_rt knows, "cpu" first and always available, with
 * the reason for each one that is not ("libcuda.so.1 cannot be loaded: ...",
 * "no CUDA device"). */
typedef struct kiln_provider_status {
  const char *name;   /* "cpu", "cuda" */
  int32_t available;  /* 1 or 0 */
  const char *reason; /* "" when available */
  const char *device; /* the device it would run on ("" if none) */
} kiln_provider_status;
/* Fills up to `capacity` entries of `out` (NULL with 0 to count) and returns
 * how many providers there are. The strings live until the process ends. */
int32_t kiln_available_providers(kiln_provider_status *out, int32_t capacity);

/* Profiling */
typedef enum kiln_event_kind {
  KILN_EVENT_PARTITION = 0,
  KILN_EVENT_KERNEL = 1,
  KILN_EVENT_TRANSFER = 2,
  KILN_EVENT_RUN = 3,
  /* One ONNX node's kernel on the host: name is the node, op_name its op
   * type, args_json its ONNX Runtime-style args (ABI 8 models). */
  KILN_EVENT_NODE = 4
} kiln_event_kind;

typedef struct kiln_profile_event {
  const char *name;
  const char *provider;
  const char *op_name;
  int32_t kind;         /* kiln_event_kind */
  uint64_t start_ns;    /* std::chrono::steady_clock */
  uint64_t duration_ns; /* 0 at begin */
  uint64_t bytes;
  /* KILN_EVENT_NODE: the members of the event's JSON "args" object without
   * braces (fused_nodes, input_type_shape, ...); else NULL. */
  const char *args_json;
} kiln_profile_event;

/* Called on the thread that runs the session; the event and its strings are
 * valid only during the call. */
typedef void (*kiln_profile_callback)(const kiln_profile_event *event,
                                      int32_t is_end, void *user);
/* NULL cb disables profiling. */
kiln_status kiln_session_set_profiler(kiln_session *session,
                                      kiln_profile_callback cb, void *user);

/* Collects end events from any number of sessions/threads. */
typedef struct kiln_trace kiln_trace;
kiln_trace *kiln_trace_create(void);
void kiln_trace_destroy(kiln_trace *trace);
/* A kiln_profile_callback; pass the kiln_trace* as user. */
void kiln_trace_callback(const kiln_profile_event *event, int32_t is_end,
                         void *trace);
/* Writes the collected events as Chrome trace JSON (chrome://tracing,
 * Perfetto), in the shape ONNX Runtime's profiler uses: host events on
 * tids 0, 1, ... (one per thread), device kernels and copies on tids -1,
 * -2, ... (one per device provider and thread that ran the session). */
kiln_status kiln_trace_write(const kiln_trace *trace, const char *path);

#ifdef __cplusplus
}
#endif

#endif /* KILN_RT_H */
