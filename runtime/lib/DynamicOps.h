// The functions compiled model code calls for ONNX operators whose result
// shape only the data decides (NonZero, Compress, Unique,
// NonMaxSuppression); see DynamicOps.cpp. Each returns a box: a new
// one-element sequence, owned by the run, that holds the result tensor.
// Declared here so that the definitions and the tests agree on the
// signatures the compiler emits (see SequenceOps.h for the conventions).
#ifndef KILN_RUNTIME_DYNAMICOPS_H
#define KILN_RUNTIME_DYNAMICOPS_H

#include <cstdint>

extern "C" {
int64_t kilnNonZero(int64_t Data, int32_t DType, int32_t Rank, int64_t Dims,
                    int64_t Node);
int64_t kilnCompress(int64_t Data, int32_t DType, int32_t Rank, int64_t Dims,
                     int64_t Cond, int64_t CondLength, int64_t Axis,
                     int32_t HasAxis, int64_t Node);
int64_t kilnUnique(int64_t Data, int32_t DType, int32_t Rank, int64_t Dims,
                   int64_t Axis, int32_t HasAxis, int32_t Sorted,
                   int32_t Output, int64_t Node);
int64_t kilnNonMaxSuppression(int64_t Boxes, int64_t NumBatches,
                              int64_t NumBoxes, int64_t Scores,
                              int64_t NumClasses, int64_t MaxOutputPerClass,
                              double IouThreshold, double ScoreThreshold,
                              int32_t HasScoreThreshold, int32_t CenterPointBox,
                              int64_t Node);
}

#endif // KILN_RUNTIME_DYNAMICOPS_H
