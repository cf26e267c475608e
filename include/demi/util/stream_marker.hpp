#ifndef DEMI_UTIL_STREAM_MARKER_HPP_
#define DEMI_UTIL_STREAM_MARKER_HPP_

namespace demi {

/// A point in one thread's stream (util/cuda.hpp) that another thread can
/// wait for: a CUDA event. The recording thread goes on queueing work; only
/// the waiter blocks, until what was queued before the point has run.
/// Created on the current device; on a CPU_ONLY build creating one is an
/// Error.
class StreamMarker {
 public:
  StreamMarker();
  ~StreamMarker();
  StreamMarker(const StreamMarker&) = delete;
  StreamMarker& operator=(const StreamMarker&) = delete;
  /// Marks the calling thread's stream here (again: the latest mark counts).
  void Record();
  /// Returns once the work queued before the latest Record has run.
  void Wait() const;
  /// Makes the calling thread's stream wait, on the device, for the work
  /// queued before the latest Record: the host waits for nothing.
  void MakeStreamWait() const;
  /// Wait for a destructor: where CUDA has already shut down (at process
  /// exit, after its runtime unloaded) there is nothing left to wait for,
  /// and this returns instead of aborting.
  void WaitUnlessShutDown() const noexcept;

 private:
  [[maybe_unused]] void* event_ = nullptr;  ///< a cudaEvent_t (unused in CPU_ONLY builds)
};

}  // namespace demi

#endif  // DEMI_UTIL_STREAM_MARKER_HPP_
