#ifndef DEMI_UTIL_HOST_RETAIN_HPP_
#define DEMI_UTIL_HOST_RETAIN_HPP_

#include <memory>

namespace demi {

class SyncedMemory;

/// @brief Host allocations that outlive their owner while someone else
/// still points into them (issue 26: a numpy view of a blob whose memory a
/// larger reshape or a re-plan replaced).
///
/// SyncedMemory and Arena give their host blocks back through
/// ReleaseHostBlock, which frees a block at once unless it is retained; a
/// retained block is freed when its last retainer lets go. A retainer reads
/// and writes bytes nothing else uses any more, never freed memory.

/// Frees `block` (HostMalloc'd), or leaves that to its retainers.
void ReleaseHostBlock(void* block);

/// Keeps alive the host block that `memory`'s host bytes lie in (its own
/// allocation, or its arena's block), allocating it if need be, for as long
/// as the returned pointer or a copy of it lives.
std::shared_ptr<const void> RetainHostBlock(SyncedMemory& memory);

}  // namespace demi

#endif  // DEMI_UTIL_HOST_RETAIN_HPP_
