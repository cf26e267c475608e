#include "demi/util/cpu_load.hpp"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <thread>

namespace demi {

CoreTimes ParseCoreTimes(const std::string& stat, const std::vector<int>& cpus) {
  const std::set<int> wanted(cpus.begin(), cpus.end());
  CoreTimes sum;
  std::istringstream lines(stat);
  std::string line;
  while (std::getline(lines, line)) {
    // "cpuN user nice system idle iowait irq softirq steal ..."; the first
    // line ("cpu ") sums every core and is skipped.
    if (line.compare(0, 3, "cpu") != 0 || line.size() < 4 || line[3] < '0' || line[3] > '9') {
      continue;
    }
    std::istringstream fields(line.substr(3));
    int cpu = -1;
    int64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
    fields >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal;
    if (wanted.count(cpu) == 0) continue;
    sum.busy += user + nice + system + irq + softirq + steal;
    sum.idle += idle + iowait;
  }
  return sum;
}

double BusyCores(const CoreTimes& before, const CoreTimes& after, int cores) {
  const int64_t busy = after.busy - before.busy;
  const int64_t total = busy + (after.idle - before.idle);
  if (total <= 0 || busy < 0) return -1;
  return std::clamp(static_cast<double>(busy) / static_cast<double>(total) * cores, 0.0,
                    static_cast<double>(cores));
}

namespace {

std::string ReadProcStat() {
  std::ifstream file("/proc/stat");
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

/// This process's CPU time (all its threads, user and system) in the
/// kernel's ticks, from /proc/self/stat; 0 when it cannot be read.
int64_t TicksOfThisProcess() {
  std::ifstream file("/proc/self/stat");
  std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  // The command name, in parentheses, may hold spaces: fields count from
  // after its closing one. utime and stime are fields 14 and 15 of the line,
  // the 12th and 13th after the name.
  const size_t name_end = text.rfind(')');
  if (name_end == std::string::npos) return 0;
  std::istringstream fields(text.substr(name_end + 1));
  std::string skipped;
  for (int i = 0; i < 11; ++i) fields >> skipped;
  int64_t user = 0, system = 0;
  fields >> user >> system;
  return fields ? user + system : 0;
}

std::vector<int> CpusOfThisProcess() {
  std::vector<int> cpus;
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (sched_getaffinity(0, sizeof(mask), &mask) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &mask)) cpus.push_back(cpu);
  }
  return cpus;
}

}  // namespace

double MeasureBusyCores(double seconds) {
  const std::vector<int> cpus = CpusOfThisProcess();
  if (cpus.empty()) return -1;
  CoreTimes before = ParseCoreTimes(ReadProcStat(), cpus);
  const int64_t own_before = TicksOfThisProcess();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  CoreTimes after = ParseCoreTimes(ReadProcStat(), cpus);
  // Not this process's own threads (OpenBLAS's pool spins as it starts):
  // their time counts as idle, the cores they held being free to it.
  const int64_t own = std::max<int64_t>(0, TicksOfThisProcess() - own_before);
  after.busy -= own;
  after.idle += own;
  return BusyCores(before, after, static_cast<int>(cpus.size()));
}

}  // namespace demi
