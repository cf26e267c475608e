#ifndef DEMI_UTIL_CPU_LOAD_HPP_
#define DEMI_UTIL_CPU_LOAD_HPP_

#include <cstdint>
#include <string>
#include <vector>

namespace demi {

/// Time spent by a set of cores since boot, in the kernel's ticks, from
/// /proc/stat's per-core lines.
struct CoreTimes {
  int64_t busy = 0;  ///< user, nice, system, irq, softirq and steal
  int64_t idle = 0;  ///< idle and iowait
};

/// The sums over the cores `cpus` (by number) of /proc/stat's text `stat`;
/// cores the text lacks count nothing. A pure function of its arguments.
CoreTimes ParseCoreTimes(const std::string& stat, const std::vector<int>& cpus);

/// How many of `cores` cores were busy between two readings: 0 to `cores`.
double BusyCores(const CoreTimes& before, const CoreTimes& after, int cores);

/// How many of the cores this process may run on (its affinity mask) other
/// processes keep busy over the next `seconds`, while the calling thread
/// sleeps (this process's own threads are not counted). -1 when /proc/stat
/// cannot be read or no tick passed.
double MeasureBusyCores(double seconds);

}  // namespace demi

#endif  // DEMI_UTIL_CPU_LOAD_HPP_
