#include "demi/util/host_memory.hpp"

#include <sys/resource.h>

#include <fstream>
#include <sstream>

namespace demi {

namespace {

std::string ReadSmallFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

/// Lowers `available` to `bytes` when that limit is tighter.
void Consider(size_t bytes, const std::string& limit, HostMemory* available) {
  if (bytes < available->bytes) {
    available->bytes = bytes;
    available->limit = limit;
  }
}

}  // namespace

bool ParseKiBField(const std::string& text, const std::string& field, size_t* bytes) {
  std::istringstream lines(text);
  std::string line;
  const std::string key = field + ":";
  while (std::getline(lines, line)) {
    if (line.compare(0, key.size(), key) != 0) continue;
    std::istringstream value(line.substr(key.size()));
    unsigned long long kib = 0;
    std::string unit;
    if (!(value >> kib >> unit) || unit != "kB") return false;
    return !__builtin_mul_overflow(static_cast<size_t>(kib), size_t{1024}, bytes);
  }
  return false;
}

bool ParseCgroupLimit(const std::string& text, size_t* bytes) {
  std::istringstream value(text);
  unsigned long long limit = 0;
  if (!(value >> limit)) return false;  // "max", or nothing
  *bytes = static_cast<size_t>(limit);
  return true;
}

HostMemory AvailableHostMemory() {
  HostMemory available;
  size_t bytes = 0;
  // cgroup v2 names its limit memory.max; v1 mounts a memory hierarchy.
  if (ParseCgroupLimit(ReadSmallFile("/sys/fs/cgroup/memory.max"), &bytes)) {
    Consider(bytes, "cgroup memory.max", &available);
  } else if (ParseCgroupLimit(ReadSmallFile("/sys/fs/cgroup/memory/memory.limit_in_bytes"),
                              &bytes)) {
    Consider(bytes, "cgroup memory.limit_in_bytes", &available);
  }
  if (ParseKiBField(ReadSmallFile("/proc/meminfo"), "MemAvailable", &bytes)) {
    Consider(bytes, "MemAvailable in /proc/meminfo", &available);
  }
  rlimit address_space{};
  if (getrlimit(RLIMIT_AS, &address_space) == 0 && address_space.rlim_cur != RLIM_INFINITY) {
    size_t in_use = 0;
    ParseKiBField(ReadSmallFile("/proc/self/status"), "VmSize", &in_use);
    const size_t limit = static_cast<size_t>(address_space.rlim_cur);
    Consider(limit > in_use ? limit - in_use : 0, "ulimit -v (address space left)", &available);
  }
  return available;
}

}  // namespace demi
