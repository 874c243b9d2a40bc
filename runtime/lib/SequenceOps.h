// The functions compiled model code calls for ONNX sequence and optional
// operators (model ABI 6); see SequenceOps.cpp. Declared here so that the
// definitions and the tests agree on the signatures the compiler emits:
// kiln.runtime_call passes its args in order, tensors as the i64 address
// of their dense buffer, then the address of each `outs` buffer.
#ifndef KILN_RUNTIME_SEQUENCEOPS_H
#define KILN_RUNTIME_SEQUENCEOPS_H

#include <cstdint>

extern "C" {
int64_t kilnSeqNew(int32_t DType, int32_t None);
int64_t kilnSeqInsert(int64_t Seq, int64_t Data, int32_t DType, int32_t Rank,
                      int64_t Dims, int64_t Position, int32_t HasPosition,
                      int64_t Node);
int64_t kilnSeqErase(int64_t Seq, int64_t Position, int32_t HasPosition,
                     int64_t Node);
int64_t kilnSeqLength(int64_t Seq, int64_t Node);
void kilnSeqAt(int64_t Seq, int64_t Position, int32_t HasPosition,
               int32_t DType, int32_t Rank, int64_t Dims, int64_t Node,
               int64_t Out);
int64_t kilnSeqSplit(int64_t Data, int32_t DType, int32_t Rank, int64_t Dims,
                     int64_t Axis, int64_t Split, int32_t SplitRank,
                     int64_t SplitLength, int32_t KeepDims, int64_t Node);
void kilnSeqConcat(int64_t Seq, int32_t DType, int32_t Rank, int64_t Dims,
                   int64_t Axis, int32_t NewAxis, int64_t Node, int64_t Out);
int64_t kilnSeqSome(int64_t Seq, int64_t Node);
int32_t kilnSeqHasValue(int64_t Seq, int64_t Node);
int64_t kilnSeqGetValue(int64_t Opt, int64_t Node);
int64_t kilnSeqSlice(int64_t Data, int32_t DType, int32_t Rank, int64_t Dims,
                     int64_t Start, int64_t Step, int64_t Size, int64_t Node);
/* 0 once a runtime call of the current run has failed. */
int32_t kilnRunOk(void);
/* ConcatFromSequence into a box, its shape made by the elements. */
int64_t kilnSeqConcatBox(int64_t Seq, int64_t Axis, int32_t NewAxis, int64_t Node);
/* A box (a one-element sequence) sharing element Position of Seq. */
int64_t kilnSeqAtBox(int64_t Seq, int64_t Position, int32_t HasPosition, int64_t Node);
int64_t kilnSeqInsertBox(int64_t Seq, int64_t Box, int64_t Position,
                         int32_t HasPosition, int64_t Node);
}

#endif // KILN_RUNTIME_SEQUENCEOPS_H
