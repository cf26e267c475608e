// The in-process communicator: sums in a fixed order (bit-equal on every
// member), broadcasts, and never blocks forever (timeout, abort).
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

#include "demi/parallel/hierarchical_communicator.hpp"
#include "demi/parallel/thread_communicator.hpp"

namespace demi {
namespace {

using std::chrono::milliseconds;

/// Runs fn(rank) on `size` threads sharing one group; rethrows nothing.
void RunMembers(const std::shared_ptr<ThreadGroup>& group,
                const std::function<void(ThreadCommunicator&)>& fn) {
  std::vector<std::thread> threads;
  for (int rank = 0; rank < group->size(); ++rank) {
    threads.emplace_back([&, rank] {
      ThreadCommunicator comm(group, rank);
      fn(comm);
    });
  }
  for (auto& thread : threads) thread.join();
}

TEST(ThreadCommunicatorTest, AllReduceSumsInRankOrderOnEveryMember) {
  for (size_t count : {size_t{0}, size_t{1}, size_t{7}, size_t{1001}}) {
    const int members = 3;
    auto group = std::make_shared<ThreadGroup>(members, milliseconds(10000));
    std::vector<std::vector<float>> data(members, std::vector<float>(count));
    for (int m = 0; m < members; ++m) {
      for (size_t i = 0; i < count; ++i) data[m][i] = 0.1f * (m + 1) + 1e-3f * i + 1e4f * (m == 1);
    }
    std::vector<float> expected(count);
    for (size_t i = 0; i < count; ++i) expected[i] = (data[0][i] + data[1][i]) + data[2][i];
    RunMembers(group, [&](ThreadCommunicator& comm) {
      comm.AllReduceSum(data[comm.rank()].data(), count);
    });
    for (int m = 0; m < members; ++m) {
      // Bit-identical; memcmp must not see the null data() of empty vectors.
      ASSERT_TRUE(count == 0 ||
                  std::memcmp(expected.data(), data[m].data(), count * sizeof(float)) == 0)
          << "member " << m << ", count " << count;
    }
  }
}

TEST(ThreadCommunicatorTest, BroadcastCopiesTheRootsBytes) {
  auto group = std::make_shared<ThreadGroup>(4, milliseconds(10000));
  std::vector<std::vector<char>> data(4, std::vector<char>(5));
  for (int m = 0; m < 4; ++m) std::memset(data[m].data(), 'a' + m, 5);
  RunMembers(group, [&](ThreadCommunicator& comm) {
    comm.Broadcast(data[comm.rank()].data(), 5, 2);
    comm.Barrier();
  });
  for (int m = 0; m < 4; ++m) EXPECT_EQ(std::string(data[m].begin(), data[m].end()), "ccccc");
}

TEST(ThreadCommunicatorTest, AMemberThatNeverComesTimesOut) {
  auto group = std::make_shared<ThreadGroup>(2, milliseconds(200));
  ThreadCommunicator comm(group, 0);
  const auto start = std::chrono::steady_clock::now();
  try {
    comm.Barrier();
    FAIL() << "Barrier returned without the other member";
  } catch (const CommError& error) {
    EXPECT_NE(std::string(error.what()).find("replica 0 of 2 waited 0.2 s in barrier"),
              std::string::npos)
        << error.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  // The group stays broken: the late member fails at once instead of waiting.
  ThreadCommunicator late(group, 1);
  EXPECT_THROW(late.Barrier(), CommError);
}

TEST(ThreadCommunicatorTest, AbortWakesAWaitingMember) {
  auto group = std::make_shared<ThreadGroup>(2, milliseconds(60000));
  std::string message;
  std::thread waiter([&] {
    ThreadCommunicator comm(group, 0);
    float value = 1;
    try {
      comm.AllReduceSum(&value, 1);
    } catch (const CommError& error) {
      message = error.what();
    }
  });
  std::this_thread::sleep_for(milliseconds(50));
  group->Abort("replica 1 failed: loss is NaN");
  waiter.join();
  EXPECT_EQ(message, "replica 1 failed: loss is NaN");
}

/// Stands in for a communicator across processes: the leaders of two
/// "processes" (thread groups) meet in their own thread group.
TEST(HierarchicalCommunicatorTest, NumbersReplicasProcessByProcessAndSumsAll) {
  const int processes = 2, local = 3;
  auto leaders = std::make_shared<ThreadGroup>(processes, milliseconds(10000));
  std::vector<std::shared_ptr<ThreadGroup>> groups;
  for (int p = 0; p < processes; ++p) {
    groups.push_back(std::make_shared<ThreadGroup>(local, milliseconds(10000)));
  }
  std::vector<std::vector<float>> values(processes * local);
  std::vector<std::vector<int>> bytes(processes * local, std::vector<int>(2, -1));
  std::vector<std::thread> threads;
  for (int p = 0; p < processes; ++p) {
    auto global = std::make_shared<ThreadCommunicator>(leaders, p);
    for (int i = 0; i < local; ++i) {
      threads.emplace_back([&, p, i, global] {
        HierarchicalCommunicator comm(std::make_unique<ThreadCommunicator>(groups[p], i),
                                      global.get());
        ASSERT_EQ(comm.size(), 6);
        ASSERT_EQ(comm.rank(), p * local + i);
        std::vector<float>& mine = values[comm.rank()];
        mine = {static_cast<float>(comm.rank()), 1.0f};
        comm.AllReduceSum(mine.data(), 2);
        std::vector<int>& b = bytes[comm.rank()];
        if (comm.rank() == 4) b = {40, 41};
        comm.Broadcast(b.data(), 2 * sizeof(int), 4);
        comm.Barrier();
      });
    }
  }
  for (auto& thread : threads) thread.join();
  for (int r = 0; r < processes * local; ++r) {
    EXPECT_EQ(values[r], (std::vector<float>{15.0f, 6.0f})) << "replica " << r;
    EXPECT_EQ(bytes[r], (std::vector<int>{40, 41})) << "replica " << r;
  }
}

}  // namespace
}  // namespace demi
