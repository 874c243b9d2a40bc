// kiln_trace: collects profiler end events and writes them as Chrome trace
// JSON in the shape ONNX Runtime's profiler produces, so the same viewers
// and scripts work on both.
#include "Error.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <unistd.h>
#include <utility>
#include <vector>

using kiln::rt::fail;

namespace {
struct TraceEvent {
  std::string Name, Provider, OpName, Args;
  int32_t Kind;
  uint64_t StartNs, DurationNs, Bytes;
  int32_t Tid;
};
} // namespace

struct kiln_trace {
  mutable std::mutex Mutex;
  std::vector<TraceEvent> Events;
  // Small, stable thread numbers read better in viewers than native ids.
  std::vector<std::thread::id> Threads;
  // Device tracks (provider, reporting thread) in the order their first
  // event came.
  std::vector<std::pair<std::string, std::thread::id>> Devices;
};

namespace {

void appendEscaped(std::string &Out, const std::string &S) {
  Out += '"';
  for (unsigned char C : S) {
    switch (C) {
    case '"':
      Out += "\\\"";
      break;
    case '\\':
      Out += "\\\\";
      break;
    case '\n':
      Out += "\\n";
      break;
    case '\r':
      Out += "\\r";
      break;
    case '\t':
      Out += "\\t";
      break;
    default:
      if (C < 0x20) {
        char Buf[8];
        std::snprintf(Buf, sizeof(Buf), "\\u%04x", C);
        Out += Buf;
      } else {
        Out += static_cast<char>(C);
      }
    }
  }
  Out += '"';
}

// Microseconds with ns precision, as Chrome's "ts"/"dur" allow fractions.
void appendMicros(std::string &Out, uint64_t Ns) {
  char Buf[32];
  std::snprintf(Buf, sizeof(Buf), "%" PRIu64 ".%03" PRIu64, Ns / 1000,
                Ns % 1000);
  Out += Buf;
}

/// The index of `Key` in `Keys`, appended if absent.
template <typename K> int32_t indexOf(std::vector<K> &Keys, const K &Key) {
  auto It = std::find(Keys.begin(), Keys.end(), Key);
  if (It == Keys.end())
    It = Keys.insert(Keys.end(), Key);
  return static_cast<int32_t>(It - Keys.begin());
}

/// ONNX Runtime's name of a provider: "cpu" -> "CPUExecutionProvider".
std::string ortProvider(const std::string &P) {
  std::string Out;
  for (char C : P)
    Out += static_cast<char>(C >= 'a' && C <= 'z' ? C - 'a' + 'A' : C);
  return Out + "ExecutionProvider";
}

/// One complete ("X") event as ONNX Runtime's profiler writes it: runs and
/// partitions as "Session", nodes as "Node" named <node>_kernel_time with
/// op_name and provider, device kernels and copies as "Kernel" carrying
/// the op_name of what launched them.
void appendEvent(std::string &Out, const TraceEvent &E, uint64_t Ts, const std::string &Pid) {
  const char *Cat = E.Kind == KILN_EVENT_NODE                                   ? "Node"
                    : E.Kind == KILN_EVENT_KERNEL || E.Kind == KILN_EVENT_TRANSFER ? "Kernel"
                                                                                 : "Session";
  Out += "{\"cat\":\"";
  Out += Cat;
  Out += "\",\"name\":";
  appendEscaped(Out, E.Kind == KILN_EVENT_NODE ? E.Name + "_kernel_time" : E.Name);
  Out += ",\"ph\":\"X\",\"ts\":";
  appendMicros(Out, Ts);
  Out += ",\"dur\":";
  appendMicros(Out, E.DurationNs);
  Out += ",\"pid\":" + Pid + ",\"tid\":" + std::to_string(E.Tid) + ",\"args\":{";
  if (E.Kind == KILN_EVENT_RUN) {
    Out += "\"model_name\":";
    appendEscaped(Out, E.OpName);
  } else if (E.Kind == KILN_EVENT_PARTITION) {
    Out += "\"provider\":";
    appendEscaped(Out, ortProvider(E.Provider));
  } else {
    Out += "\"op_name\":";
    appendEscaped(Out, E.OpName);
    Out += ",\"provider\":";
    appendEscaped(Out, ortProvider(E.Provider));
    if (E.Kind == KILN_EVENT_TRANSFER)
      Out += ",\"bytes\":" + std::to_string(E.Bytes);
    if (!E.Args.empty())
      Out += "," + E.Args;
  }
  Out += "}}";
}

} // namespace

extern "C" {

kiln_trace *kiln_trace_create(void) { return new (std::nothrow) kiln_trace; }

void kiln_trace_destroy(kiln_trace *T) { delete T; }

void kiln_trace_callback(const kiln_profile_event *E, int32_t IsEnd,
                         void *User) {
  auto *T = static_cast<kiln_trace *>(User);
  if (!T || !E || !IsEnd)
    return;
  try {
    std::lock_guard<std::mutex> Lock(T->Mutex);
    std::thread::id Self = std::this_thread::get_id();
    int32_t Tid;
    if (E->kind == KILN_EVENT_KERNEL || E->kind == KILN_EVENT_TRANSFER)
      // Device work runs beside the host's nodes, not inside them: it has
      // tracks of its own, tids -1, -2, ... (ONNX Runtime puts its CUDA
      // kernels on tid -1), one per device provider and host thread that
      // reports it (a session's stream: another session's work may overlap).
      Tid = -1 - indexOf(T->Devices, {E->provider ? E->provider : "", Self});
    else
      Tid = indexOf(T->Threads, Self);
    T->Events.push_back({E->name ? E->name : "", E->provider ? E->provider : "",
                         E->op_name ? E->op_name : "",
                         E->kind == KILN_EVENT_NODE && E->args_json ? E->args_json : "",
                         E->kind, E->start_ns, E->duration_ns, E->bytes, Tid});
  } catch (const std::bad_alloc &) {
    // A profiler must never take the run down; drop the event.
  }
}

kiln_status kiln_trace_write(const kiln_trace *T, const char *Path) {
  if (!T || !Path)
    return fail(KILN_ERROR_INVALID_ARGUMENT, "trace or path is NULL");
  try {
    std::string Out = "[\n";
    {
      std::lock_guard<std::mutex> Lock(T->Mutex);
      // Timestamps are relative to the first event, as in ORT's profiles.
      uint64_t Origin = UINT64_MAX;
      for (const TraceEvent &E : T->Events)
        Origin = E.StartNs < Origin ? E.StartNs : Origin;
      std::string Pid = std::to_string(getpid());
      for (size_t I = 0; I < T->Events.size(); ++I) {
        const TraceEvent &E = T->Events[I];
        Out += I ? ",\n" : "";
        appendEvent(Out, E, E.StartNs - Origin, Pid);
      }
    }
    Out += "\n]\n";
    std::FILE *F = std::fopen(Path, "wb");
    if (!F)
      return fail(KILN_ERROR_INVALID_ARGUMENT,
                  std::string("cannot open trace file \"") + Path +
                      "\" for writing");
    bool Ok = std::fwrite(Out.data(), 1, Out.size(), F) == Out.size();
    Ok = std::fclose(F) == 0 && Ok;
    if (!Ok)
      return fail(KILN_ERROR_INTERNAL,
                  std::string("cannot write trace file \"") + Path + "\"");
    return KILN_OK;
  } catch (const std::bad_alloc &) {
    return fail(KILN_ERROR_OUT_OF_MEMORY, "out of memory writing trace");
  }
}

} // extern "C"
