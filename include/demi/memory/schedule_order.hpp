#ifndef DEMI_MEMORY_SCHEDULE_ORDER_HPP_
#define DEMI_MEMORY_SCHEDULE_ORDER_HPP_

#include <cstddef>
#include <string>
#include <vector>

#include "demi/memory/schedule.hpp"

namespace demi {

/// Which layers must run before which so that any order meeting these
/// computes what prototxt order computes, bit for bit. Layers are indexed
/// in prototxt order; an edge a -> b has a < b: forward runs a first and
/// backward (in reverse) runs b first.
struct OrderConstraints {
  std::vector<std::vector<int>> predecessors;
  std::vector<std::vector<int>> successors;
  /// The leading layers that read nothing (data and input layers): they
  /// run first, in prototxt order.
  int pinned_prefix = 0;
};

/// Edges from every conflict over a memory, forward and backward apart: a
/// layer after the last writer of what it reads, a writer after the
/// readers of the value it overwrites (in-place chains keep their order);
/// and consecutive layers of each order group.
OrderConstraints ConstrainOrder(const Schedule& schedule);

/// Empty when `order` is a permutation of the layers meeting
/// `constraints`; otherwise what is wrong.
std::string CheckOrder(const OrderConstraints& constraints, const std::vector<int>& order);

/// A floor under the liveness bound of every order `constraints` allow:
/// the most bytes live at one step in all of them. A memory is live at a
/// layer's forward or backward step in every order when that step uses it,
/// or when one of its uses must come before the step and another after
/// (the forward/backward turn orders every forward use before every
/// backward one). When prototxt order's bound meets this floor, no order
/// is better.
size_t OrderFreeBound(const Schedule& schedule, const OrderConstraints& constraints);

/// `schedule` with its layers run in `order` (layer indices of `schedule`).
Schedule Reordered(const Schedule& schedule, const std::vector<int>& order);

}  // namespace demi

#endif  // DEMI_MEMORY_SCHEDULE_ORDER_HPP_
