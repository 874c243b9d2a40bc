// A stand-in for a kiln-compiled model with sequence and optional values
// (model ABI 6), for kiln-run's end-to-end tests. Like compiled code, it
// calls the runtime's kilnSeq* functions, left undefined here and resolved
// from the loading program.
//
// Inputs: "seq" (a sequence of float32), "x" float32[2,3], "maybe" (an
// optional float32[2,3]). Outputs: "out" = SequenceInsert(seq, x), "len"
// int64[1] = its length, "first" float32[2,3] = SequenceAt(seq, 0) (an
// error unless seq starts with a [2,3] tensor), "same" = maybe.
#include "kiln/model_abi.h"

#include <cstdint>

extern "C" {
int64_t kilnSeqInsert(int64_t, int64_t, int32_t, int32_t, int64_t, int64_t,
                      int32_t, int64_t);
int64_t kilnSeqLength(int64_t, int64_t);
void kilnSeqAt(int64_t, int64_t, int32_t, int32_t, int32_t, int64_t, int64_t,
               int64_t);
}

namespace {

const int64_t Shape23[2] = {2, 3};
const int64_t Shape1[1] = {1};

int64_t addressOf(const void *P) {
  return static_cast<int64_t>(reinterpret_cast<uintptr_t>(P));
}

int64_t slot(void *P) { return *static_cast<int64_t *>(P); }

void run(void *const *In, void *const *Out, void *) {
  static const char Insert[] = "node \"insert\" (SequenceInsert)";
  static const char Length[] = "node \"length\" (SequenceLength)";
  static const char At[] = "node \"first\" (SequenceAt)";
  int64_t Result =
      kilnSeqInsert(slot(In[0]), addressOf(In[1]), KILN_DTYPE_FLOAT, 2,
                    addressOf(Shape23), 0, 0, addressOf(Insert));
  *static_cast<int64_t *>(Out[0]) = Result;
  *static_cast<int64_t *>(Out[1]) = kilnSeqLength(Result, addressOf(Length));
  kilnSeqAt(slot(In[0]), 0, 1, KILN_DTYPE_FLOAT, 2, addressOf(Shape23),
            addressOf(At), addressOf(Out[2]));
  *static_cast<int64_t *>(Out[3]) = slot(In[2]);
}

const kiln_tensor_info Inputs[] = {{"seq", KILN_DTYPE_FLOAT, -1, nullptr},
                                   {"x", KILN_DTYPE_FLOAT, 2, Shape23},
                                   {"maybe", KILN_DTYPE_FLOAT, 2, Shape23}};
const kiln_tensor_info Outputs[] = {{"out", KILN_DTYPE_FLOAT, -1, nullptr},
                                    {"len", KILN_DTYPE_INT64, 1, Shape1},
                                    {"first", KILN_DTYPE_FLOAT, 2, Shape23},
                                    {"same", KILN_DTYPE_FLOAT, 2, Shape23}};
const int32_t InputKinds[] = {KILN_VALUE_SEQUENCE, KILN_VALUE_TENSOR,
                              KILN_VALUE_OPTIONAL};
const int32_t OutputKinds[] = {KILN_VALUE_SEQUENCE, KILN_VALUE_TENSOR,
                               KILN_VALUE_TENSOR, KILN_VALUE_OPTIONAL};
const kiln_partition_info Partitions[] = {{"cpu_0", "cpu", 4, run}};

kiln_model_info makeInfo() {
  kiln_model_info M{};
  M.abi_version = KILN_ABI_VERSION;
  M.name = "fakeseq";
  M.producer = "kiln test";
  M.num_inputs = 3;
  M.inputs = Inputs;
  M.num_outputs = 4;
  M.outputs = Outputs;
  M.num_partitions = 1;
  M.partitions = Partitions;
  M.input_kinds = InputKinds;
  M.output_kinds = OutputKinds;
  return M;
}

const kiln_model_info Info = makeInfo();

} // namespace

extern "C" const kiln_model_info *kiln_model(void) { return &Info; }
