#include "demi/syncedmem.hpp"

#include <cstring>

#include "demi/common.hpp"
#include "demi/gpu_access_log.hpp"
#include "demi/memory/arena.hpp"
#include "demi/util/device.hpp"
#include "demi/util/host_retain.hpp"

namespace demi {

SyncedMemory::~SyncedMemory() { ReleaseOwned(); }

void SyncedMemory::ReleaseOwned() {
  // The device's first: refused (inside a CUDA graph capture, it throws),
  // it leaves this memory as it was, the host block still owned.
  if (owns_device_) DeviceFree(gpu_ptr_);
  if (owns_host_) ReleaseHostBlock(cpu_ptr_);  // a numpy view may still hold it
  cpu_ptr_ = gpu_ptr_ = nullptr;
  owns_host_ = owns_device_ = false;
}

void SyncedMemory::Resize(size_t size) {
  if (size <= capacity_) {
    size_ = size;
    return;
  }
  // A view that must grow leaves the arena and owns its bytes until the net
  // re-plans (Net::Reshape) and binds it again.
  if (is_view()) Unbind();
  ReleaseOwned();
  size_ = capacity_ = size;
  head_ = UNINITIALIZED;
}

void SyncedMemory::BindToArena(Arena* arena, size_t offset, size_t size) {
  CHECK(arena != nullptr);
  CHECK_LE(offset + size, arena->capacity()) << "view past the arena's end";
  ReleaseOwned();
  arena_ = arena;
  offset_ = offset;
  size_ = capacity_ = size;
  head_ = UNINITIALIZED;
}

void SyncedMemory::Unbind() {
  if (!is_view()) return;
  arena_ = nullptr;
  offset_ = 0;
  head_ = UNINITIALIZED;
}

uint8_t* SyncedMemory::HostPointer() {
  if (is_view()) return arena_->host_base() + offset_;
  if (cpu_ptr_ == nullptr && capacity_ > 0) {
    cpu_ptr_ = static_cast<uint8_t*>(HostMalloc(capacity_));
    owns_host_ = true;
  }
  return cpu_ptr_;
}

uint8_t* SyncedMemory::DevicePointer() {
  if (is_view()) return arena_->device_base() + offset_;
  if (gpu_ptr_ == nullptr && capacity_ > 0) {
    gpu_ptr_ = static_cast<uint8_t*>(DeviceMalloc(capacity_));
    owns_device_ = true;
  }
  return gpu_ptr_;
}

std::weak_ptr<const void> SyncedMemory::lifetime_token() {
  if (!lifetime_) lifetime_ = std::make_shared<const char>('\0');
  return lifetime_;
}

const void* SyncedMemory::gpu_address() const {
  if (is_view()) {
    const uint8_t* base = arena_->current_device_base();
    return base == nullptr ? nullptr : base + offset_;
  }
  return capacity_ > 0 ? gpu_ptr_ : nullptr;
}

namespace {

/// Inside a CUDA graph capture a move would be recorded once and then
/// repeated (or missed) by every replay, whatever the head says then; and
/// host code reading or writing the bytes runs at the capture only.
void RefuseInCapture(const char* what) {
  DEMI_CHECK(GpuAccessLog::Current() == nullptr, "a ", what,
             " of a blob's bytes inside a CUDA graph capture");
}

}  // namespace

void SyncedMemory::ToCpu() {
  switch (head_) {
    case UNINITIALIZED:
      if (size_ > 0) std::memset(HostPointer(), 0, size_);
      head_ = AT_CPU;
      break;
    case AT_GPU:
      if (size_ > 0) CopyDeviceToHost(HostPointer(), DevicePointer(), size_);
      head_ = SYNCED;
      break;
    case AT_CPU:
    case SYNCED:
      break;
  }
}

void SyncedMemory::ToGpu() {
  if (head_ == UNINITIALIZED || head_ == AT_CPU) RefuseInCapture("first fill or upload");
  switch (head_) {
    case UNINITIALIZED:
      if (size_ > 0) DeviceMemset(DevicePointer(), 0, size_);
      head_ = AT_GPU;
      break;
    case AT_CPU:
      if (size_ > 0) CopyHostToDevice(DevicePointer(), HostPointer(), size_);
      head_ = SYNCED;
      break;
    case AT_GPU:
    case SYNCED:
      break;
  }
}

const void* SyncedMemory::cpu_data() {
  RefuseInCapture("host read");
  ToCpu();
  return HostPointer();
}

void* SyncedMemory::mutable_cpu_data() {
  RefuseInCapture("host write");
  ToCpu();
  head_ = AT_CPU;
  return HostPointer();
}

// Host bytes are pageable (HostMalloc): an upload from them has copied them
// to a staging buffer before cudaMemcpyAsync returned, so they may be
// overwritten at once. Pinned host memory would need an event here.
void* SyncedMemory::overwrite_cpu_data() {
  RefuseInCapture("host write");
  head_ = AT_CPU;
  return HostPointer();
}

const void* SyncedMemory::gpu_data() {
  ToGpu();
  void* pointer = DevicePointer();
  if (GpuAccessLog* log = GpuAccessLog::Current()) log->Note(this, pointer, false);
  return pointer;
}

void* SyncedMemory::mutable_gpu_data() {
  ToGpu();
  head_ = AT_GPU;
  void* pointer = DevicePointer();
  if (GpuAccessLog* log = GpuAccessLog::Current()) log->Note(this, pointer, true);
  return pointer;
}

}  // namespace demi
