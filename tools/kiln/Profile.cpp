//===- Profile.cpp - kiln profile: summarize Chrome-trace profiles --------===//
//
// Reads the Chrome-trace JSON that kiln-run --profile and ONNX Runtime's
// enable_profiling write and reports where the time goes: per op type, per
// provider and per node, averaged over the runs in the file, or two profiles
// of one model side by side. Optionally writes a self-contained HTML page.
//
//===----------------------------------------------------------------------===//

#include "tools/kiln/Profile.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

using namespace llvm;

namespace {

constexpr const char *toolName = "kiln profile";

constexpr const char *usageText =
    "usage: kiln profile FILE.json [--top N] [--html OUT.html]\n"
    "       kiln profile --compare A.json B.json [--html OUT.html]\n";

constexpr const char *helpText =
    "\n"
    "Summarizes a Chrome-trace profile written by kiln-run --profile or by\n"
    "ONNX Runtime (SessionOptions.enable_profiling): the time per op type,\n"
    "per provider and of the slowest nodes, averaged over the runs in the\n"
    "file. --compare puts two profiles of one model side by side per op\n"
    "type; B/A is B's time over A's.\n"
    "\n"
    "options:\n"
    "  --top N          nodes to list (default 10; 0 lists none)\n"
    "  --compare A B    compare two profiles instead of summarizing one\n"
    "  --html OUT.html  also write a self-contained HTML page (charts and\n"
    "                   tables)\n"
    "  -h, --help       print this help\n";

constexpr const char *notAProfile =
    "not a profile: expected a JSON array of Chrome-trace events (kiln-run "
    "--profile, ONNX Runtime enable_profiling)";

/// One node (or GPU kernel) of a profile, summed over all its calls.
struct NodeStats {
  std::string name;
  std::string opType;
  std::string provider;
  std::vector<std::string> fusedNodes;
  double totalUs = 0;
  uint64_t calls = 0;
};

struct Profile {
  std::string path;
  /// What column headers call the file: its basename unless ambiguous.
  std::string label;
  uint64_t runs = 0;
  /// No model_run events: runs is the most calls of any one node.
  bool runsInferred = false;
  /// No node or kernel events: the nodes are the partitions.
  bool partitionsOnly = false;
  std::vector<NodeStats> nodes;
  double totalUs = 0;

  double msPerRun(double us) const { return us / 1000.0 / runs; }
};

/// The nodes that share an op type or a provider.
struct GroupStats {
  std::string key;
  unsigned nodes = 0;
  uint64_t calls = 0;
  double totalUs = 0;
};

/// Plain cells; numeric columns are right-aligned in text and HTML.
struct Table {
  std::vector<std::string> header;
  std::vector<bool> numeric;
  std::vector<std::vector<std::string>> rows;
  bool hasTotalRow = false;
};

Error fileError(StringRef path, const Twine &msg) {
  return createStringError(inconvertibleErrorCode(), (path + ": " + msg).str());
}

std::string fixed(double value, int precision) {
  int size = std::snprintf(nullptr, 0, "%.*f", precision, value);
  std::string out(size > 0 ? size : 0, '\0');
  std::snprintf(out.data(), out.size() + 1, "%.*f", precision, value);
  return out;
}

std::string percent(double part, double whole) {
  return fixed(whole > 0 ? 100.0 * part / whole : 0.0, 1);
}

std::string stringArg(const json::Object *args, StringRef key) {
  if (!args)
    return "";
  return args->getString(key).value_or("").str();
}

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

Expected<Profile> loadProfile(StringRef path) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> buffer =
      MemoryBuffer::getFileOrSTDIN(path, /*IsText=*/true);
  if (std::error_code ec = buffer.getError())
    return fileError(path, "cannot read: " + ec.message());
  // ORT leaves an empty file when a session failed before profiling began.
  if ((*buffer)->getBuffer().trim().empty())
    return fileError(path, "not JSON: the file is empty");
  Expected<json::Value> root = json::parse((*buffer)->getBuffer());
  if (!root)
    return fileError(path, "not JSON: " + toString(root.takeError()));
  const json::Array *events = root->getAsArray();
  if (!events)
    if (const json::Object *object = root->getAsObject())
      events = object->getArray("traceEvents");
  if (!events)
    return fileError(path, notAProfile);

  Profile profile;
  profile.path = path == "-" ? "<stdin>" : path.str();
  // Partition events (kiln-run "Session" events with a provider, or the
  // "Node" events with op_name "partition" of older traces) only stand in
  // for nodes when a profile has nothing finer (kiln --no-profile-hooks).
  std::vector<NodeStats> partitions;
  StringMap<size_t> nodeIndex, partitionIndex;
  uint64_t runEvents = 0;
  size_t objects = 0;
  for (auto [i, event] : enumerate(*events)) {
    const json::Object *object = event.getAsObject();
    if (!object)
      continue;
    ++objects;
    // Only complete ("X") events carry a duration; metadata and instant
    // events do not.
    std::optional<StringRef> phase = object->getString("ph");
    if (phase && *phase != "X")
      continue;
    StringRef category = object->getString("cat").value_or("");
    StringRef name = object->getString("name").value_or("");
    const json::Object *args = object->getObject("args");
    std::string opType = stringArg(args, "op_name");
    std::string provider = stringArg(args, "provider");
    bool isPartition;
    if (category == "Session") {
      if (name == "model_run")
        ++runEvents;
      // ORT's session events (loading, initialization, the executor) have
      // no provider; kiln-run's partitions do.
      if (name == "model_run" || provider.empty())
        continue;
      isPartition = true;
      opType = "partition";
    } else if (category == "Node" || category == "Kernel") {
      // ORT brackets each kernel with fences; only the kernel's time counts.
      if (name.ends_with("_fence_before") || name.ends_with("_fence_after"))
        continue;
      name.consume_back("_kernel_time");
      isPartition = category == "Node" && opType == "partition";
    } else {
      continue;
    }
    std::optional<double> duration = object->getNumber("dur");
    if (!duration || !std::isfinite(*duration) || *duration < 0)
      return fileError(path, "event " + Twine(static_cast<uint64_t>(i)) +
                                 " (\"" + name +
                                 "\") has no \"dur\" in microseconds");

    std::vector<NodeStats> &list = isPartition ? partitions : profile.nodes;
    StringMap<size_t> &index = isPartition ? partitionIndex : nodeIndex;
    // A name may recur under another op or provider (a kernel launched for
    // several nodes); keep those apart so per-op totals stay exact.
    std::string key = name.str();
    key += '\0';
    key += opType;
    key += '\0';
    key += provider;
    auto [it, inserted] = index.try_emplace(key, list.size());
    if (inserted) {
      NodeStats node;
      node.name = name.str();
      node.opType = opType.empty() ? "?" : opType;
      node.provider = provider.empty() ? "?" : provider;
      if (const json::Array *fused =
              args ? args->getArray("fused_nodes") : nullptr)
        for (const json::Value &fusedName : *fused)
          if (std::optional<StringRef> s = fusedName.getAsString())
            node.fusedNodes.push_back(s->str());
      list.push_back(std::move(node));
    }
    NodeStats &node = list[it->second];
    node.totalUs += *duration;
    ++node.calls;
  }
  if (objects == 0 && !events->empty())
    return fileError(path, notAProfile);
  if (profile.nodes.empty()) {
    profile.nodes = std::move(partitions);
    profile.partitionsOnly = !profile.nodes.empty();
  }
  if (profile.nodes.empty())
    return fileError(path, "no node or kernel events to summarize (expected "
                           "\"Node\" or \"Kernel\" events from kiln-run "
                           "--profile or ONNX Runtime enable_profiling)");

  profile.runs = runEvents;
  if (runEvents == 0) {
    profile.runsInferred = true;
    for (const NodeStats &node : profile.nodes)
      profile.runs = std::max(profile.runs, node.calls);
  }
  for (const NodeStats &node : profile.nodes)
    profile.totalUs += node.totalUs;
  return profile;
}

//===----------------------------------------------------------------------===//
// Summaries
//===----------------------------------------------------------------------===//

/// Groups nodes by op type or provider, largest total first.
std::vector<GroupStats> groupBy(const Profile &profile,
                                std::string NodeStats::*field) {
  StringMap<size_t> index;
  std::vector<GroupStats> groups;
  for (const NodeStats &node : profile.nodes) {
    auto [it, inserted] = index.try_emplace(node.*field, groups.size());
    if (inserted) {
      groups.emplace_back();
      groups.back().key = node.*field;
    }
    GroupStats &group = groups[it->second];
    ++group.nodes;
    group.calls += node.calls;
    group.totalUs += node.totalUs;
  }
  llvm::sort(groups, [](const GroupStats &a, const GroupStats &b) {
    if (a.totalUs != b.totalUs)
      return a.totalUs > b.totalUs;
    return a.key < b.key;
  });
  return groups;
}

std::string summaryLine(const Profile &profile) {
  std::string line = profile.path + ": " + std::to_string(profile.runs) +
                     (profile.runs == 1 ? " run" : " runs");
  if (profile.runsInferred)
    line += " (no model_run events: counted from node repeats)";
  StringRef unit = profile.partitionsOnly ? "partition" : "node";
  line += ", " + std::to_string(profile.nodes.size()) + " " + unit.str() +
          (profile.nodes.size() == 1 ? "" : "s") + ", " +
          fixed(profile.msPerRun(profile.totalUs), 3) +
          (profile.partitionsOnly ? " ms/run in partitions (no per-node events)"
                                  : " ms/run in nodes and kernels");
  return line;
}

Table groupTable(const Profile &profile, std::string NodeStats::*field,
                 StringRef keyHeader) {
  Table table;
  table.header = {keyHeader.str(), "nodes", "ms/run", "%", "us/call"};
  table.numeric = {false, true, true, true, true};
  for (const GroupStats &group : groupBy(profile, field))
    table.rows.push_back(
        {group.key, std::to_string(group.nodes),
         fixed(profile.msPerRun(group.totalUs), 3),
         percent(group.totalUs, profile.totalUs),
         fixed(group.totalUs / static_cast<double>(group.calls), 1)});
  return table;
}

Table nodeTable(const Profile &profile, size_t top) {
  std::vector<const NodeStats *> nodes;
  for (const NodeStats &node : profile.nodes)
    nodes.push_back(&node);
  llvm::sort(nodes, [](const NodeStats *a, const NodeStats *b) {
    if (a->totalUs != b->totalUs)
      return a->totalUs > b->totalUs;
    return a->name < b->name;
  });
  nodes.resize(std::min(top, nodes.size()));
  bool anyFused = llvm::any_of(
      nodes, [](const NodeStats *node) { return !node->fusedNodes.empty(); });

  Table table;
  table.header = {"node", "op type", "provider", "us/run", "%"};
  table.numeric = {false, false, false, true, true};
  if (anyFused) {
    table.header.push_back("fused nodes");
    table.numeric.push_back(false);
  }
  for (const NodeStats *node : nodes) {
    std::vector<std::string> row = {
        node->name, node->opType, node->provider,
        fixed(node->totalUs / static_cast<double>(profile.runs), 1),
        percent(node->totalUs, profile.totalUs)};
    if (anyFused)
      row.push_back(llvm::join(node->fusedNodes, ","));
    table.rows.push_back(std::move(row));
  }
  return table;
}

/// One op type (or provider) of two profiles; absent where a side lacks it.
struct CompareRow {
  std::string key;
  std::optional<double> aMs, bMs;
};

/// Both profiles' ms/run per key in A's order; the keys only B has come last.
std::vector<CompareRow> compareRows(const Profile &a, const Profile &b,
                                    std::string NodeStats::*field) {
  std::vector<CompareRow> rows;
  StringMap<size_t> index;
  for (const GroupStats &group : groupBy(a, field)) {
    index[group.key] = rows.size();
    rows.push_back({group.key, a.msPerRun(group.totalUs), std::nullopt});
  }
  for (const GroupStats &group : groupBy(b, field)) {
    auto [it, inserted] = index.try_emplace(group.key, rows.size());
    if (inserted)
      rows.push_back({group.key, std::nullopt, std::nullopt});
    rows[it->second].bMs = b.msPerRun(group.totalUs);
  }
  return rows;
}

Table compareTable(const Profile &a, const Profile &b,
                   ArrayRef<CompareRow> rows, StringRef keyHeader) {
  auto cell = [](std::optional<double> ms) {
    return ms ? fixed(*ms, 3) : std::string("-");
  };
  auto ratio = [](std::optional<double> aMs, std::optional<double> bMs) {
    return aMs && bMs && *aMs > 0 ? fixed(*bMs / *aMs, 2) : std::string("-");
  };
  Table table;
  table.header = {keyHeader.str(), a.label + " ms/run", b.label + " ms/run",
                  "B/A"};
  table.numeric = {false, true, true, true};
  for (const CompareRow &row : rows)
    table.rows.push_back(
        {row.key, cell(row.aMs), cell(row.bMs), ratio(row.aMs, row.bMs)});
  double aTotal = a.msPerRun(a.totalUs), bTotal = b.msPerRun(b.totalUs);
  table.rows.push_back(
      {"total", cell(aTotal), cell(bTotal), ratio(aTotal, bTotal)});
  table.hasTotalRow = true;
  return table;
}

//===----------------------------------------------------------------------===//
// Text output
//===----------------------------------------------------------------------===//

/// Terminal columns of UTF-8 text, counting code points.
size_t displayWidth(StringRef text) {
  return llvm::count_if(text, [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  });
}

/// Control characters in node names would garble the terminal.
std::string printable(StringRef text) {
  std::string out = text.str();
  for (char &c : out)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F)
      c = '?';
  return out;
}

void printTable(raw_ostream &os, const Table &table) {
  std::vector<size_t> widths;
  for (const std::string &cell : table.header)
    widths.push_back(displayWidth(cell));
  for (const std::vector<std::string> &row : table.rows)
    for (auto [col, cell] : enumerate(row))
      widths[col] = std::max(widths[col], displayWidth(printable(cell)));

  auto printRow = [&](ArrayRef<std::string> row) {
    std::string line;
    for (auto [col, cell] : enumerate(row)) {
      std::string text = printable(cell);
      std::string pad(widths[col] - displayWidth(text), ' ');
      line += "  "; // indent, then the gap between columns
      line += table.numeric[col] ? pad + text : text + pad;
    }
    os << StringRef(line).rtrim(' ') << "\n";
  };
  printRow(table.header);
  std::vector<std::string> rule;
  for (size_t width : widths)
    rule.push_back(std::string(width, '-'));
  printRow(rule);
  for (const std::vector<std::string> &row : table.rows) {
    if (table.hasTotalRow && &row == &table.rows.back())
      printRow(rule);
    printRow(row);
  }
}

//===----------------------------------------------------------------------===//
// HTML output
//===----------------------------------------------------------------------===//

/// Escapes text for XHTML; also replaces what XML 1.0 cannot hold.
std::string escapeXml(StringRef text) {
  std::string fixedUtf8;
  if (!json::isUTF8(text)) {
    fixedUtf8 = json::fixUTF8(text);
    text = fixedUtf8;
  }
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    case '\'':
      out += "&#39;";
      break;
    default:
      if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' &&
          c != '\r')
        out += '?';
      else
        out += c;
    }
  }
  return out;
}

/// At most maxChars code points, so long names fit beside the bars.
std::string truncateLabel(StringRef text, size_t maxChars) {
  if (displayWidth(text) <= maxChars)
    return text.str();
  size_t chars = 0, end = 0;
  for (; end < text.size(); ++end) {
    if ((static_cast<unsigned char>(text[end]) & 0xC0) != 0x80 &&
        chars++ == maxChars - 3)
      break;
  }
  return text.take_front(end).str() + "...";
}

constexpr const char *palette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2",
                                   "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
                                   "#9c755f", "#bab0ac"};
constexpr size_t paletteSize = std::size(palette);

struct BarGroup {
  std::string label;
  std::vector<std::optional<double>> msPerRun; // one per series
};

/// Horizontal bars, one group per op type or provider and one bar per
/// series (profile); inline SVG so the page needs nothing external.
void writeBarChart(raw_ostream &os, ArrayRef<BarGroup> groups,
                   ArrayRef<std::string> series) {
  const int labelWidth = 230, barSpace = 420, width = 760;
  const int barHeight = 14, barGap = 2, groupGap = 8;
  const int legendHeight = series.size() > 1 ? 22 : 0;
  const int groupHeight =
      static_cast<int>(series.size()) * (barHeight + barGap) - barGap;
  const int height =
      legendHeight +
      static_cast<int>(groups.size()) * (groupHeight + groupGap) + groupGap;
  double maxMs = 0;
  for (const BarGroup &group : groups)
    for (std::optional<double> ms : group.msPerRun)
      maxMs = std::max(maxMs, ms.value_or(0));

  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width
     << "\" height=\"" << height << "\" viewBox=\"0 0 " << width << " "
     << height << "\">\n";
  if (series.size() > 1) {
    int x = labelWidth;
    for (auto [s, name] : enumerate(series)) {
      os << "<rect x=\"" << x << "\" y=\"4\" width=\"12\" height=\"12\" "
         << "fill=\"" << palette[s % paletteSize] << "\"/>"
         << "<text x=\"" << x + 16 << "\" y=\"14\">"
         << escapeXml((s == 0 ? "A: " : "B: ") + truncateLabel(name, 36))
         << "</text>\n";
      // About 7px per character of 12px sans-serif.
      x += 56 + 7 * static_cast<int>(std::min<size_t>(displayWidth(name), 39));
    }
  }
  int y = legendHeight + groupGap;
  for (auto [g, group] : enumerate(groups)) {
    os << "<text class=\"label\" x=\"" << labelWidth - 8 << "\" y=\""
       << y + groupHeight / 2 + 4 << "\">"
       << escapeXml(truncateLabel(group.label, 32)) << "</text>\n";
    for (auto [s, ms] : enumerate(group.msPerRun)) {
      int barY = y + static_cast<int>(s) * (barHeight + barGap);
      double value = ms.value_or(0);
      double barWidth = maxMs > 0 ? value / maxMs * barSpace : 0;
      if (value > 0)
        barWidth = std::max(barWidth, 1.0);
      const char *color = palette[(series.size() > 1 ? s : g) % paletteSize];
      std::string valueText = ms ? fixed(value, 3) + " ms" : "-";
      os << "<rect x=\"" << labelWidth << "\" y=\"" << barY << "\" width=\""
         << fixed(barWidth, 1) << "\" height=\"" << barHeight << "\" fill=\""
         << color << "\"><title>" << escapeXml(group.label) << ": " << valueText
         << "/run</title></rect>"
         << "<text x=\"" << fixed(labelWidth + barWidth + 4, 1) << "\" y=\""
         << barY + barHeight - 3 << "\">" << valueText << "</text>\n";
    }
    y += groupHeight + groupGap;
  }
  os << "</svg>\n";
}

void writeHtmlTable(raw_ostream &os, const Table &table) {
  auto writeRow = [&](ArrayRef<std::string> row, StringRef tag, bool isTotal) {
    os << (isTotal ? "<tr class=\"total\">" : "<tr>");
    for (auto [col, cell] : enumerate(row))
      os << "<" << tag << (table.numeric[col] ? " class=\"num\"" : "") << ">"
         << escapeXml(cell) << "</" << tag << ">";
    os << "</tr>\n";
  };
  os << "<table>\n<thead>";
  writeRow(table.header, "th", false);
  os << "</thead>\n<tbody>\n";
  for (const std::vector<std::string> &row : table.rows)
    writeRow(row, "td", table.hasTotalRow && &row == &table.rows.back());
  os << "</tbody>\n</table>\n";
}

void writeHtmlStart(raw_ostream &os, StringRef title) {
  // XHTML-compatible markup: an XML parser can read the page too.
  os << "<!DOCTYPE html>\n"
        "<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n"
        "<head>\n<meta charset=\"utf-8\"/>\n<title>"
     << escapeXml(title)
     << "</title>\n<style>\n"
        "body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; "
        "color: #222; }\n"
        "h1 { font-size: 20px; } h2 { font-size: 16px; margin-top: 28px; }\n"
        "table { border-collapse: collapse; margin: 8px 0; }\n"
        "th, td { padding: 3px 10px; border-bottom: 1px solid #ddd; "
        "text-align: left; }\n"
        "th { background: #f3f3f3; }\n"
        ".num { text-align: right; font-variant-numeric: tabular-nums; }\n"
        "tr.total td { font-weight: bold; border-top: 2px solid #999; }\n"
        "svg text { font: 12px sans-serif; fill: #222; }\n"
        "svg text.label { text-anchor: end; }\n"
        "</style>\n</head>\n<body>\n";
}

void writeHtmlEnd(raw_ostream &os) { os << "</body>\n</html>\n"; }

std::vector<BarGroup> barGroups(const Profile &profile,
                                std::string NodeStats::*field) {
  std::vector<BarGroup> groups;
  for (const GroupStats &group : groupBy(profile, field))
    groups.push_back({group.key, {profile.msPerRun(group.totalUs)}});
  return groups;
}

std::vector<BarGroup> compareBarGroups(ArrayRef<CompareRow> rows) {
  std::vector<BarGroup> groups;
  for (const CompareRow &row : rows)
    groups.push_back({row.key, {row.aMs, row.bMs}});
  return groups;
}

Error writeFile(StringRef path, StringRef contents) {
  std::error_code ec;
  raw_fd_ostream os(path, ec, sys::fs::OF_None);
  if (ec)
    return fileError(path, "cannot write: " + ec.message());
  os << contents;
  os.close();
  if (os.has_error()) {
    std::error_code writeError = os.error();
    os.clear_error();
    return fileError(path, "cannot write: " + writeError.message());
  }
  return Error::success();
}

//===----------------------------------------------------------------------===//
// Modes
//===----------------------------------------------------------------------===//

std::string summarize(const Profile &profile, size_t top, bool html) {
  Table ops = groupTable(profile, &NodeStats::opType, "op type");
  Table providers = groupTable(profile, &NodeStats::provider, "provider");
  Table nodes = nodeTable(profile, top);
  std::string unit = profile.partitionsOnly ? "partitions" : "nodes";
  std::string nodesTitle =
      nodes.rows.size() < profile.nodes.size()
          ? "Top " + std::to_string(nodes.rows.size()) + " of " +
                std::to_string(profile.nodes.size()) + " " + unit
          : (profile.partitionsOnly ? "Partitions" : "Nodes");

  std::string out;
  raw_string_ostream os(out);
  if (!html) {
    os << summaryLine(profile) << "\n\nBy op type:\n";
    printTable(os, ops);
    os << "\nBy provider:\n";
    printTable(os, providers);
    if (top > 0) {
      os << "\n" << nodesTitle << ":\n";
      printTable(os, nodes);
    }
    return out;
  }
  writeHtmlStart(os, "kiln profile: " + profile.label);
  os << "<h1>kiln profile: " << escapeXml(profile.label) << "</h1>\n<p>"
     << escapeXml(summaryLine(profile)) << "</p>\n"
     << "<h2>Time per op type (ms/run)</h2>\n";
  writeBarChart(os, barGroups(profile, &NodeStats::opType), {profile.label});
  os << "<h2>Time per provider (ms/run)</h2>\n";
  writeBarChart(os, barGroups(profile, &NodeStats::provider), {profile.label});
  os << "<h2>Op types</h2>\n";
  writeHtmlTable(os, ops);
  os << "<h2>Providers</h2>\n";
  writeHtmlTable(os, providers);
  if (top > 0) {
    os << "<h2>" << escapeXml(nodesTitle) << "</h2>\n";
    writeHtmlTable(os, nodes);
  }
  writeHtmlEnd(os);
  return out;
}

std::string compare(const Profile &a, const Profile &b, bool html) {
  std::vector<CompareRow> opRows = compareRows(a, b, &NodeStats::opType);
  std::vector<CompareRow> providerRows =
      compareRows(a, b, &NodeStats::provider);
  Table ops = compareTable(a, b, opRows, "op type");
  Table providers = compareTable(a, b, providerRows, "provider");
  std::string out;
  raw_string_ostream os(out);
  if (!html) {
    os << "A: " << summaryLine(a) << "\nB: " << summaryLine(b)
       << "\n\nBy op type, ms/run:\n";
    printTable(os, ops);
    os << "\nBy provider, ms/run:\n";
    printTable(os, providers);
    return out;
  }
  std::string title = a.label + " vs " + b.label;
  writeHtmlStart(os, "kiln profile: " + title);
  os << "<h1>kiln profile: " << escapeXml(title)
     << "</h1>\n<p>A: " << escapeXml(summaryLine(a))
     << "<br/>B: " << escapeXml(summaryLine(b))
     << "</p>\n<h2>Time per op type (ms/run)</h2>\n";
  writeBarChart(os, compareBarGroups(opRows), {a.label, b.label});
  os << "<h2>Time per provider (ms/run)</h2>\n";
  writeBarChart(os, compareBarGroups(providerRows), {a.label, b.label});
  os << "<h2>Op types</h2>\n";
  writeHtmlTable(os, ops);
  os << "<h2>Providers</h2>\n";
  writeHtmlTable(os, providers);
  writeHtmlEnd(os);
  return out;
}

int usageError(const Twine &message) {
  errs() << toolName << ": error: " << message << "\n" << usageText;
  return 2;
}

int reportError(Error error) {
  errs() << toolName << ": error: " << toString(std::move(error)) << "\n";
  return 1;
}

} // namespace

int kiln::profileMain(int argc, char **argv) {
  bool compareMode = false;
  size_t top = 10;
  std::optional<std::string> htmlPath;
  std::vector<std::string> files;
  bool optionsDone = false;
  for (int i = 1; i < argc; ++i) {
    StringRef arg = argv[i];
    if (optionsDone || arg == "-" || !arg.starts_with("-")) {
      files.push_back(arg.str());
      continue;
    }
    if (arg == "--") {
      optionsDone = true;
      continue;
    }
    if (arg == "-h" || arg == "--help" || arg == "-help") {
      outs() << usageText << helpText;
      return 0;
    }
    if (arg == "--compare") {
      compareMode = true;
      continue;
    }
    // --top N, --top=N, --html OUT, --html=OUT.
    StringRef option = arg.split('=').first;
    if (option != "--top" && option != "--html")
      return usageError("unknown option '" + arg + "'");
    std::optional<StringRef> value;
    if (arg.contains('='))
      value = arg.split('=').second;
    else if (i + 1 < argc)
      value = StringRef(argv[++i]);
    if (!value || value->empty())
      return usageError(option + " needs a value");
    if (option == "--html") {
      htmlPath = value->str();
      continue;
    }
    unsigned long long n;
    if (value->getAsInteger(10, n))
      return usageError("--top needs a count of nodes, not '" + *value + "'");
    top = static_cast<size_t>(n);
  }
  if (compareMode && files.size() != 2)
    return usageError("--compare needs two profiles");
  if (!compareMode && files.size() != 1)
    return usageError(files.empty() ? "no profile given"
                                    : "one profile expected (or --compare)");

  std::vector<Profile> profiles;
  for (const std::string &file : files) {
    Expected<Profile> profile = loadProfile(file);
    if (!profile)
      return reportError(profile.takeError());
    profiles.push_back(std::move(*profile));
  }
  for (Profile &profile : profiles)
    profile.label = sys::path::filename(profile.path).str();
  // Same basename (two runs/profile.json): headers show the paths instead.
  if (profiles.size() == 2 && profiles[0].label == profiles[1].label)
    for (Profile &profile : profiles)
      profile.label = profile.path;

  auto render = [&](bool html) {
    return compareMode ? compare(profiles[0], profiles[1], html)
                       : summarize(profiles[0], top, html);
  };
  outs() << render(/*html=*/false);
  outs().flush();
  if (htmlPath)
    if (Error error = writeFile(*htmlPath, render(/*html=*/true)))
      return reportError(std::move(error));
  return 0;
}
