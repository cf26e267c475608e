#ifndef DEMI_PARALLEL_COMMUNICATOR_HPP_
#define DEMI_PARALLEL_COMMUNICATOR_HPP_

#include <cstddef>
#include <string>

#include "demi/common.hpp"

namespace demi {

/// @brief Collectives among the members of one group (replicas in a
/// process, processes on hosts, GPUs): the few that data-parallel training
/// needs. Every member calls the same collectives in the same order; a call
/// returns when this member's part is done.
///
/// A failure (a member that died, never joined, or took longer than the
/// backend's timeout) throws a CommError naming the backend, the operation
/// and the member; no call blocks forever.
class Communicator {
 public:
  virtual ~Communicator() = default;
  Communicator() = default;
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  /// This member's index in [0, size()).
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// "threads", "gloo", "nccl": for messages.
  virtual const char* backend() const = 0;

  /// data[i] = sum over members of their data[i]. The sum's order is fixed
  /// by the backend, so equal inputs always give bit-equal outputs.
  virtual void AllReduceSum(float* data, size_t count) = 0;
  /// Copies `bytes` bytes at `data` of member `root` into every member's.
  virtual void Broadcast(void* data, size_t bytes, int root) = 0;
  /// Returns once every member has called it.
  virtual void Barrier() = 0;
  /// True when AllReduceSum and Broadcast take device pointers of the
  /// member's GPU (NCCL); host pointers always work.
  virtual bool accepts_device_pointers() const { return false; }

  // Queued collectives (NCCL): the device runs them behind the caller's
  // work, and the caller's thread waits for nothing.
  /// True when the three calls below work.
  virtual bool queues_collectives() const { return false; }
  /// data[i] = sum over members, run after the work the calling thread's
  /// stream (util/cuda.hpp) holds now; returns once it is queued. `data` is
  /// device memory, left alone until a JoinQueued's work is done.
  virtual void QueueAllReduceSum(float* data, size_t count);
  /// Makes the calling thread's stream wait, on the device, for every
  /// collective queued so far: the host waits for nothing.
  virtual void JoinQueued();
  /// Blocks until the oldest queued all-reduce not yet waited for has run
  /// (one call per QueueAllReduceSum, in order, from any one thread: a
  /// watcher), or throws CommError on a failure or past the timeout, which
  /// breaks the member.
  virtual void WaitQueued();
  /// Breaks this member from any thread, for `reason` (another replica of
  /// this process failed): its blocked and later calls throw CommError
  /// instead of waiting for that replica until the timeout. A no-op for
  /// backends whose members another way wakes (threads: ThreadGroup::Abort)
  /// or cannot (Gloo: the process exits, which its peers see).
  virtual void Abort(const std::string& reason) {}
};

/// A collective that could not complete: a peer died, never joined, or the
/// timeout passed.
class CommError : public Error {
 public:
  using Error::Error;
};

}  // namespace demi

#endif  // DEMI_PARALLEL_COMMUNICATOR_HPP_
