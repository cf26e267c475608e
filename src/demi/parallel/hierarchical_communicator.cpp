#include "demi/parallel/hierarchical_communicator.hpp"

namespace demi {

HierarchicalCommunicator::HierarchicalCommunicator(std::unique_ptr<Communicator> local,
                                                   Communicator* global)
    : local_(std::move(local)), global_(global) {
  CHECK(local_ && global_);
}

int HierarchicalCommunicator::rank() const {
  return global_->rank() * local_->size() + local_->rank();
}

int HierarchicalCommunicator::size() const { return global_->size() * local_->size(); }

void HierarchicalCommunicator::AllReduceSum(float* data, size_t count) {
  local_->AllReduceSum(data, count);
  if (is_leader()) global_->AllReduceSum(data, count);
  local_->Broadcast(data, count * sizeof(float), 0);
}

void HierarchicalCommunicator::Broadcast(void* data, size_t bytes, int root) {
  CHECK(root >= 0 && root < size());
  const int root_process = root / local_->size();
  // The root's process gets it first, then every process's leader, then the rest.
  if (global_->rank() == root_process) local_->Broadcast(data, bytes, root % local_->size());
  if (is_leader()) global_->Broadcast(data, bytes, root_process);
  local_->Broadcast(data, bytes, 0);
}

void HierarchicalCommunicator::Barrier() {
  local_->Barrier();
  if (is_leader()) global_->Barrier();
  local_->Barrier();
}

}  // namespace demi
