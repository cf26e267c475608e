#include "demi/gpu_access_log.hpp"

#include <algorithm>

#include "demi/common.hpp"
#include "demi/syncedmem.hpp"

namespace demi {

namespace {
thread_local GpuAccessLog* thread_log = nullptr;
}  // namespace

GpuAccessLog::~GpuAccessLog() {
  if (thread_log == this) thread_log = nullptr;
}

GpuAccessLog* GpuAccessLog::Current() { return thread_log; }

void GpuAccessLog::Start() {
  DEMI_CHECK(thread_log == nullptr, "a GPU access log is already recording on this thread");
  thread_log = this;
}

void GpuAccessLog::Stop() {
  if (thread_log == this) thread_log = nullptr;
  // One entry per memory, written if any access wrote it.
  std::stable_sort(accesses_.begin(), accesses_.end(),
                   [](const Access& a, const Access& b) { return a.memory < b.memory; });
  std::vector<Access> merged;
  for (const Access& access : accesses_) {
    if (!merged.empty() && merged.back().memory == access.memory) {
      merged.back().written = merged.back().written || access.written;
      // The last address noted is the one the graph holds.
      merged.back().address = access.address;
      merged.back().alive = access.alive;
    } else {
      merged.push_back(access);
    }
  }
  accesses_ = std::move(merged);
}

void GpuAccessLog::Note(SyncedMemory* memory, const void* address, bool written) {
  accesses_.push_back(Access{memory, memory->lifetime_token(), address, written});
}

bool GpuAccessLog::AddressesHold() const {
  for (const Access& access : accesses_) {
    if (access.alive.expired() || access.memory->gpu_address() != access.address) return false;
  }
  return true;
}

void GpuAccessLog::PrepareReplay() const {
  for (const Access& access : accesses_) {
    if (!access.alive.expired()) access.memory->gpu_data();
  }
}

void GpuAccessLog::FinishReplay() const {
  for (const Access& access : accesses_) {
    if (access.written && !access.alive.expired()) access.memory->mutable_gpu_data();
  }
}

}  // namespace demi
