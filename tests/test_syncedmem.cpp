#include <gtest/gtest.h>

#include <cstring>

#include "demi/common.hpp"
#include "demi/memory/arena.hpp"
#include "demi/syncedmem.hpp"
#include "demi/util/device.hpp"

namespace demi {
namespace {

TEST(SyncedMemoryTest, StartsUninitializedAndZeroes) {
  SyncedMemory mem(16);
  EXPECT_EQ(mem.head(), SyncedMemory::UNINITIALIZED);
  const auto* bytes = static_cast<const unsigned char*>(mem.cpu_data());
  for (int i = 0; i < 16; ++i) EXPECT_EQ(bytes[i], 0);
  EXPECT_EQ(mem.head(), SyncedMemory::AT_CPU);
}

// For a caller that writes every byte: the host bytes, marked written there,
// as mutable_cpu_data() gives them but without the zeroing (or, on a GPU,
// the fetch) before.
TEST(SyncedMemoryTest, OverwriteGivesTheHostBytesMarkedWritten) {
  SyncedMemory mem(16);
  auto* bytes = static_cast<unsigned char*>(mem.overwrite_cpu_data());
  EXPECT_EQ(mem.head(), SyncedMemory::AT_CPU);
  std::memset(bytes, 9, 16);
  EXPECT_EQ(mem.cpu_data(), bytes);
  EXPECT_EQ(static_cast<const unsigned char*>(mem.cpu_data())[15], 9);
}

TEST(SyncedMemoryTest, ResizeGrowsOnlyBeyondCapacity) {
  SyncedMemory mem(100);
  void* ptr = mem.mutable_cpu_data();
  std::memset(ptr, 7, 100);
  mem.Resize(40);
  EXPECT_EQ(mem.size(), 40u);
  EXPECT_EQ(mem.capacity(), 100u);
  EXPECT_EQ(mem.mutable_cpu_data(), ptr);
  EXPECT_EQ(static_cast<unsigned char*>(ptr)[39], 7);  // contents kept
  mem.Resize(100);
  EXPECT_EQ(mem.mutable_cpu_data(), ptr);
  mem.Resize(101);
  EXPECT_EQ(mem.capacity(), 101u);
  EXPECT_EQ(mem.head(), SyncedMemory::UNINITIALIZED);
}

TEST(SyncedMemoryTest, ViewsOfAnArenaSeeTheirOwnRange) {
  Arena arena;
  arena.Reserve(256);
  SyncedMemory a, b;
  a.BindToArena(&arena, 0, 64);
  b.BindToArena(&arena, 128, 64);
  EXPECT_TRUE(a.is_view());
  EXPECT_EQ(static_cast<uint8_t*>(a.mutable_cpu_data()), arena.host_base());
  EXPECT_EQ(static_cast<uint8_t*>(b.mutable_cpu_data()), arena.host_base() + 128);
  EXPECT_EQ(a.owned_host_bytes(), 0u);
  a.Resize(32);  // shrinking a view is free
  EXPECT_EQ(a.size(), 32u);
  a.Unbind();
  EXPECT_FALSE(a.is_view());
}

TEST(ArenaTest, ReserveNeverShrinksOrReallocatesDownward) {
  Arena arena;
  arena.Reserve(1000);
  uint8_t* base = arena.host_base();
  EXPECT_EQ(arena.host_allocations(), 1);
  arena.Reserve(10);
  EXPECT_EQ(arena.capacity(), 1000u);
  EXPECT_EQ(arena.host_base(), base);
  EXPECT_EQ(arena.host_allocations(), 1);
  arena.Reserve(2000);
  arena.host_base();
  EXPECT_EQ(arena.host_allocations(), 2);
}

TEST(SyncedMemoryTest, GpuAccessWithoutADeviceIsAClearError) {
  if (DeviceCount() > 0) GTEST_SKIP() << "a CUDA device is present: covered by the GPU tests";
  SyncedMemory mem(8);
  EXPECT_THROW(mem.gpu_data(), Error);
}

}  // namespace
}  // namespace demi
