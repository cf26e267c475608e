#ifndef DEMI_PARALLEL_HIERARCHICAL_COMMUNICATOR_HPP_
#define DEMI_PARALLEL_HIERARCHICAL_COMMUNICATOR_HPP_

#include <memory>

#include "demi/parallel/communicator.hpp"

namespace demi {

/// @brief All replicas of all processes as one group: `local` joins the
/// replicas of this process, `global` (used by local member 0 only) joins
/// the processes. Member rank = process rank * local size + local rank, so
/// replicas are numbered process by process.
///
/// AllReduceSum: sum within the process, then across processes (local 0),
/// then hand the result to the process's other replicas. Every process must
/// have the same number of local replicas.
class HierarchicalCommunicator : public Communicator {
 public:
  HierarchicalCommunicator(std::unique_ptr<Communicator> local, Communicator* global);

  int rank() const override;
  int size() const override;
  const char* backend() const override { return global_->backend(); }
  void AllReduceSum(float* data, size_t count) override;
  void Broadcast(void* data, size_t bytes, int root) override;
  void Barrier() override;

 private:
  bool is_leader() const { return local_->rank() == 0; }

  std::unique_ptr<Communicator> local_;
  Communicator* global_;
};

}  // namespace demi

#endif  // DEMI_PARALLEL_HIERARCHICAL_COMMUNICATOR_HPP_
