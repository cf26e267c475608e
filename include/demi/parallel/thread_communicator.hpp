#ifndef DEMI_PARALLEL_THREAD_COMMUNICATOR_HPP_
#define DEMI_PARALLEL_THREAD_COMMUNICATOR_HPP_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "demi/parallel/communicator.hpp"

namespace demi {

/// @brief The shared state of `size` threads of one process that
/// communicate (CPU replicas): a reusable barrier with a timeout, the
/// members' buffers of the collective in progress, and an abort switch.
class ThreadGroup {
 public:
  ThreadGroup(int size, std::chrono::milliseconds timeout);
  ThreadGroup(const ThreadGroup&) = delete;
  ThreadGroup& operator=(const ThreadGroup&) = delete;

  int size() const { return size_; }
  /// Makes every member waiting in a collective, and every later
  /// collective, throw CommError(reason). The first reason sticks.
  void Abort(const std::string& reason);

 private:
  friend class ThreadCommunicator;
  /// Blocks until all members arrived (or throws on abort or timeout).
  void Arrive(int rank, const char* operation);

  const int size_;
  const std::chrono::milliseconds timeout_;
  std::mutex mutex_;
  std::condition_variable all_arrived_;
  int arrived_ = 0;
  uint64_t generation_ = 0;
  std::string abort_reason_;
  /// Per member: the buffer and its length in the collective in progress.
  std::vector<void*> buffers_;
  std::vector<size_t> lengths_;
};

/// @brief Communicator among the threads of a ThreadGroup.
///
/// AllReduceSum splits the buffer into one chunk per member; member m sums
/// chunk m over the members in rank order and writes the sum into every
/// member's buffer. So each element is always summed in the same order
/// (deterministic), and the work is spread over the threads.
class ThreadCommunicator : public Communicator {
 public:
  ThreadCommunicator(std::shared_ptr<ThreadGroup> group, int rank);

  int rank() const override { return rank_; }
  int size() const override { return group_->size(); }
  const char* backend() const override { return "threads"; }
  void AllReduceSum(float* data, size_t count) override;
  void Broadcast(void* data, size_t bytes, int root) override;
  void Barrier() override;

 private:
  /// Publishes this member's buffer and waits for the others'; checks that
  /// every member passed the same length.
  void Exchange(void* data, size_t length, const char* operation);

  std::shared_ptr<ThreadGroup> group_;
  const int rank_;
};

}  // namespace demi

#endif  // DEMI_PARALLEL_THREAD_COMMUNICATOR_HPP_
