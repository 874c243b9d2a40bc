// The functions compiled models call for ONNX text operators
// (kilnRegexFullMatch, kilnTfIdfVectorizer), called directly inside a run
// scope. Expected values are ONNX's node tests and what onnx.reference
// gives (computed once with onnx 1.x's ReferenceEvaluator).
#include "../../runtime/lib/TextOps.h"
#include "../../runtime/lib/Sequence.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

using kiln::rt::SeqRunScope;

namespace {

int64_t addr(const void *P) {
  return static_cast<int64_t>(reinterpret_cast<uintptr_t>(P));
}

const char Node[] = "node \"t\" (TextOp)";
const int64_t NodeAddr = addr(Node);

using I64 = std::vector<int64_t>;
using F32 = std::vector<float>;
using Bytes = std::vector<uint8_t>;

struct TextOps : ::testing::Test {
  kiln_status status() const { return Run->run().Status; }
  const std::string &error() const { return Run->run().Error; }

  /// kilnRegexFullMatch of Strings; the output starts as 0xAA bytes.
  Bytes fullMatch(const std::vector<const char *> &Strings,
                  const char *Pattern) {
    Bytes Out(Strings.size(), 0xaa);
    kilnRegexFullMatch(addr(Strings.data()),
                       static_cast<int64_t>(Strings.size()), addr(Pattern),
                       NodeAddr, addr(Out.data()));
    return Out;
  }

  std::unique_ptr<SeqRunScope> Run = std::make_unique<SeqRunScope>();
};

/// A TfIdfVectorizer node's attributes.
struct TfIdf {
  int32_t Mode = 0; // 0 TF, 1 IDF, 2 TFIDF
  int64_t MinGram = 1, MaxGram = 1, MaxSkip = 0;
  I64 Counts, Indexes, PoolInts;
  std::vector<const char *> PoolStrings;
  F32 Weights;

  int64_t outWidth() const {
    int64_t W = 0;
    for (int64_t I : Indexes)
      W = std::max(W, I + 1);
    return W;
  }

  /// Runs it on Batch rows of Length elements at Data; the output starts
  /// as NaN.
  F32 run(const void *Data, int32_t DType, int64_t Batch,
          int64_t Length) const {
    int64_t Width = outWidth();
    F32 Out(static_cast<size_t>(Batch * Width), std::nanf(""));
    int64_t PoolSize = PoolInts.empty()
                           ? static_cast<int64_t>(PoolStrings.size())
                           : static_cast<int64_t>(PoolInts.size());
    kilnTfIdfVectorizer(addr(Data), DType, Batch, Length, Mode, MinGram,
                        MaxGram, MaxSkip,
                        Counts.empty() ? 0 : addr(Counts.data()),
                        static_cast<int64_t>(Counts.size()),
                        Indexes.empty() ? 0 : addr(Indexes.data()),
                        static_cast<int64_t>(Indexes.size()),
                        PoolInts.empty() ? 0 : addr(PoolInts.data()),
                        PoolStrings.empty() ? 0 : addr(PoolStrings.data()),
                        PoolSize, Weights.empty() ? 0 : addr(Weights.data()),
                        Width, NodeAddr, addr(Out.data()));
    return Out;
  }
};

/// The pool of ONNX's tfidfvectorizer node tests: unigrams 2 3 5 4, then
/// bigrams (5 6) (7 8) (6 7).
TfIdf onnxNode(int64_t MinGram, int64_t MaxGram, int64_t MaxSkip) {
  TfIdf T;
  T.MinGram = MinGram;
  T.MaxGram = MaxGram;
  T.MaxSkip = MaxSkip;
  T.Counts = {0, 4};
  T.Indexes = {0, 1, 2, 3, 4, 5, 6};
  T.PoolInts = {2, 3, 5, 4, 5, 6, 7, 8, 6, 7};
  return T;
}

// The input of ONNX's node tests: 1-D [12], or as a batch [2, 6].
const std::vector<int32_t> OnnxInput{1, 1, 3, 3, 3, 7, 8, 6, 7, 5, 6, 8};

// --- RegexFullMatch
// -----------------------------------------------------------

TEST_F(TextOps, RegexOnnxBasic) {
  Bytes Out = fullMatch({"www.google.com", "www.facebook.com", "www.bbc.co.uk"},
                        R"(www\.[\w.-]+\.\bcom\b)");
  EXPECT_EQ(status(), KILN_OK) << error();
  EXPECT_EQ(Out, (Bytes{1, 1, 0}));
}

TEST_F(TextOps, RegexOnnxEmailDomain) {
  // [2, 2], row-major.
  Bytes Out = fullMatch({"account@gmail.com", "account@hotmail.com",
                         "not email", "account2@yahoo.com"},
                        R"((\W|^)[\w.\-]{0,25}@(yahoo|gmail)\.com(\W|$))");
  EXPECT_EQ(status(), KILN_OK) << error();
  EXPECT_EQ(Out, (Bytes{1, 0, 0, 1}));
}

TEST_F(TextOps, RegexOnnxEmpty) {
  // [2, 0]: nothing to match, but the pattern is still compiled.
  Bytes Out = fullMatch({}, R"((\W|^)[\w.\-]{0,25}@(yahoo|gmail)\.com(\W|$))");
  EXPECT_EQ(status(), KILN_OK) << error();
  EXPECT_TRUE(Out.empty());
}

TEST_F(TextOps, RegexWholeStringOnly) {
  // A match of a part is no full match; anchors, alternation, {m,n}.
  Bytes Out =
      fullMatch({"abc", "xabc", "abcx", "", "ab", "abab"}, "(ab|abc)(ab){0,1}");
  EXPECT_EQ(status(), KILN_OK) << error();
  EXPECT_EQ(Out, (Bytes{1, 0, 0, 0, 1, 1}));
  Out = fullMatch({"", "a"}, "^$");
  EXPECT_EQ(Out, (Bytes{1, 0}));
  Out = fullMatch({"12 34", "12  34", "1a 34"}, R"(\d+\s\d+)");
  EXPECT_EQ(Out, (Bytes{1, 0, 0}));
  EXPECT_EQ(status(), KILN_OK) << error();
}

TEST_F(TextOps, RegexMatchesCodePoints) {
  // UTF-8 text is matched code point by code point (as RE2 and Python
  // do): "." is one character however many bytes it takes.
  Bytes Out = fullMatch({"\xc3\xa9",
                         "a\xe4\xb8\xad"
                         "c",
                         "\xf0\x9f\x98\x80", "ab"},
                        "^.$|a.c");
  EXPECT_EQ(status(), KILN_OK) << error();
  EXPECT_EQ(Out, (Bytes{1, 1, 1, 0}));
  // \w, \d and \s are ASCII-only, as in RE2 (Python's re, which
  // onnx.reference uses, would match "h\u00e9llo").
  Out = fullMatch({"hello", "h\xc3\xa9llo"}, R"(\w+)");
  EXPECT_EQ(Out, (Bytes{1, 0}));
  EXPECT_EQ(status(), KILN_OK) << error();
}

TEST_F(TextOps, RegexLongText) {
  // The matcher's stack does not grow with the text.
  std::string Long(200000, 'a');
  Long += "b";
  Bytes Out = fullMatch({Long.c_str()}, "(a|c)*b");
  EXPECT_EQ(status(), KILN_OK) << error();
  EXPECT_EQ(Out, (Bytes{1}));
}

TEST_F(TextOps, RegexInvalidPattern) {
  Bytes Out = fullMatch({"abc", "(abc"}, "(abc");
  EXPECT_EQ(status(), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(error().rfind(std::string(Node) + ": invalid pattern \"(abc\"", 0),
            0u)
      << error();
  EXPECT_EQ(Out, (Bytes{0, 0})); // zeroed
}

TEST_F(TextOps, RegexAfterFailureOnlyZeroes) {
  fullMatch({"a"}, "[");
  ASSERT_EQ(status(), KILN_ERROR_INVALID_ARGUMENT);
  std::string First = error();
  Bytes Out = fullMatch({"a"}, "a");
  EXPECT_EQ(Out, (Bytes{0}));
  EXPECT_EQ(error(), First);
}

// --- TfIdfVectorizer: ONNX's node tests --------------------------------------

TEST_F(TextOps, TfIdfOnnxOnlyBigramsSkip0) {
  F32 Y = onnxNode(2, 2, 0).run(OnnxInput.data(), KILN_DTYPE_INT32, 1, 12);
  EXPECT_EQ(status(), KILN_OK) << error();
  EXPECT_EQ(Y, (F32{0, 0, 0, 0, 1, 1, 1}));
}

TEST_F(TextOps, TfIdfOnnxBatchOnlyBigramsSkip0) {
  F32 Y = onnxNode(2, 2, 0).run(OnnxInput.data(), KILN_DTYPE_INT32, 2, 6);
  EXPECT_EQ(status(), KILN_OK) << error();
  EXPECT_EQ(Y, (F32{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1}));
}

TEST_F(TextOps, TfIdfOnnxOnlyBigramsLevelEmpty) {
  TfIdf T;
  T.MinGram = T.MaxGram = 2;
  T.Counts = {0, 0};
  T.Indexes = {0, 1, 2};
  T.PoolInts = {5, 6, 7, 8, 6, 7}; // no unigrams, bigrams
  F32 Y = T.run(OnnxInput.data(), KILN_DTYPE_INT32, 1, 12);
  EXPECT_EQ(status(), KILN_OK) << error();
  EXPECT_EQ(Y, (F32{1, 1, 1}));
}

TEST_F(TextOps, TfIdfOnnxOnlyBigramsSkip5) {
  F32 Y = onnxNode(2, 2, 5).run(OnnxInput.data(), KILN_DTYPE_INT32, 1, 12);
  EXPECT_EQ(status(), KILN_OK) << error();
  EXPECT_EQ(Y, (F32{0, 0, 0, 0, 1, 3, 1}));
}

TEST_F(TextOps, TfIdfOnnxBatchOnlyBigramsSkip5) {
  F32 Y = onnxNode(2, 2, 5).run(OnnxInput.data(), KILN_DTYPE_INT32, 2, 6);
  EXPECT_EQ(status(), KILN_OK) << error();
  EXPECT_EQ(Y, (F32{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1}));
}

TEST_F(TextOps, TfIdfOnnxUniAndBigramsSkip5) {
  F32 Y = onnxNode(1, 2, 5).run(OnnxInput.data(), KILN_DTYPE_INT32, 1, 12);
  EXPECT_EQ(status(), KILN_OK) << error();
  EXPECT_EQ(Y, (F32{0, 3, 1, 0, 1, 3, 1}));
}

TEST_F(TextOps, TfIdfOnnxBatchUniAndBigramsSkip5) {
  F32 Y = onnxNode(1, 2, 5).run(OnnxInput.data(), KILN_DTYPE_INT32, 2, 6);
  EXPECT_EQ(status(), KILN_OK) << error();
  EXPECT_EQ(Y, (F32{0, 3, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 1, 1}));
}

// --- TfIdfVectorizer: onnx.reference
// ------------------------------------------

/// ONNX's pool with reversed ngram_indexes and weights, over int64 [2, 6].
TfIdf weighted(int32_t Mode) {
  TfIdf T = onnxNode(1, 2, 5);
  T.Mode = Mode;
  T.Indexes = {6, 5, 4, 3, 2, 1, 0};
  T.Weights = {0.1f, 0.25f, 1.7f, 3.0f, 0.3f, 2.2f, 1.1f};
  return T;
}
const I64 OnnxInput64(OnnxInput.begin(), OnnxInput.end());

TEST_F(TextOps, TfIdfWeightedTf) {
  F32 Y = weighted(0).run(OnnxInput64.data(), KILN_DTYPE_INT64, 2, 6);
  EXPECT_EQ(status(), KILN_OK) << error();
  EXPECT_EQ(Y, (F32{0, 0, 0, 0, 0, 3, 0, 1, 1, 1, 0, 1, 0, 0}));
}

TEST_F(TextOps, TfIdfWeightedIdf) {
  // The weight of the output column where the count is not 0.
  F32 Y = weighted(1).run(OnnxInput64.data(), KILN_DTYPE_INT64, 2, 6);
  EXPECT_EQ(status(), KILN_OK) << error();
  EXPECT_EQ(Y, (F32{0, 0, 0, 0, 0, 2.2f, 0, 0.1f, 0.25f, 1.7f, 0, 0.3f, 0, 0}));
}

TEST_F(TextOps, TfIdfWeightedTfIdf) {
  // 2.2f * 3 in double, rounded: 6.6000004f (0x40d33334).
  F32 Y = weighted(2).run(OnnxInput64.data(), KILN_DTYPE_INT64, 2, 6);
  EXPECT_EQ(status(), KILN_OK) << error();
  uint32_t Bits;
  std::memcpy(&Bits, &Y[5], 4);
  EXPECT_EQ(Bits, 0x40d33334u);
  EXPECT_EQ(
      Y, (F32{0, 0, 0, 0, 0, 6.6000004f, 0, 0.1f, 0.25f, 1.7f, 0, 0.3f, 0, 0}));
  // 1-D.
  Y = weighted(2).run(OnnxInput64.data(), KILN_DTYPE_INT64, 1, 12);
  EXPECT_EQ(status(), KILN_OK) << error();
  EXPECT_EQ(Y, (F32{0.1f, 0.75f, 1.7f, 0, 0.3f, 6.6000004f, 0}));
}

TEST_F(TextOps, TfIdfWithoutWeights) {
  // IDF: 1 where the count is not 0; TFIDF: the counts (onnx.reference
  // fails on len(None) here; this is its branch for empty weights).
  TfIdf T = onnxNode(1, 2, 5);
  T.Mode = 1;
  F32 Y = T.run(OnnxInput.data(), KILN_DTYPE_INT32, 1, 12);
  EXPECT_EQ(Y, (F32{0, 1, 1, 0, 1, 1, 1}));
  T.Mode = 2;
  Y = T.run(OnnxInput.data(), KILN_DTYPE_INT32, 1, 12);
  EXPECT_EQ(Y, (F32{0, 3, 1, 0, 1, 3, 1}));
  EXPECT_EQ(status(), KILN_OK) << error();
}

const std::vector<const char *> Words{"the", "cat", "sat", "on",  "the", "mat",
                                      "the", "mat", "sat", "the", "cat", ""};

/// A string pool: unigrams the cat mat, bigrams (the cat) (sat on), the
/// trigram (the cat sat); 8 output columns.
TfIdf stringPool(int32_t Mode) {
  TfIdf T;
  T.Mode = Mode;
  T.MinGram = 1;
  T.MaxGram = 3;
  T.MaxSkip = 1;
  T.Counts = {0, 3, 7};
  T.Indexes = {0, 1, 2, 3, 4, 5, 6, 7};
  T.PoolStrings = {"the", "cat", "mat", "the", "cat",
                   "sat", "on",  "the", "cat", "sat"};
  if (Mode)
    T.Weights = {0.5f, 1.5f, 2.0f, 0.75f, 1.25f, 3.0f, 0.2f, 4.0f};
  return T;
}

TEST_F(TextOps, TfIdfStringPool) {
  F32 Y = stringPool(0).run(Words.data(), KILN_DTYPE_STRING, 2, 6);
  EXPECT_EQ(status(), KILN_OK) << error();
  EXPECT_EQ(Y, (F32{2, 1, 1, 1, 1, 1, 0, 0, 2, 1, 1, 1, 0, 0, 0, 0}));
  Y = stringPool(2).run(Words.data(), KILN_DTYPE_STRING, 2, 6);
  EXPECT_EQ(status(), KILN_OK) << error();
  EXPECT_EQ(Y, (F32{1, 1.5f, 2, 0.75f, 1.25f, 3, 0, 0, 1, 1.5f, 2, 0.75f, 0, 0,
                    0, 0}));
}

TEST_F(TextOps, TfIdfTrigramsSkipLengthsOutOfRange) {
  // ngram_counts [0, 2, 4] over 9 items: unigrams 1 2 (ids 1-2, below
  // min_gram_length, not counted), the bigram (1 2), the trigram (2 3 1)
  // (the pool's last 2 items make none).
  TfIdf T;
  T.MinGram = 2;
  T.MaxGram = 3;
  T.MaxSkip = 2;
  T.Counts = {0, 2, 4};
  T.Indexes = {0, 1, 2, 3, 4};
  T.PoolInts = {1, 2, 1, 2, 2, 3, 1, 2, 3};
  const std::vector<int32_t> X{1, 2, 3, 1, 2, 3, 1, 3, 2, 3};
  F32 Y = T.run(X.data(), KILN_DTYPE_INT32, 1, 10);
  EXPECT_EQ(status(), KILN_OK) << error();
  EXPECT_EQ(Y, (F32{0, 0, 3, 2, 0}));
}

TEST_F(TextOps, TfIdfMinGramAndLongSkips) {
  // min_gram_length 0 counts unigrams on every skip distance, as the
  // reference does; skips longer than the row change nothing else.
  struct Case {
    int64_t MinGram, MaxSkip;
    F32 Expected;
  } Cases[] = {{0, 3, {0, 12, 4, 0, 1, 2, 1}},
               {0, 20, {0, 63, 21, 0, 1, 3, 1}},
               {1, 20, {0, 3, 1, 0, 1, 3, 1}},
               {2, 30, {0, 0, 0, 0, 1, 3, 1}}};
  for (const Case &C : Cases) {
    TfIdf T = onnxNode(C.MinGram, 2, C.MaxSkip);
    EXPECT_EQ(T.run(OnnxInput64.data(), KILN_DTYPE_INT64, 1, 12), C.Expected)
        << "min_gram_length " << C.MinGram << ", max_skip_count " << C.MaxSkip;
  }
  EXPECT_EQ(status(), KILN_OK) << error();
}

TEST_F(TextOps, TfIdfKindsMustAgree) {
  // Strings never match an int pool, ints never a string pool.
  const std::vector<const char *> S{"1", "3", "5", "6"};
  F32 Y = onnxNode(1, 2, 0).run(S.data(), KILN_DTYPE_STRING, 1, 4);
  EXPECT_EQ(Y, F32(7, 0.0f));
  const std::vector<int32_t> X{1, 2, 3};
  Y = stringPool(0).run(X.data(), KILN_DTYPE_INT32, 1, 3);
  EXPECT_EQ(Y, F32(8, 0.0f));
  EXPECT_EQ(status(), KILN_OK) << error();
}

TEST_F(TextOps, TfIdfEmptyInput) {
  F32 Y = onnxNode(1, 2, 5).run(OnnxInput.data(), KILN_DTYPE_INT32, 2, 0);
  EXPECT_EQ(status(), KILN_OK) << error();
  EXPECT_EQ(Y, F32(14, 0.0f));
}

// --- TfIdfVectorizer: errors
// ----------------------------------------------------

TEST_F(TextOps, TfIdfNgramWithoutIndex) {
  TfIdf T = onnxNode(1, 2, 0);
  T.Indexes = {0, 1}; // the first one met beyond: n-gram 5, (7 8)
  F32 Y = T.run(OnnxInput.data(), KILN_DTYPE_INT32, 1, 12);
  EXPECT_EQ(status(), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(error(), std::string(Node) + ": n-gram 5 of the pool has no entry "
                                         "in ngram_indexes (2 entries)");
  EXPECT_EQ(Y, F32(2, 0.0f));
}

TEST_F(TextOps, TfIdfTooFewWeights) {
  TfIdf T = weighted(2);
  T.Indexes = {0, 1, 2, 3, 4, 5, 9};
  F32 Y = T.run(OnnxInput.data(), KILN_DTYPE_INT32, 1, 12);
  EXPECT_EQ(status(), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(error(), std::string(Node) + ": weights has 7 entries, fewer than "
                                         "the output's 10 columns");
  EXPECT_EQ(Y, F32(10, 0.0f));
}

TEST_F(TextOps, TfIdfNegativeNgramCounts) {
  TfIdf T = onnxNode(1, 2, 0);
  T.Counts = {0, -4};
  T.run(OnnxInput.data(), KILN_DTYPE_INT32, 1, 12);
  EXPECT_EQ(status(), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(error(), std::string(Node) + ": ngram_counts[1] is -4, negative");
}

TEST_F(TextOps, TfIdfUnsupportedDType) {
  const std::vector<float> X{1, 2};
  onnxNode(1, 2, 0).run(X.data(), KILN_DTYPE_FLOAT, 1, 2);
  EXPECT_EQ(status(), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(error().find("TfIdfVectorizer of "), std::string::npos) << error();
}

TEST(TextOpsNoRun, OutsideARunOnlyZeroes) {
  F32 Y = onnxNode(1, 2, 5).run(OnnxInput.data(), KILN_DTYPE_INT32, 1, 12);
  EXPECT_EQ(Y, F32(7, 0.0f));
  const std::vector<const char *> S{"a"};
  Bytes Out{0xaa};
  kilnRegexFullMatch(addr(S.data()), 1, addr("a"), NodeAddr, addr(Out.data()));
  EXPECT_EQ(Out, Bytes{0});
}

} // namespace

TEST(StringConcat, StringsLiveInTheSessionsStore) {
  std::deque<std::string> Store;
  int64_t Joined = 0;
  {
    SeqRunScope Run(&Store);
    Joined = kilnStringConcat(addr("kiln"), addr("_rt"), NodeAddr);
    EXPECT_EQ(Run.run().Status, KILN_OK);
  }
  // The run is over; the string stays until the store is cleared.
  ASSERT_NE(Joined, 0);
  EXPECT_STREQ(reinterpret_cast<const char *>(Joined), "kiln_rt");
  EXPECT_EQ(Store.size(), 1u);
}

TEST(StringConcat, NeedsAStoreAndStrings) {
  SeqRunScope Run;
  EXPECT_EQ(kilnStringConcat(addr("a"), addr("b"), NodeAddr), 0);
  EXPECT_EQ(Run.run().Status, KILN_ERROR_INTERNAL);
  std::deque<std::string> Store;
  SeqRunScope Inner(&Store);
  EXPECT_EQ(kilnStringConcat(0, addr("b"), NodeAddr), 0);
  EXPECT_EQ(Inner.run().Status, KILN_ERROR_INVALID_ARGUMENT);
}
