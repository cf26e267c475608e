// GpuAccessLog's bookkeeping and SyncedMemory's refusals while one records
// (a CUDA graph capture); the replays themselves are test_cuda_graph.cpp's.
#include <memory>

#include "demi/gpu_access_log.hpp"
#include "demi/syncedmem.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

TEST(CaptureLogTest, HostAccessWhileRecordingThrowsAndWorksAfter) {
  SyncedMemory memory(16);
  GpuAccessLog log;
  EXPECT_EQ(GpuAccessLog::Current(), nullptr);
  log.Start();
  EXPECT_EQ(GpuAccessLog::Current(), &log);
  ExpectErrorContaining([&] { memory.cpu_data(); }, {"host read", "inside a CUDA graph capture"});
  ExpectErrorContaining([&] { memory.mutable_cpu_data(); }, {"host write"});
  GpuAccessLog other;
  ExpectErrorContaining([&] { other.Start(); }, {"already recording"});
  log.Stop();
  EXPECT_EQ(GpuAccessLog::Current(), nullptr);
  static_cast<float*>(memory.mutable_cpu_data())[3] = 2.5f;
  EXPECT_EQ(static_cast<const float*>(memory.cpu_data())[3], 2.5f);
}

TEST(CaptureLogTest, KeepsEachMemoryOnce) {
  SyncedMemory a(4), b(4);
  GpuAccessLog log;
  log.Start();
  log.Note(&a, nullptr, false);
  log.Note(&b, nullptr, true);
  log.Note(&a, nullptr, true);
  log.Stop();
  EXPECT_EQ(log.size(), 2u);
  // Neither has device bytes, as when noted: the addresses hold.
  EXPECT_TRUE(log.AddressesHold());
  log.Clear();
  EXPECT_EQ(log.size(), 0u);
}

// A memory the log noted is destroyed between replays (as when a pycaffe
// user remakes a blob at the same shape): the log no longer holds and reads
// nothing of it (ASan reports a read of the freed memory otherwise).
TEST(CaptureLogTest, AMemoryDestroyedSinceNotedIsNoLongerHeld) {
  auto kept = std::make_unique<SyncedMemory>(4);
  auto dropped = std::make_unique<SyncedMemory>(4);
  GpuAccessLog log;
  log.Start();
  log.Note(kept.get(), nullptr, true);
  log.Note(dropped.get(), nullptr, false);
  log.Stop();
  EXPECT_TRUE(log.AddressesHold());
  dropped.reset();
  EXPECT_FALSE(log.AddressesHold());
  // A new memory at the freed one's address is not the one noted either.
  dropped = std::make_unique<SyncedMemory>(4);
  EXPECT_FALSE(log.AddressesHold());
}

// A log destroyed while recording stops it: the thread records nothing after.
TEST(CaptureLogTest, ADestroyedLogStopsRecording) {
  {
    GpuAccessLog log;
    log.Start();
  }
  EXPECT_EQ(GpuAccessLog::Current(), nullptr);
  SyncedMemory memory(4);
  EXPECT_NE(memory.cpu_data(), nullptr);
}

}  // namespace
}  // namespace demi
