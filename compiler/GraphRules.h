//===- GraphRules.h - the ONNX checker's rules for a graph's nodes -*- C++
//-*-===//
//
// Before a graph's nodes become ops: every name is written once (single
// static assignment, as the ONNX checker requires), and the nodes are put
// in an order where each comes after the nodes it reads from. A graph whose
// nodes are listed out of order still imports, as ONNX Runtime accepts it;
// a cycle is an error naming a node on it.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMPILER_GRAPHRULES_H
#define KILN_COMPILER_GRAPHRULES_H

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kiln_onnx {
class GraphProto;
class NodeProto;
} // namespace kiln_onnx

namespace kiln {

/// A broken rule: the message, and the node it is about (-1: the graph).
struct GraphRuleError {
  int node = -1;
  std::string message;
};

/// The node's name, or for a node without one "<op type>_<index>".
std::string nodeName(const kiln_onnx::NodeProto &node, int index);

/// The indices of `graph`'s nodes in an order that respects their data
/// dependencies (the given order when it already does), or the first rule
/// the graph breaks. A subgraph's reads of its parent's values count as
/// reads of the node that holds the subgraph.
std::vector<int> orderNodes(const kiln_onnx::GraphProto &graph,
                            std::optional<GraphRuleError> &error);

} // namespace kiln

#endif
