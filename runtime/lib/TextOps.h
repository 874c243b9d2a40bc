// The functions compiled model code calls for ONNX text operators
// (RegexFullMatch, TfIdfVectorizer); see TextOps.cpp. Each fills a result
// buffer of static shape that the compiled code owns (the last argument).
// Declared here so that the definitions and the tests agree on the
// signatures the compiler emits (see SequenceOps.h for the conventions).
#ifndef KILN_RUNTIME_TEXTOPS_H
#define KILN_RUNTIME_TEXTOPS_H

#include <cstdint>

extern "C" {
/* RegexFullMatch: Out[i] (a bool byte) = whether the whole of string i of
   the Count at Strings (const char *, UTF-8) matches the pattern at
   Pattern. */
void kilnRegexFullMatch(int64_t Strings, int64_t Count, int64_t Pattern,
                        int64_t Node, int64_t Out);
/* TfIdfVectorizer of Batch rows of Length elements at Data (DType int32,
   int64 or string) into float [Batch, OutWidth] at Out. Mode: 0 TF, 1 IDF,
   2 TFIDF. */
void kilnTfIdfVectorizer(int64_t Data, int32_t DType, int64_t Batch,
                         int64_t Length, int32_t Mode, int64_t MinGram,
                         int64_t MaxGram, int64_t MaxSkip, int64_t NgramCounts,
                         int64_t NumNgramCounts, int64_t NgramIndexes,
                         int64_t NumNgramIndexes, int64_t PoolInts,
                         int64_t PoolStrings, int64_t PoolSize, int64_t Weights,
                         int64_t OutWidth, int64_t Node, int64_t Out);
/* ONNX StringConcat of two NUL-terminated strings; the result is owned by
 * the session until its next run. */
int64_t kilnStringConcat(int64_t A, int64_t B, int64_t Node);
}

#endif // KILN_RUNTIME_TEXTOPS_H
