#ifndef DEMI_NET_SCHEDULE_HPP_
#define DEMI_NET_SCHEDULE_HPP_

#include <set>
#include <string>

#include "demi/memory/liveness.hpp"
#include "demi/memory/report.hpp"

namespace demi {

class Net;

/// Describes `net`'s schedule for the planner — forward steps in layer
/// order, then (with `backward`) backward steps in reverse — with every use
/// of every activation's data and diff and of every layer buffer, from the
/// layers' declarations of what their Backward reads. `keep` names blobs
/// that stay persistent. The planner (memory/) sees only this description,
/// never the Net.
NetSchedule DescribeSchedule(const Net& net, bool backward, const std::set<std::string>& keep);

/// AnalyzeLiveness of DescribeSchedule(net, backward, keep).
NetLiveness AnalyzeLiveness(const Net& net, bool backward, const std::set<std::string>& keep);

/// ReportMemory of `net`'s schedule, in the order it runs in.
NetMemoryReport ReportNetMemory(const Net& net, int64_t batch, size_t budget = 0);

}  // namespace demi

#endif  // DEMI_NET_SCHEDULE_HPP_
