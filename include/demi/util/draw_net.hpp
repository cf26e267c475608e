#ifndef DEMI_UTIL_DRAW_NET_HPP_
#define DEMI_UTIL_DRAW_NET_HPP_

#include <set>
#include <string>

#include "demi/memory/planner.hpp"
#include "demi/proto/demi.pb.h"

namespace demi {

class Net;

/// Graphviz renders bitmaps through cairo, whose surfaces stop at 32767
/// pixels a side: a larger drawing is shrunk to fit, into an unreadable strip.
constexpr double kMaxRenderedPixels = 32767;

struct DrawNetOptions {
  std::string rankdir = "LR";  ///< Graphviz's: LR (left to right) or TB
  /// Whether a drawing that would pass kMaxRenderedPixels along LR or RL
  /// ranks is drawn top to bottom (TB) instead, and one still too tall TB has
  /// one-line labels and closer ranks (each with a log line).
  bool fit_rankdir = true;
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
/// computed here, not bound. In TRAIN a blob that backward gives no
/// gradient (data, labels, what only non-learning layers read) says "no
/// gradient" where others say where their diff lives.
std::string NetToDot(const Net& net, const DrawNetOptions& options);

/// The phase to draw `param` in when the user names none: TEST for a deploy
/// net (Input layers or inputs, and no layer with a phase rule), else TRAIN.
Phase DrawPhaseOf(const NetParameter& param);

/// `text` quoted for DOT: in double quotes, with '"' and '\' escaped.
std::string DotQuoted(const std::string& text);

}  // namespace demi

#endif  // DEMI_UTIL_DRAW_NET_HPP_
