#include "demi/util/cpu_load.hpp"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <fstream>
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
    int64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0,
            steal = 0;
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
  const CoreTimes before = ParseCoreTimes(ReadProcStat(), cpus);
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  const CoreTimes after = ParseCoreTimes(ReadProcStat(), cpus);
  return BusyCores(before, after, static_cast<int>(cpus.size()));
}

}  // namespace demi
