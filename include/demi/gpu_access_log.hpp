#ifndef DEMI_GPU_ACCESS_LOG_HPP_
#define DEMI_GPU_ACCESS_LOG_HPP_

#include <cstddef>
#include <memory>
#include <vector>

namespace demi {

class SyncedMemory;

/// @brief The SyncedMemories that code queued on the GPU reads and writes,
/// noted while it is captured into a CUDA graph, so that replays keep the
/// memories' head states true: the graph runs without the host code that
/// would have moved them.
///
/// While a log records on a thread, SyncedMemory::gpu_data() and
/// mutable_gpu_data() on that thread note their memory (and its device
/// address), and a host access or a move of bytes to the device throws
/// instead (the host code would run at the capture only; a graph would
/// repeat the move on every replay). Before each replay,
/// PrepareReplay brings what the host wrote since to the device; after it,
/// FinishReplay marks what the graph wrote as changed on the device, as the
/// mutable_gpu_data() calls would have.
class GpuAccessLog {
 public:
  GpuAccessLog() = default;
  ~GpuAccessLog();
  GpuAccessLog(const GpuAccessLog&) = delete;
  GpuAccessLog& operator=(const GpuAccessLog&) = delete;
  /// Only while not recording.
  GpuAccessLog(GpuAccessLog&&) = default;
  GpuAccessLog& operator=(GpuAccessLog&&) = default;

  /// Starts noting this thread's accesses (one log records at a time).
  void Start();
  /// Stops; the log keeps each memory once (written if ever written).
  void Stop();
  /// Forgets every memory noted.
  void Clear() { accesses_.clear(); }

  /// Whether every noted memory still exists and its device bytes are still
  /// where they were (else a replay would use freed addresses). A pycaffe
  /// user may drop and remake a blob at an unchanged shape between steps.
  bool AddressesHold() const;
  /// Syncs every noted memory to the device (what the host wrote since).
  void PrepareReplay() const;
  /// Marks the written memories as changed on the device.
  void FinishReplay() const;

  /// The log recording on this thread, or nullptr.
  static GpuAccessLog* Current();
  /// From SyncedMemory: `memory`, at device address `address`, was read (and
  /// written when `written`) by GPU work queued now.
  void Note(SyncedMemory* memory, const void* address, bool written);

  size_t size() const { return accesses_.size(); }

 private:
  struct Access {
    SyncedMemory* memory = nullptr;   ///< read only while `alive` holds
    std::weak_ptr<const void> alive;  ///< the memory's lifetime_token()
    const void* address = nullptr;
    bool written = false;
  };
  std::vector<Access> accesses_;
};

}  // namespace demi

#endif  // DEMI_GPU_ACCESS_LOG_HPP_
