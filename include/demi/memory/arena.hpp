#ifndef DEMI_MEMORY_ARENA_HPP_
#define DEMI_MEMORY_ARENA_HPP_

#include <cstddef>
#include <cstdint>

namespace demi {

/// @brief One contiguous block of bytes (host, and device on CUDA builds) that
/// the memory planner carves into ranges; SyncedMemory views point into it.
///
/// Capacity-aware: Reserve() grows the block only when asked for more than it
/// holds and never shrinks it. Growing discards the contents: a net re-plans
/// (and so recomputes every arena tensor) whenever the arena grows.
class Arena {
 public:
  Arena() = default;
  /// `zero_on_allocate`: every (re)allocated block starts as zeros, for
  /// blocks swept whole (the params' ViewBlock), whose gaps between views
  /// must hold no garbage. The planner's arena leaves pages untouched.
  explicit Arena(bool zero_on_allocate) : zero_on_allocate_(zero_on_allocate) {}
  ~Arena();
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  void Reserve(size_t bytes);
  size_t capacity() const { return capacity_; }
  /// Bytes of the host (device) block allocated so far: a Reserve beyond
  /// them allocates a new block of capacity() bytes on next access.
  size_t host_bytes() const { return host_bytes_; }
  size_t device_bytes() const { return device_bytes_; }
  /// Number of times the host block was (re)allocated; tests use it to prove
  /// that shrinking never reallocates.
  int64_t host_allocations() const { return host_allocations_; }

  uint8_t* host_base();
  uint8_t* device_base();
  /// device_base() as it stands, without allocating: nullptr when the next
  /// device_base() would allocate anew.
  const uint8_t* current_device_base() const {
    return device_bytes_ >= capacity_ ? device_ : nullptr;
  }

 private:
  bool zero_on_allocate_ = false;
  size_t capacity_ = 0;
  uint8_t* host_ = nullptr;
  size_t host_bytes_ = 0;
  uint8_t* device_ = nullptr;
  size_t device_bytes_ = 0;
  int64_t host_allocations_ = 0;
};

}  // namespace demi

#endif  // DEMI_MEMORY_ARENA_HPP_
