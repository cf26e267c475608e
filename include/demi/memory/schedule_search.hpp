#ifndef DEMI_MEMORY_SCHEDULE_SEARCH_HPP_
#define DEMI_MEMORY_SCHEDULE_SEARCH_HPP_

#include <cstddef>
#include <vector>

#include "demi/memory/schedule.hpp"

namespace demi {

/// The execution order the planner chose for a schedule, and what it buys.
struct ScheduleChoice {
  std::vector<int> order;       ///< layer indices in the order they run forward
  size_t prototxt_bound = 0;    ///< lower bound of the schedule in prototxt order
  size_t bound = 0;             ///< lower bound in the chosen order
  size_t prototxt_planned = 0;  ///< arena bytes planned in prototxt order
  size_t planned = 0;           ///< arena bytes planned in the chosen order
  /// No allowed order's bound is lower (OrderFreeBound).
  size_t order_free_bound = 0;
  int moved_layers = 0;  ///< layers that run at another step than in prototxt order
  int evaluations = 0;   ///< orders whose bound was computed

  bool changed() const { return moved_layers > 0; }
};

/// How many candidate orders a search evaluates at most; the count, not
/// the clock, bounds it, so that the choice is the same on every machine.
constexpr int kDefaultOrderEvaluations = 20000;

/// Searches the orders ConstrainOrder allows for one with a lower liveness
/// bound (then fewer byte-steps held): a local search from prototxt order
/// that moves single layers and chains of dependent layers (a branch of a
/// fork) to every step they may run at, keeping each move that lowers
/// (bound, held byte-steps). The result is prototxt
/// order unless the chosen order's arena plan is smaller or, equal in
/// planned bytes, its bound lower. Skips the search when prototxt order's
/// bound meets OrderFreeBound. Deterministic.
ScheduleChoice ChooseOrder(const Schedule& schedule,
                           int max_evaluations = kDefaultOrderEvaluations);

}  // namespace demi

#endif  // DEMI_MEMORY_SCHEDULE_SEARCH_HPP_
