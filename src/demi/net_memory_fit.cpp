// Whether a net's memory plan fits the machine, checked before the arena is
// allocated: a plan that cannot fit fails with its figures and a hint,
// instead of ending in std::bad_alloc or the kernel's OOM killer.
#include <algorithm>
#include <iomanip>
#include <sstream>

#include "demi/memory/liveness.hpp"
#include "demi/net.hpp"
#include "demi/util/checked_math.hpp"
#include "demi/util/device.hpp"
#include "demi/util/host_memory.hpp"

namespace demi {

namespace {

/// "1234.5 MiB": fixed, so that big figures read as figures.
std::string MiB(size_t bytes) {
  std::ostringstream text;
  text << std::fixed << std::setprecision(1) << static_cast<double>(bytes) / (1024.0 * 1024.0)
       << " MiB";
  return text.str();
}

/// Bytes of `memories` not allocated yet, on the host or on the device.
size_t UnallocatedBytes(const std::vector<SyncedMemory*>& memories, bool on_device) {
  size_t bytes = 0;
  for (const SyncedMemory* memory : memories) {
    if (memory->is_view()) continue;  // lives in an arena already counted
    // Device bytes exist once the head has been there; host bytes once owned.
    const bool held =
        on_device ? memory->head() == SyncedMemory::AT_GPU || memory->head() == SyncedMemory::SYNCED
                  : memory->owned_host_bytes() >= memory->size();
    if (held) continue;
    bytes = CheckedAdd(bytes, memory->size(), "the persistent bytes still to allocate");
  }
  return bytes;
}

/// What a host plan of `planned_bytes` leaves free for the libraries.
size_t HostLibraryReserve(size_t planned_bytes) {
  return std::max(size_t{64} << 20, planned_bytes / 16);
}

}  // namespace

void Net::CheckPlanFits(const NetLiveness& liveness) const {
  const bool on_device = context_.device == Device::kGPU;
  // A bigger arena is allocated anew at its full size; one big enough, or
  // reserved by a net that shares it and was checked already (a solver's
  // train net for its test nets), costs nothing more.
  const size_t arena_held = on_device ? arena_->device_bytes() : arena_->host_bytes();
  const size_t arena_counted = std::max(arena_held, arena_->capacity());
  const size_t arena_needed = plan_.arena_bytes > arena_counted ? plan_.arena_bytes : 0;
  const size_t persistent_needed = UnallocatedBytes(liveness.persistent_memories, on_device);
  const size_t needed =
      CheckedAdd(arena_needed, persistent_needed, "the bytes the memory plan allocates");
  size_t available = 0;
  std::string limit;
  if (kBuiltWithCuda && on_device) {
    available = GetDeviceInfo(context_.device_id).free_bytes;
    limit = StrCat("free memory of GPU ", context_.device_id);
  } else {
    const HostMemory host = AvailableHostMemory();
    available = host.bytes;
    limit = host.limit;
  }
  // On the host, oneDNN's and OpenBLAS's own buffers (a GEMM's packed
  // panels) come from outside the plan, and oneDNN does not survive an
  // allocation failing inside a primitive (a segfault under ulimit -v): a
  // plan leaves them room.
  const size_t reserve = needed == 0 || on_device ? 0 : HostLibraryReserve(needed);
  if (needed <= available && reserve <= available - needed) return;
  ThrowError(StrCat(
      "net '", name_, "' (", phase_ == TRAIN ? "TRAIN" : "TEST", ") does not fit ",
      on_device ? "the GPU" : "host memory", ": its plan needs ", MiB(needed), " more (arena ",
      MiB(arena_needed), ", persistent: params, inputs, outputs ", MiB(persistent_needed), ")",
      reserve ? StrCat(" and leaves ", MiB(reserve), " for the libraries' buffers") : std::string(),
      ", but ", MiB(available), " are available (", limit, "); try: build/tools/memory --model=",
      source_.empty() ? "net.prototxt" : source_, " (see --fit)"));
}

}  // namespace demi
