#ifndef DEMI_UTIL_BYTE_SIZE_HPP_
#define DEMI_UTIL_BYTE_SIZE_HPP_

#include <cstddef>
#include <string>

namespace demi {

/// Reads a size as flags give it: plain bytes or with a unit, "1.5GiB",
/// "512MiB", "64K", "2GB". KiB/MiB/GiB and K/M/G are powers of 1024, KB/MB/GB
/// powers of 1000 (as GNU coreutils read them). Throws an Error naming `what`
/// (e.g. "--memory_budget") otherwise.
size_t ParseByteSize(const std::string& text, const std::string& what);

}  // namespace demi

#endif  // DEMI_UTIL_BYTE_SIZE_HPP_
