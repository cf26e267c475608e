#ifndef DEMI_UTIL_DRAW_NET_HPP_
#define DEMI_UTIL_DRAW_NET_HPP_

#include <set>
#include <string>

#include "demi/memory/planner.hpp"

namespace demi {

class Net;

struct DrawNetOptions {
  std::string rankdir = "LR";  ///< Graphviz's: LR (left to right) or TB
  PlanStrategy strategy = PlanStrategy::kArena;
  std::set<std::string> keep;  ///< the net's keep_blob names (persistent)
};

/// A Graphviz DOT drawing of `net` with its memory plan: layers as boxes
/// (name, type, key params, param shapes), blobs as octagons (name, shape,
/// bytes, where the plan puts data and diff). A blob written in place gets
/// a new node per writer, so the graph stays acyclic. Auto-inserted Split
/// layers are left out (their tops share the bottom's data). Blobs whose
/// data the plan puts at the same arena offset share one fill colour (hues
/// follow the offset up the arena); persistent blobs are grey.
/// `net` should be built with memory_optimization NONE: the plan is
/// computed here, not bound.
std::string NetToDot(const Net& net, const DrawNetOptions& options);

/// `text` quoted for DOT: in double quotes, with '"' and '\' escaped.
std::string DotQuoted(const std::string& text);

}  // namespace demi

#endif  // DEMI_UTIL_DRAW_NET_HPP_
