// A retained host block outlives the SyncedMemory or Arena that replaced or
// dropped it, and is freed when its last retainer lets go (under ASan a use
// after free here fails the test).
#include <gtest/gtest.h>

#include <cstring>
#include <memory>

#include "demi/memory/arena.hpp"
#include "demi/syncedmem.hpp"
#include "demi/util/host_retain.hpp"

namespace demi {
namespace {

TEST(HostRetainTest, AnOwnedBlockOutlivesAGrowingResize) {
  SyncedMemory memory(16);
  auto* old_bytes = static_cast<float*>(memory.mutable_cpu_data());
  old_bytes[3] = 2.5f;
  std::shared_ptr<const void> retained = RetainHostBlock(memory);
  EXPECT_EQ(retained.get(), old_bytes);
  memory.Resize(1 << 20);  // a new allocation; the old one stays for the retainer
  auto* new_bytes = static_cast<float*>(memory.mutable_cpu_data());
  EXPECT_NE(new_bytes, old_bytes);
  EXPECT_EQ(old_bytes[3], 2.5f);
  old_bytes[0] = 1.0f;  // writes go to the old block, not the memory
  EXPECT_EQ(new_bytes[0], 0.0f);
  retained.reset();  // frees it now
}

TEST(HostRetainTest, AnArenaBlockOutlivesGrowthAndTheArena) {
  std::shared_ptr<const void> retained;
  float* old_bytes = nullptr;
  {
    Arena arena;
    arena.Reserve(64);
    SyncedMemory view;
    view.BindToArena(&arena, 16, 32);
    old_bytes = static_cast<float*>(view.mutable_cpu_data());
    old_bytes[1] = 4.0f;
    retained = RetainHostBlock(view);
    EXPECT_EQ(retained.get(), arena.host_base());
    arena.Reserve(1 << 20);
    arena.host_base();  // reallocates: the old block is only released
    EXPECT_EQ(arena.host_allocations(), 2);
  }  // the arena is gone too
  EXPECT_EQ(old_bytes[1], 4.0f);
  old_bytes[1] = 5.0f;
  EXPECT_EQ(old_bytes[1], 5.0f);
}

TEST(HostRetainTest, ABlockRetainedTwiceLivesUntilBoth) {
  auto memory = std::make_unique<SyncedMemory>(8);
  auto* bytes = static_cast<char*>(memory->mutable_cpu_data());
  std::shared_ptr<const void> first = RetainHostBlock(*memory);
  std::shared_ptr<const void> second = RetainHostBlock(*memory);
  memory.reset();
  first.reset();
  std::memset(bytes, 7, 8);  // still alive for `second`
  EXPECT_EQ(bytes[7], 7);
}

}  // namespace
}  // namespace demi
