#ifndef DEMI_PARALLEL_NCCL_COMMUNICATOR_HPP_
#define DEMI_PARALLEL_NCCL_COMMUNICATOR_HPP_

// Built with USE_NCCL only (Makefile.config).
#ifdef USE_NCCL

#include <nccl.h>

#include <chrono>
#include <memory>
#include <vector>

#include "demi/parallel/communicator.hpp"

namespace demi {

class GlooCommunicator;

/// @brief One GPU replica's member of an NCCL clique: all GPU replicas of
/// all processes, one communicator each (one clique per process, joined
/// across processes through rank 0's unique id, which travels through the
/// Gloo store).
///
/// Collectives run on the calling thread's stream of the member's device
/// (util/cuda.hpp) and return when done. Device pointers are used directly;
/// host pointers are staged through a device buffer. Every wait polls NCCL's
/// asynchronous error and the timeout: past it the communicator is aborted
/// and the call throws CommError, so a dead peer never hangs a replica.
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

 private:
  NcclCommunicator(ncclComm_t comm, int device, int rank, int size,
                   std::chrono::milliseconds timeout);
  /// Waits for the stream, watching for NCCL errors and the timeout.
  void Wait(const char* operation);
  /// A device buffer of at least `bytes` for staging host data.
  void* Staging(size_t bytes);

  ncclComm_t comm_;
  int device_;
  int rank_;
  int size_;
  std::chrono::milliseconds timeout_;
  void* staging_ = nullptr;
  size_t staging_bytes_ = 0;
  bool broken_ = false;
  bool finalized_ = false;
};

}  // namespace demi

#endif  // USE_NCCL
#endif  // DEMI_PARALLEL_NCCL_COMMUNICATOR_HPP_
