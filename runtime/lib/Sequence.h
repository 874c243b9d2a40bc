// Sequence and optional values (model ABI 6): the object behind
// kiln_sequence, and the per-run state of the kilnSeq* functions that
// compiled models call. Values are immutable: every kilnSeq* function that
// yields a sequence makes a new one, owned by the run, and sequences share
// their elements, so a copy costs a pointer per element.
#ifndef KILN_RUNTIME_SEQUENCE_H
#define KILN_RUNTIME_SEQUENCE_H

#include "kiln/kiln_rt.h"

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

namespace kiln::rt {

/// One tensor of a sequence, dense and row-major. Never changed once made.
struct SeqElement {
  int32_t DType = KILN_DTYPE_UNDEFINED;
  std::vector<int64_t> Shape;
  uint64_t Bytes = 0;
  std::unique_ptr<uint8_t[]> Data; // null when Bytes is 0
};
using SeqElementRef = std::shared_ptr<const SeqElement>;

} // namespace kiln::rt

struct kiln_sequence {
  explicit kiln_sequence(int32_t DType);
  kiln_sequence(const kiln_sequence &Other);
  kiln_sequence &operator=(const kiln_sequence &) = default;
  ~kiln_sequence();

  int32_t DType;
  // An optional without a value; it then has no elements.
  bool None = false;
  std::vector<kiln::rt::SeqElementRef> Elements;
};

namespace kiln::rt {

/// What the kilnSeq* calls of one run share: the sequences they made and
/// the run's first failure.
struct SeqRun {
  std::vector<std::unique_ptr<kiln_sequence>> Pool;
  kiln_status Status = KILN_OK;
  std::string Error;
  /// Strings the run makes (StringConcat), owned by the session: they
  /// outlive the run, as the caller reads the outputs that point at them,
  /// and go when the session runs again. Null: no string may be made.
  std::deque<std::string> *Strings = nullptr;
};

/// Makes the calling thread's kilnSeq* calls part of one run until the
/// scope ends, which frees the sequences they made. Scopes nest.
class SeqRunScope {
public:
  explicit SeqRunScope(std::deque<std::string> *Strings = nullptr);
  ~SeqRunScope();
  SeqRunScope(const SeqRunScope &) = delete;
  SeqRunScope &operator=(const SeqRunScope &) = delete;

  const SeqRun &run() const { return Run; }
  /// KILN_OK, or the run's first kilnSeq* failure, also made the thread's
  /// last error.
  kiln_status status() const;

private:
  SeqRun Run;
  SeqRun *Outer;
};

/// The calling thread's current run, or null outside one.
SeqRun *currentSeqRun();

/// The failure of the calling thread's current run (KILN_OK outside one).
kiln_status seqRunStatus();

/// Checks that a tensor of DType fits in a sequence; "" when it does.
std::string seqDTypeProblem(int32_t DType);

/// Copies Shape and Bytes bytes of Data into a new element.
SeqElementRef makeSeqElement(int32_t DType, const int64_t *Shape, int32_t Rank,
                             const void *Data, uint64_t Bytes);

/// Bytes of a dense tensor; false when a dimension is negative or the size
/// overflows.
bool denseBytes(int32_t DType, const int64_t *Shape, int32_t Rank,
                uint64_t &Bytes);

/// kiln_sequence objects alive in this process (a test hook for leaks).
size_t liveSequenceCount();

} // namespace kiln::rt

#endif // KILN_RUNTIME_SEQUENCE_H
