#ifndef DEMI_SYNCEDMEM_HPP_
#define DEMI_SYNCEDMEM_HPP_

#include <cstddef>
#include <cstdint>
#include <memory>

namespace demi {

class Arena;

/// @brief Bytes with a host copy and (on CUDA builds) a device copy, synced
/// lazily by a head state, as in Caffe.
///
/// Capacity-aware: Resize(n) reallocates only when n exceeds the capacity and
/// never shrinks, so a reshape to a smaller batch costs nothing. A
/// SyncedMemory either owns its bytes or is a view of a range of an Arena (the
/// memory planner binds views); a view has its own head state and syncs only
/// its own range.
class SyncedMemory {
 public:
  enum Head { UNINITIALIZED, AT_CPU, AT_GPU, SYNCED };

  SyncedMemory() = default;
  explicit SyncedMemory(size_t size) : size_(size), capacity_(size) {}
  ~SyncedMemory();
  SyncedMemory(const SyncedMemory&) = delete;
  SyncedMemory& operator=(const SyncedMemory&) = delete;

  const void* cpu_data();
  void* mutable_cpu_data();
  /// The host bytes for a caller that writes every one of them: unlike
  /// mutable_cpu_data(), nothing is fetched from the device first (nor waited
  /// for). The head becomes AT_CPU.
  void* overwrite_cpu_data();
  const void* gpu_data();
  void* mutable_gpu_data();
  /// The device address gpu_data() would return now, without allocating or
  /// syncing: nullptr when it would allocate (GpuAccessLog checks that a
  /// CUDA graph's addresses still hold).
  const void* gpu_address() const;

  /// Sets the logical size. Owning memory keeps its allocation when `size`
  /// fits the capacity; otherwise the old bytes are released and the content
  /// is lost (head becomes UNINITIALIZED).
  void Resize(size_t size);
  /// Points this memory at [offset, offset + size) of `arena`, releasing any
  /// owned allocation. Content is not carried over.
  void BindToArena(Arena* arena, size_t offset, size_t size);
  /// Leaves the arena and owns its bytes again (allocated on next access).
  void Unbind();

  size_t size() const { return size_; }
  size_t capacity() const { return capacity_; }
  Head head() const { return head_; }
  bool is_view() const { return arena_ != nullptr; }
  /// The arena this memory is a view of (nullptr when it owns its bytes).
  const Arena* arena() const { return arena_; }
  size_t arena_offset() const { return offset_; }
  /// A token that expires when this memory is destroyed (made at the first
  /// call): a GpuAccessLog keeping it between CUDA graph replays learns
  /// that a memory it noted is gone instead of reading it.
  std::weak_ptr<const void> lifetime_token();
  /// Host bytes this object has allocated itself (0 for a view).
  size_t owned_host_bytes() const { return owns_host_ ? capacity_ : 0; }

 private:
  void ToCpu();
  void ToGpu();
  uint8_t* HostPointer();
  uint8_t* DevicePointer();
  void ReleaseOwned();

  uint8_t* cpu_ptr_ = nullptr;
  uint8_t* gpu_ptr_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
  Head head_ = UNINITIALIZED;
  bool owns_host_ = false;
  bool owns_device_ = false;
  Arena* arena_ = nullptr;
  size_t offset_ = 0;
  std::shared_ptr<const void> lifetime_;  ///< lifetime_token()'s owner, or null
};

}  // namespace demi

#endif  // DEMI_SYNCEDMEM_HPP_
