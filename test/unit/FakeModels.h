// Hand-written stand-ins for compiled models: partitions are plain C++
// functions with the kiln_partition_fn signature.
#ifndef KILN_TEST_FAKEMODELS_H
#define KILN_TEST_FAKEMODELS_H

#include "kiln/kiln_rt.h"

#include <vector>

namespace fake {

/// "add": inputs a, b float32[2,3]; output y = a + b; one partition, no
/// arena.
const kiln_model_info *addModel();

/// "two": inputs a, b float32[2,3]; outputs sum float32[2,3] = 2a + b and
/// arena_ok int32[1] (1 when the arena is 64-byte aligned). Partition
/// "scale" (provider "cpu") writes 2a to the 24-byte arena, partition
/// "accumulate" (provider "fake_accel") adds b.
const kiln_model_info *twoPartitionModel();

/// "scale_batch", made by older kilns (KILN_MODEL_DYNAMIC_BATCH, refused): x
/// float32[1,3] per sample (axis 0), w float32[3] shared; output y = x * w
/// per sample and wsum float32[1] = sum(w), the same for every sample.
const kiln_model_info *batchModel();

/// "seq_insert" (ABI 6): inputs seq (a sequence of float32 of any shape),
/// x float32[2,3] and pos int64[1]; outputs out = SequenceInsert(seq, x,
/// pos) (a sequence of float32) and len int64[1] = its length. The
/// partition calls kilnSeqInsert and kilnSeqLength like compiled code.
const kiln_model_info *seqInsertModel();

/// "opt_get" (ABI 6): input maybe (an optional sequence of float32[?,3]);
/// outputs has bool[1] = OptionalHasElement(maybe) and seq =
/// OptionalGetElement(maybe) (a sequence), which fails on none.
const kiln_model_info *optionalGetModel();

/// "dynamic" (ABI 6): input x float32[2,3]; outputs idx = NonZero(x) and
/// u = Unique(x) (sorted values), both of kind KILN_VALUE_DYNAMIC (int64
/// [2,?] and float32 of unknown rank), and n int64[1], the count of
/// nonzeros. The partition calls kilnNonZero and kilnUnique like compiled
/// code.
const kiln_model_info *dynamicModel();

/// The "add" model as a runtime of ABI `Abi` sees it: only the first
/// `Prefix` bytes (offsetof the first later field) are its own, the rest
/// is 0xff poison that reading a later field would trip over.
struct OldAbiAdd {
  OldAbiAdd(uint32_t Abi, size_t Prefix);
  kiln_model_info *info() { return reinterpret_cast<kiln_model_info *>(Buf.data()); }
  std::vector<unsigned char> Buf;
};

/// A model info of the current ABI with these tensors and (optionally) one
/// partition; every other field zero.
kiln_model_info modelInfo(const char *Name, const kiln_tensor_info *In, int32_t NumIn,
                          const kiln_tensor_info *Out, int32_t NumOut,
                          const kiln_partition_info *Part = nullptr);

/// A kiln_tensor over V with the given name (may be null).
kiln_tensor floatTensor(const char *Name, std::vector<float> &V,
                        const int64_t *Shape, int32_t Rank);

extern const int64_t Shape23[2];

} // namespace fake

#endif // KILN_TEST_FAKEMODELS_H
