#include "demi/parallel/thread_communicator.hpp"

#include <algorithm>
#include <cstring>

namespace demi {

ThreadGroup::ThreadGroup(int size, std::chrono::milliseconds timeout)
    : size_(size), timeout_(timeout), buffers_(size), lengths_(size) {
  DEMI_CHECK(size >= 1, "a thread group needs at least one member, got ", size);
}

void ThreadGroup::Abort(const std::string& reason) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (abort_reason_.empty()) abort_reason_ = reason;
  all_arrived_.notify_all();
}

void ThreadGroup::Arrive(int rank, const char* operation) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!abort_reason_.empty()) throw CommError(abort_reason_);
  const uint64_t generation = generation_;
  if (++arrived_ == size_) {
    arrived_ = 0;
    ++generation_;
    all_arrived_.notify_all();
    return;
  }
  const bool released = all_arrived_.wait_for(
      lock, timeout_, [&] { return generation_ != generation || !abort_reason_.empty(); });
  if (generation_ != generation) return;
  if (!released && abort_reason_.empty()) {
    const double seconds = std::chrono::duration<double>(timeout_).count();
    abort_reason_ = StrCat("threads: replica ", rank, " of ", size_, " waited ", seconds, " s in ",
                           operation, " for the other replicas (--comm_timeout)");
    all_arrived_.notify_all();
  }
  throw CommError(abort_reason_);
}

ThreadCommunicator::ThreadCommunicator(std::shared_ptr<ThreadGroup> group, int rank)
    : group_(std::move(group)), rank_(rank) {
  CHECK(group_);
  CHECK(rank >= 0 && rank < group_->size());
}

void ThreadCommunicator::Exchange(void* data, size_t length, const char* operation) {
  group_->buffers_[rank_] = data;
  group_->lengths_[rank_] = length;
  group_->Arrive(rank_, operation);
  for (int m = 0; m < size(); ++m) {
    if (group_->lengths_[m] != length) {
      // Every member sees the mismatch; a collective with mixed lengths is a bug.
      LOG(FATAL) << operation << ": replica " << m << " passed " << group_->lengths_[m]
                 << " elements but replica " << rank_ << " passed " << length;
    }
  }
}

void ThreadCommunicator::AllReduceSum(float* data, size_t count) {
  const int members = size();
  if (members == 1) return;
  Exchange(data, count, "all-reduce");
  const size_t chunk = (count + members - 1) / members;
  const size_t begin = std::min(count, chunk * rank_);
  const size_t end = std::min(count, begin + chunk);
  std::vector<float*> buffers(members);
  for (int m = 0; m < members; ++m) buffers[m] = static_cast<float*>(group_->buffers_[m]);
  for (size_t i = begin; i < end; ++i) {
    float sum = buffers[0][i];
    for (int m = 1; m < members; ++m) sum += buffers[m][i];
    for (int m = 0; m < members; ++m) buffers[m][i] = sum;
  }
  // Nobody returns (and reuses its buffer) before every chunk is written.
  group_->Arrive(rank_, "all-reduce");
}

void ThreadCommunicator::Broadcast(void* data, size_t bytes, int root) {
  CHECK(root >= 0 && root < size());
  if (size() == 1) return;
  Exchange(data, bytes, "broadcast");
  if (rank_ != root && bytes > 0) std::memcpy(data, group_->buffers_[root], bytes);
  group_->Arrive(rank_, "broadcast");
}

void ThreadCommunicator::Barrier() {
  if (size() > 1) group_->Arrive(rank_, "barrier");
}

}  // namespace demi
