#include "demi/util/host_retain.hpp"

#include <mutex>
#include <unordered_map>

#include "demi/memory/arena.hpp"
#include "demi/syncedmem.hpp"
#include "demi/util/device.hpp"

namespace demi {

namespace {

struct Retained {
  int retainers = 0;
  bool released = false;  ///< its owner let go: the last retainer frees it
};

std::mutex& RetainMutex() {
  static std::mutex mutex;
  return mutex;
}

std::unordered_map<const void*, Retained>& RetainTable() {
  static auto* table = new std::unordered_map<const void*, Retained>();  // outlives statics
  return *table;
}

void LetGo(const void* block) {
  bool free_it = false;
  {
    std::lock_guard<std::mutex> lock(RetainMutex());
    auto it = RetainTable().find(block);
    if (--it->second.retainers == 0) {
      free_it = it->second.released;
      RetainTable().erase(it);
    }
  }
  if (free_it) HostFree(const_cast<void*>(block));
}

}  // namespace

void ReleaseHostBlock(void* block) {
  if (block == nullptr) return;
  {
    std::lock_guard<std::mutex> lock(RetainMutex());
    auto it = RetainTable().find(block);
    if (it != RetainTable().end()) {
      it->second.released = true;
      return;
    }
  }
  HostFree(block);
}

std::shared_ptr<const void> RetainHostBlock(SyncedMemory& memory) {
  // The block's start: a view's arena base, else the memory's own bytes.
  const void* block = memory.is_view() ? const_cast<Arena*>(memory.arena())->host_base()
                                       : memory.mutable_cpu_data();
  if (block == nullptr) return nullptr;
  {
    std::lock_guard<std::mutex> lock(RetainMutex());
    ++RetainTable()[block].retainers;
  }
  return std::shared_ptr<const void>(block, LetGo);
}

}  // namespace demi
