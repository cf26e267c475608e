#ifndef DEMI_PARALLEL_NCCL_COMMUNICATOR_HPP_
#define DEMI_PARALLEL_NCCL_COMMUNICATOR_HPP_

// Built with USE_NCCL only (Makefile.config).
#ifdef USE_NCCL

#include <nccl.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "demi/parallel/communicator.hpp"

namespace demi {

class GlooCommunicator;

/// @brief One GPU replica's member of an NCCL clique: all GPU replicas of
/// all processes, one communicator each (one clique per process, joined
/// across processes through rank 0's unique id, which travels through the
/// Gloo store).
///
/// Collectives run on the member's own stream, of the device's highest
/// priority (so they take SMs ahead of the compute they overlap), after the
/// work the calling thread's stream (util/cuda.hpp) holds when they are
/// called. AllReduceSum and Broadcast return when done; device pointers are
/// used directly, host pointers staged through a device buffer. The queued
/// calls (Communicator) let the solver's stream wait for the gradients'
/// all-reduce on the device, and a watching thread wait for each on the
/// host from when it is queued (WaitQueued). Every wait watches NCCL's asynchronous error and the
/// timeout: past it the communicator is aborted and the call throws
/// CommError, so a dead peer never hangs a replica. The watching thread may
/// abort while the queuing one calls: NCCL is called under a mutex.
class NcclCommunicator : public Communicator {
 public:
  /// Creates the members for this process's `devices` (replica i of this
  /// process gets rank process_rank * devices.size() + i of
  /// world_size * devices.size()). `store` joins the processes (null when
  /// world_size is 1).
  static std::vector<std::unique_ptr<NcclCommunicator>> CreateClique(
      const std::vector<int>& devices, int process_rank, int world_size, GlooCommunicator* store,
      std::chrono::milliseconds timeout);
  /// Ends a clique cleanly before its members are destroyed: flushes and
  /// finalizes all of them together (finalizing is collective among the
  /// members, so destroying them one after another from one thread would
  /// deadlock). Members not finalized this way (a broken clique, a timeout)
  /// are aborted when destroyed.
  static void FinalizeClique(const std::vector<NcclCommunicator*>& members);
  ~NcclCommunicator() override;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  const char* backend() const override { return "nccl"; }
  bool accepts_device_pointers() const override { return true; }
  void AllReduceSum(float* data, size_t count) override;
  void Broadcast(void* data, size_t bytes, int root) override;
  void Barrier() override;
  /// How long a wait for the peers may take before the member breaks.
  void set_timeout(std::chrono::milliseconds timeout) { timeout_ = timeout; }
  bool queues_collectives() const override { return true; }
  void QueueAllReduceSum(float* data, size_t count) override;
  void JoinQueued() override;
  void WaitQueued() override;
  /// Aborts comm_ under the mutex: the member's waits, its watcher's
  /// included, throw CommError naming `reason` at their next look.
  void Abort(const std::string& reason) override;

 private:
  NcclCommunicator(ncclComm_t comm, int device, int rank, int size,
                   std::chrono::milliseconds timeout);
  /// Makes stream_ wait for what the calling thread's stream holds now.
  void FollowCaller();
  /// Calls `collective` (an NCCL call on comm_ and stream_) under the mutex
  /// and waits until NCCL has queued it (a non-blocking comm may still be
  /// queueing: no other NCCL call may touch it meanwhile).
  template <typename Call>
  void Enqueue(const char* operation, Call collective);
  /// AllReduceSum's and Broadcast's way: `collective(buffer)` over `bytes`
  /// at `data` (device memory, or host memory staged through a buffer),
  /// waited for.
  template <typename Call>
  void RunBlocking(const char* operation, void* data, size_t bytes, Call collective);
  /// Waits until `event`'s work has run with the comm sound, watching for
  /// NCCL errors and the timeout; spins first where a caller waits (`eager`),
  /// else only sleeps.
  void Wait(const char* operation, cudaEvent_t event, bool eager);
  /// NCCL's asynchronous state (ncclInternalError once aborted).
  ncclResult_t State();
  /// Throws the first failure's CommError once the comm is broken.
  void ThrowIfBroken();
  /// Aborts comm_ and throws CommError: `operation` failed with `state`, or
  /// timed out where state is ncclSuccess or ncclInProgress (or the first
  /// failure's message, where another call failed before).
  [[noreturn]] void Fail(const char* operation, ncclResult_t state);
  /// A device buffer of at least `bytes` for staging host data.
  void* Staging(size_t bytes);

  ncclComm_t comm_;
  int device_;
  int rank_;
  int size_;
  std::chrono::milliseconds timeout_;
  cudaStream_t stream_ = nullptr;
  /// Where the caller's stream was at a collective: stream_ waits for it.
  cudaEvent_t caller_ = nullptr;
  /// After a blocking collective, for its wait; after the queued ones, for
  /// the caller's stream to wait for (JoinQueued).
  cudaEvent_t done_ = nullptr, joined_ = nullptr;
  void* staging_ = nullptr;
  size_t staging_bytes_ = 0;
  /// Guards comm_, broken_ and failure_ (the watching thread may abort),
  /// and the marks below.
  std::mutex mutex_;
  std::atomic<bool> broken_{false};
  std::string failure_;
  bool finalized_ = false;
  /// Each queued all-reduce's event, oldest first, not yet waited for; and
  /// waited ones, for reuse.
  std::deque<cudaEvent_t> marks_;
  std::vector<cudaEvent_t> spare_events_;
};

}  // namespace demi

#endif  // USE_NCCL
#endif  // DEMI_PARALLEL_NCCL_COMMUNICATOR_HPP_
