#ifndef DEMI_UTIL_HOST_MEMORY_HPP_
#define DEMI_UTIL_HOST_MEMORY_HPP_

#include <cstddef>
#include <string>

namespace demi {

/// How many more bytes this process may allocate on the host, and which of
/// the machine's limits says so: the least of
///   - the cgroup's memory limit (v2 memory.max, else v1 memory.limit_in_bytes),
///   - MemAvailable in /proc/meminfo (free memory plus reclaimable caches),
///   - `ulimit -v` (RLIMIT_AS) less the address space already in use (VmSize).
/// A limit that cannot be read is left out; with none, `bytes` is SIZE_MAX.
struct HostMemory {
  size_t bytes = static_cast<size_t>(-1);
  std::string limit;  ///< e.g. "MemAvailable in /proc/meminfo"; empty when none applies
};
HostMemory AvailableHostMemory();

// The parsers behind it, for tests.

/// The value of `field` ("MemAvailable", "VmSize") in /proc/meminfo or
/// /proc/self/status format ("MemAvailable:   23492160 kB"), in bytes.
bool ParseKiBField(const std::string& text, const std::string& field, size_t* bytes);
/// A cgroup limit file's content: a number of bytes, or "max" (no limit:
/// false).
bool ParseCgroupLimit(const std::string& text, size_t* bytes);

}  // namespace demi

#endif  // DEMI_UTIL_HOST_MEMORY_HPP_
