//===- GraphRules.cpp - the ONNX checker's rules for a graph's nodes ------===//
#include "compiler/GraphRules.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include "kiln_onnx.pb.h"

#include <queue>

namespace pb = kiln_onnx;

namespace kiln {
namespace {

/// The names `g` reads from outside itself (its implicit inputs): what its
/// nodes and outputs use that neither it nor an enclosing subgraph defines.
void outerReads(const pb::GraphProto &g, llvm::StringSet<> locals,
                llvm::StringSet<> &names) {
  for (const auto &in : g.input())
    locals.insert(in.name());
  for (const auto &init : g.initializer())
    locals.insert(init.name());
  for (const pb::NodeProto &inner : g.node())
    for (const std::string &out : inner.output())
      locals.insert(out);
  auto use = [&](const std::string &name) {
    if (!name.empty() && !locals.contains(name))
      names.insert(name);
  };
  for (const pb::NodeProto &inner : g.node()) {
    for (const std::string &in : inner.input())
      use(in);
    for (const pb::AttributeProto &attr : inner.attribute()) {
      if (attr.has_g())
        outerReads(attr.g(), locals, names);
      for (const pb::GraphProto &sub : attr.graphs())
        outerReads(sub, locals, names);
    }
  }
  // A body may return an outer value directly.
  for (const auto &out : g.output())
    use(out.name());
}

/// Every name a node's subgraphs read from the graph around the node.
void subgraphReads(const pb::NodeProto &node, llvm::StringSet<> &names) {
  for (const pb::AttributeProto &attr : node.attribute()) {
    if (attr.has_g())
      outerReads(attr.g(), {}, names);
    for (const pb::GraphProto &g : attr.graphs())
      outerReads(g, {}, names);
  }
}

} // namespace

std::string nodeName(const pb::NodeProto &node, int index) {
  return node.name().empty() ? node.op_type() + "_" + std::to_string(index)
                             : node.name();
}

std::vector<int> orderNodes(const pb::GraphProto &graph,
                            std::optional<GraphRuleError> &error) {
  int n = graph.node_size();
  // Who writes each name: -1 a graph input or initializer, else the node.
  llvm::StringMap<int> writer;
  for (const auto &in : graph.input())
    writer[in.name()] = -1;
  for (const auto &init : graph.initializer())
    writer[init.name()] = -1;
  for (int i = 0; i < n; ++i)
    for (const std::string &out : graph.node(i).output()) {
      if (out.empty())
        continue;
      auto [it, inserted] = writer.try_emplace(out, i);
      if (inserted)
        continue;
      std::string first =
          it->second < 0
              ? std::string("a graph input or initializer")
              : "the output of node \"" +
                    nodeName(graph.node(it->second), it->second) + "\"";
      error = GraphRuleError{i, "output \"" + out + "\" is already " + first +
                                    " (each name is written once)"};
      return {};
    }

  // Edges from writers to readers; Kahn's algorithm, lowest index first so
  // that a sorted graph keeps its order.
  std::vector<std::vector<int>> readers(n);
  std::vector<int> pending(n, 0);
  bool sorted = true;
  for (int i = 0; i < n; ++i) {
    llvm::StringSet<> reads;
    for (const std::string &in : graph.node(i).input())
      if (!in.empty())
        reads.insert(in);
    subgraphReads(graph.node(i), reads);
    llvm::SmallVector<int> from;
    for (const auto &r : reads) {
      auto it = writer.find(r.getKey());
      if (it != writer.end() && it->second >= 0 && it->second != i)
        from.push_back(it->second);
      // A node reading its own output is a cycle of one.
      if (it != writer.end() && it->second == i) {
        error = GraphRuleError{i, "reads its own output \"" + r.getKey().str() +
                                      "\" (the graph has a cycle)"};
        return {};
      }
    }
    llvm::sort(from);
    from.erase(std::unique(from.begin(), from.end()), from.end());
    for (int w : from) {
      readers[w].push_back(i);
      ++pending[i];
      sorted &= w < i;
    }
  }
  std::vector<int> order;
  order.reserve(n);
  if (sorted) {
    for (int i = 0; i < n; ++i)
      order.push_back(i);
    return order;
  }
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int i = 0; i < n; ++i)
    if (!pending[i])
      ready.push(i);
  while (!ready.empty()) {
    int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int r : readers[i])
      if (--pending[r] == 0)
        ready.push(r);
  }
  if (static_cast<int>(order.size()) == n)
    return order;
  // Every node left waits on another left node; follow the waits from the
  // first until one repeats: that node is on a cycle.
  std::vector<char> done(n, 0);
  for (int i : order)
    done[i] = 1;
  int at = 0;
  while (done[at])
    ++at;
  std::vector<char> seen(n, 0);
  while (!seen[at]) {
    seen[at] = 1;
    for (int w = 0; w < n; ++w)
      if (!done[w] && llvm::is_contained(readers[w], at)) {
        at = w;
        break;
      }
  }
  error = GraphRuleError{
      at, "its inputs depend on its own outputs (the graph has a cycle)"};
  return {};
}

} // namespace kiln
