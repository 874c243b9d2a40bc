// ONNX text operators as functions that compiled model code calls:
// RegexFullMatch and TfIdfVectorizer. Each fills a result buffer of static
// shape that the compiled code owns; it is zeroed first, so that a failed
// call (or one after the run failed) leaves zeros, not garbage. Conventions
// as in SequenceOps.cpp: pointers travel as int64, `Node` names the calling
// node in error messages, and a failure is recorded in the thread's current
// run. Semantics follow the ONNX reference implementation
// (onnx.reference.ops).
#include "TextOps.h"

#include "RunCall.h"

#include <cstring>
#include <locale>
#include <map>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

using namespace kiln::rt;

namespace {

// --- RegexFullMatch ----------------------------------------------------------

static_assert(sizeof(wchar_t) == 4, "code points must fit in a wchar_t");

/// The code points of the UTF-8 text S; each byte of an invalid sequence
/// becomes U+FFFD. Valid says whether there was none.
std::wstring decodeUtf8(std::string_view S, bool &Valid) {
  std::wstring W;
  W.reserve(S.size());
  Valid = true;
  size_t I = 0, N = S.size();
  while (I < N) {
    auto B = static_cast<unsigned char>(S[I]);
    uint32_t C;
    size_t Len;
    if (B < 0x80) {
      C = B;
      Len = 1;
    } else if (B >= 0xc2 && B <= 0xdf) {
      C = B & 0x1f;
      Len = 2;
    } else if (B >= 0xe0 && B <= 0xef) {
      C = B & 0x0f;
      Len = 3;
    } else if (B >= 0xf0 && B <= 0xf4) {
      C = B & 0x07;
      Len = 4;
    } else {
      Len = 0; // a continuation byte, or one never used
    }
    bool Ok = Len != 0 && I + Len <= N;
    for (size_t K = 1; Ok && K < Len; ++K) {
      auto Next = static_cast<unsigned char>(S[I + K]);
      if ((Next & 0xc0) != 0x80)
        Ok = false;
      else
        C = (C << 6) | (Next & 0x3f);
    }
    // No overlong forms, surrogates or code points past U+10FFFF.
    if (Ok && ((Len == 3 && C < 0x800) || (Len == 4 && C < 0x10000) ||
               (C >= 0xd800 && C <= 0xdfff) || C > 0x10ffff))
      Ok = false;
    if (!Ok) {
      Valid = false;
      W.push_back(static_cast<wchar_t>(0xfffd));
      ++I;
      continue;
    }
    W.push_back(static_cast<wchar_t>(C));
    I += Len;
  }
  return W;
}

/// The regex syntax: ECMAScript, matched code point by code point with
/// the classic locale (so \w, \d and \s are ASCII-only, as in RE2). With
/// libstdc++, without back-references (RE2 has none) and with its
/// breadth-first matcher, whose stack depth does not grow with the text.
std::regex_constants::syntax_option_type regexSyntax() {
  auto Flags = std::regex_constants::ECMAScript;
#ifdef __GLIBCXX__
  Flags |= std::regex_constants::__polynomial;
#endif
  return Flags;
}

// --- TfIdfVectorizer ---------------------------------------------------------

/// The reference's n-gram trie over keys of type Key (int64 or string):
/// node 0 is the root; a node's Id is its n-gram's (1-based) id, 0 for
/// none.
template <typename Key> struct NgramTrie {
  struct Part {
    int64_t Id = 0;
    std::map<Key, size_t, std::less<>> Leaves;
  };
  std::vector<Part> Parts = std::vector<Part>(1);

  /// The child of Parent for K, made (with Id 0) when there is none.
  size_t emplace(size_t Parent, const Key &K) {
    auto It = Parts[Parent].Leaves.find(K);
    if (It != Parts[Parent].Leaves.end())
      return It->second;
    Parts.emplace_back();
    size_t Child = Parts.size() - 1;
    Parts[Parent].Leaves.emplace(K, Child);
    return Child;
  }

  /// The child of Parent for K, or 0 (the root is nobody's child).
  template <typename Lookup> size_t find(size_t Parent, const Lookup &K) const {
    const auto &Leaves = Parts[Parent].Leaves;
    auto It = Leaves.find(K);
    return It == Leaves.end() ? 0 : It->second;
  }
};

/// The reference's populate_grams: NumNgrams n-grams of NgramSize keys
/// each from Pool[Index...], numbered from NgramId; the next id.
template <typename Key, typename PoolAt>
int64_t populateGrams(NgramTrie<Key> &Trie, PoolAt At, int64_t PoolSize,
                      int64_t Index, int64_t NumNgrams, int64_t NgramSize,
                      int64_t NgramId) {
  for (int64_t G = 0; G < NumNgrams; ++G) {
    int64_t N = 1;
    size_t M = 0;
    while (Index < PoolSize) {
      size_t P = Trie.emplace(M, At(Index));
      ++Index;
      if (N == NgramSize) {
        Trie.Parts[P].Id = NgramId++;
        break;
      }
      M = P;
      ++N;
    }
  }
  return NgramId;
}

struct TfIdfArgs {
  int64_t Batch, Length, MinGram, MaxGram, MaxSkip;
  const int64_t *Counts;
  int64_t NumCounts;
  const int64_t *Indexes;
  int64_t NumIndexes;
  int64_t PoolSize, OutWidth;
};

/// The trie of the pool's n-grams whose length is in [MinGram, MaxGram]
/// (the others only take up their ids), as the reference's constructor
/// builds it. ngram_counts is not negative.
template <typename Key, typename PoolAt>
void buildTrie(const TfIdfArgs &A, PoolAt At, NgramTrie<Key> &Trie) {
  int64_t NgramId = 1, NgramSize = 1;
  for (int64_t I = 0; I < A.NumCounts; ++I, ++NgramSize) {
    int64_t Start = A.Counts[I];
    int64_t End = I + 1 < A.NumCounts ? A.Counts[I + 1] : A.PoolSize;
    int64_t Items = End - Start;
    if (Items <= 0)
      continue;
    int64_t NumNgrams = Items / NgramSize;
    if (NgramSize >= A.MinGram && NgramSize <= A.MaxGram)
      NgramId = populateGrams(Trie, At, A.PoolSize, Start, NumNgrams, NgramSize,
                              NgramId);
    else
      NgramId += NumNgrams;
  }
}

/// The reference's compute_impl for every row: counts the n-grams of the
/// trie in Freq ([Batch, OutWidth]); false (recorded) when an n-gram has
/// no valid output index.
template <typename Key, typename DataAt>
bool countNgrams(SeqRun &Run, int64_t Node, const char *Fn, const TfIdfArgs &A,
                 const NgramTrie<Key> &Trie, DataAt At,
                 std::vector<int64_t> &Freq) {
  const auto &Parts = Trie.Parts;
  for (int64_t Row = 0; Row < A.Batch; ++Row) {
    int64_t *RowFreq = Freq.data() + Row * A.OutWidth;
    int64_t StartSize = A.MinGram;
    for (int64_t Skip = 1; Skip - 1 <= A.MaxSkip; ++Skip) {
      // With StartSize <= 0 (a MinGram below 1), every pass from the one
      // whose skip reaches past the row on counts the same unigrams: one
      // pass counts them all.
      int64_t Times = 1;
      bool Last = false;
      if (StartSize <= 0 && Skip >= A.Length) {
        __int128 Passes = static_cast<__int128>(A.MaxSkip) - Skip + 2;
        Times = Passes > INT64_MAX ? INT64_MAX : static_cast<int64_t>(Passes);
        Last = true;
      }
      for (int64_t Start = 0; Start < A.Length; ++Start) {
        // Too close to the end for an n-gram of StartSize.
        if (Start + static_cast<__int128>(Skip) * (StartSize - 1) >= A.Length)
          break;
        int64_t Item = Start, Size = 1;
        size_t M = 0;
        while (!Parts[M].Leaves.empty() && Size <= A.MaxGram &&
               Item < A.Length) {
          size_t P = Trie.find(M, At(Row * A.Length + Item));
          if (!P)
            break;
          int64_t Hit = Parts[P].Id;
          if (Size >= StartSize && Hit != 0) {
            if (Hit > A.NumIndexes) {
              record(Run, Node, Fn, KILN_ERROR_INVALID_ARGUMENT,
                     "n-gram " + std::to_string(Hit - 1) +
                         " of the pool has no entry in ngram_indexes (" +
                         std::to_string(A.NumIndexes) + " entries)");
              return false;
            }
            int64_t Column = A.Indexes[Hit - 1];
            if (Column < 0 || Column >= A.OutWidth) {
              record(Run, Node, Fn, KILN_ERROR_INVALID_ARGUMENT,
                     "ngram_indexes[" + std::to_string(Hit - 1) + "] is " +
                         std::to_string(Column) + ", outside [0, " +
                         std::to_string(A.OutWidth) + ")");
              return false;
            }
            RowFreq[Column] += Times;
          }
          M = P;
          ++Size;
          Item += Skip;
        }
      }
      if (Last)
        break;
      // Unigrams count once: skipping does not change them.
      if (StartSize == 1) {
        ++StartSize;
        if (StartSize > A.MaxGram)
          break;
      }
      // No n-gram of StartSize >= 2 fits in a row with a longer skip.
      if (StartSize >= 2 &&
          static_cast<__int128>(Skip) * (StartSize - 1) >= A.Length)
        break;
    }
  }
  return true;
}

/// Builds the trie and counts for one key type.
template <typename Key, typename PoolAt, typename DataAt>
bool tfIdfCounts(SeqRun &Run, int64_t Node, const char *Fn, const TfIdfArgs &A,
                 PoolAt Pool, DataAt Data, std::vector<int64_t> &Freq) {
  NgramTrie<Key> Trie;
  buildTrie(A, Pool, Trie);
  return countNgrams(Run, Node, Fn, A, Trie, Data, Freq);
}

} // namespace

// ONNX RegexFullMatch: Out[i] = 1 if the whole of the i-th of the Count
// strings at Strings matches the pattern at Pattern, else 0. The pattern
// is RE2 syntax in ONNX; it is compiled (once per call) as ECMAScript,
// which agrees on the common subset (classes, groups, alternation,
// anchors, quantifiers); one that does not compile is an error.
KILN_RT_EXPORT void kilnRegexFullMatch(int64_t Strings, int64_t Count,
                                       int64_t Pattern, int64_t Node,
                                       int64_t Out) {
  const char *Fn = "kilnRegexFullMatch";
  if (Out && Count > 0)
    std::memset(reinterpret_cast<void *>(static_cast<uintptr_t>(Out)), 0,
                static_cast<size_t>(Count));
  guarded<bool>(Node, Fn, [&](SeqRun &Run) -> bool {
    if (Count < 0 || !Pattern || (Count > 0 && (!Strings || !Out))) {
      record(Run, Node, Fn, KILN_ERROR_INTERNAL,
             "invalid arguments (" + std::to_string(Count) + " strings" +
                 (Pattern ? "" : ", no pattern") + ")");
      return false;
    }
    const char *Text = ptrOf<char>(Pattern);
    bool Valid = true;
    std::wstring WPattern = decodeUtf8(Text, Valid);
    if (!Valid) {
      record(Run, Node, Fn, KILN_ERROR_INVALID_ARGUMENT,
             std::string("invalid pattern \"") + Text + "\": not UTF-8");
      return false;
    }
    std::wregex Regex;
    try {
      Regex.imbue(std::locale::classic());
      Regex.assign(WPattern, regexSyntax());
    } catch (const std::regex_error &E) {
      record(Run, Node, Fn, KILN_ERROR_INVALID_ARGUMENT,
             std::string("invalid pattern \"") + Text + "\": " + E.what());
      return false;
    }
    const char *const *Items = ptrOf<const char *>(Strings);
    auto *Result = reinterpret_cast<uint8_t *>(static_cast<uintptr_t>(Out));
    for (int64_t I = 0; I < Count; ++I) {
      if (!Items[I]) {
        record(Run, Node, Fn, KILN_ERROR_INVALID_ARGUMENT,
               "string " + std::to_string(I) + " is NULL");
        return false;
      }
      std::wstring Subject = decodeUtf8(Items[I], Valid);
      try {
        Result[I] = std::regex_match(Subject, Regex) ? 1 : 0;
      } catch (const std::regex_error &E) {
        record(Run, Node, Fn, KILN_ERROR_INVALID_ARGUMENT,
               "matching string " + std::to_string(I) + " against \"" + Text +
                   "\" failed: " + E.what());
        return false;
      }
    }
    return true;
  });
}

// ONNX TfIdfVectorizer of Batch rows of Length elements at Data (int32,
// int64, or strings as `const char *`) into float [Batch, OutWidth] at
// Out, as the reference computes it: the n-grams of the pool (PoolInts or
// PoolStrings, PoolSize entries; ngram_counts at NgramCounts gives where
// each length's n-grams start) of length in [MinGram, MaxGram] are
// counted per row, with up to MaxSkip elements skipped between their
// items; n-gram k (in pool order) counts into column ngram_indexes[k].
// Mode 0 (TF) gives the counts; 1 (IDF) weights[column] (1 without
// weights) where the count is not 0; 2 (TFIDF) weights[column] * count
// (the count without weights). Keys of another kind than the data's never
// match.
KILN_RT_EXPORT void kilnTfIdfVectorizer(
    int64_t Data, int32_t DType, int64_t Batch, int64_t Length, int32_t Mode,
    int64_t MinGram, int64_t MaxGram, int64_t MaxSkip, int64_t NgramCounts,
    int64_t NumNgramCounts, int64_t NgramIndexes, int64_t NumNgramIndexes,
    int64_t PoolInts, int64_t PoolStrings, int64_t PoolSize, int64_t Weights,
    int64_t OutWidth, int64_t Node, int64_t Out) {
  const char *Fn = "kilnTfIdfVectorizer";
  auto *Result = reinterpret_cast<float *>(static_cast<uintptr_t>(Out));
  bool Sized = Batch >= 0 && Length >= 0 && OutWidth >= 0 &&
               (OutWidth == 0 || Batch <= INT64_MAX / 4 / OutWidth);
  if (Result && Sized && Batch * OutWidth > 0)
    std::memset(Result, 0, static_cast<size_t>(Batch * OutWidth) * 4);
  guarded<bool>(Node, Fn, [&](SeqRun &Run) -> bool {
    int64_t Elements =
        Sized && Length > 0 && Batch > INT64_MAX / Length ? -1 : Batch * Length;
    bool Ints = DType == KILN_DTYPE_INT32 || DType == KILN_DTYPE_INT64;
    if (!Sized || Elements < 0 || (Elements > 0 && !Data) ||
        (Batch * OutWidth > 0 && !Result) || Mode < 0 || Mode > 2 ||
        NumNgramCounts < 0 || (NumNgramCounts > 0 && !NgramCounts) ||
        NumNgramIndexes < 0 || (NumNgramIndexes > 0 && !NgramIndexes) ||
        PoolSize < 0 || (PoolSize > 0 && !PoolInts && !PoolStrings)) {
      record(Run, Node, Fn, KILN_ERROR_INTERNAL,
             "invalid arguments (" + std::to_string(Batch) + " rows of " +
                 std::to_string(Length) + ", output width " +
                 std::to_string(OutWidth) + ", mode " + std::to_string(Mode) +
                 ", " + std::to_string(NumNgramCounts) + " ngram_counts, " +
                 std::to_string(NumNgramIndexes) + " ngram_indexes, pool of " +
                 std::to_string(PoolSize) + ")");
      return false;
    }
    if (!Ints && DType != KILN_DTYPE_STRING) {
      record(Run, Node, Fn, KILN_ERROR_INVALID_ARGUMENT,
             std::string("TfIdfVectorizer of ") + kiln_dtype_name(DType) +
                 " tensors is not supported");
      return false;
    }
    for (int64_t I = 0; I < NumNgramCounts; ++I)
      if (ptrOf<int64_t>(NgramCounts)[I] < 0) {
        record(Run, Node, Fn, KILN_ERROR_INVALID_ARGUMENT,
               "ngram_counts[" + std::to_string(I) + "] is " +
                   std::to_string(ptrOf<int64_t>(NgramCounts)[I]) +
                   ", negative");
        return false;
      }
    const char *const *Texts = ptrOf<const char *>(Data);
    if (!Ints)
      for (int64_t I = 0; I < Elements; ++I)
        if (!Texts[I]) {
          record(Run, Node, Fn, KILN_ERROR_INVALID_ARGUMENT,
                 "string " + std::to_string(I) + " of the input is NULL");
          return false;
        }
    // The reference's `pool_int64s or pool_strings`.
    bool PoolOfInts = PoolInts != 0 || PoolSize == 0;
    const char *const *Words = ptrOf<const char *>(PoolStrings);
    if (!PoolOfInts)
      for (int64_t I = 0; I < PoolSize; ++I)
        if (!Words[I]) {
          record(Run, Node, Fn, KILN_ERROR_INTERNAL,
                 "pool string " + std::to_string(I) + " is NULL");
          return false;
        }

    TfIdfArgs A{Batch,           Length,
                MinGram,         MaxGram,
                MaxSkip,         ptrOf<int64_t>(NgramCounts),
                NumNgramCounts,  ptrOf<int64_t>(NgramIndexes),
                NumNgramIndexes, PoolSize,
                OutWidth};
    std::vector<int64_t> Freq(static_cast<size_t>(Batch * OutWidth), 0);
    bool Counted = true;
    if (Ints == PoolOfInts && Elements > 0) {
      if (Ints) {
        const int64_t *Pool = ptrOf<int64_t>(PoolInts);
        auto PoolAt = [Pool](int64_t I) { return Pool[I]; };
        if (DType == KILN_DTYPE_INT32) {
          const int32_t *X = ptrOf<int32_t>(Data);
          Counted = tfIdfCounts<int64_t>(
              Run, Node, Fn, A, PoolAt,
              [X](int64_t I) { return static_cast<int64_t>(X[I]); }, Freq);
        } else {
          const int64_t *X = ptrOf<int64_t>(Data);
          Counted = tfIdfCounts<int64_t>(
              Run, Node, Fn, A, PoolAt, [X](int64_t I) { return X[I]; }, Freq);
        }
      } else {
        Counted = tfIdfCounts<std::string>(
            Run, Node, Fn, A,
            [Words](int64_t I) { return std::string(Words[I]); },
            [Texts](int64_t I) { return std::string_view(Texts[I]); }, Freq);
      }
    }
    if (!Counted)
      return false;

    const float *W = Weights ? ptrOf<float>(Weights) : nullptr;
    bool HasWeights = W && NumNgramIndexes > 0;
    if (HasWeights && Mode == 2 && OutWidth > NumNgramIndexes && Batch > 0) {
      record(Run, Node, Fn, KILN_ERROR_INVALID_ARGUMENT,
             "weights has " + std::to_string(NumNgramIndexes) +
                 " entries, fewer than the output's " +
                 std::to_string(OutWidth) + " columns");
      return false;
    }
    for (int64_t Row = 0; Row < Batch; ++Row)
      for (int64_t Col = 0; Col < OutWidth; ++Col) {
        int64_t F = Freq[Row * OutWidth + Col];
        float &Y = Result[Row * OutWidth + Col];
        if (Mode == 0 || (Mode == 2 && !HasWeights)) {
          Y = static_cast<float>(F);
        } else if (Mode == 1) {
          if (F <= 0)
            continue; // stays 0
          if (!HasWeights) {
            Y = 1.0f;
          } else if (Col < NumNgramIndexes) {
            Y = W[Col];
          } else {
            record(Run, Node, Fn, KILN_ERROR_INVALID_ARGUMENT,
                   "weights has " + std::to_string(NumNgramIndexes) +
                       " entries, none for output column " +
                       std::to_string(Col));
            std::memset(Result, 0, static_cast<size_t>(Batch * OutWidth) * 4);
            return false;
          }
        } else {
          // As the reference: the product in double, rounded to float.
          Y = static_cast<float>(static_cast<double>(W[Col]) *
                                 static_cast<double>(F));
        }
      }
    return true;
  });
}

// ONNX StringConcat of two strings: a new string owned by the session until
// its next run (the caller reads the outputs that point at it).
KILN_RT_EXPORT int64_t kilnStringConcat(int64_t A, int64_t B, int64_t Node) {
  const char *Fn = "kilnStringConcat";
  return guarded<int64_t>(Node, Fn, [&](SeqRun &Run) -> int64_t {
    if (!A || !B) {
      record(Run, Node, Fn, KILN_ERROR_INVALID_ARGUMENT, "a string is NULL");
      return 0;
    }
    if (!Run.Strings) {
      record(Run, Node, Fn, KILN_ERROR_INTERNAL, "no session owns the strings of this run");
      return 0;
    }
    Run.Strings->push_back(std::string(ptrOf<char>(A)) + ptrOf<char>(B));
    return static_cast<int64_t>(reinterpret_cast<uintptr_t>(Run.Strings->back().c_str()));
  });
}
