#include "demi/memory/arena.hpp"

#include <cstring>

#include "demi/util/device.hpp"
#include "demi/util/host_retain.hpp"

namespace demi {

Arena::~Arena() {
  ReleaseHostBlock(host_);
  DeviceFree(device_);
}

void Arena::Reserve(size_t bytes) {
  if (bytes > capacity_) capacity_ = bytes;
}

uint8_t* Arena::host_base() {
  if (host_bytes_ < capacity_) {
    ReleaseHostBlock(host_);  // a numpy view may still hold it
    host_ = static_cast<uint8_t*>(HostMalloc(capacity_));
    host_bytes_ = capacity_;
    ++host_allocations_;
    if (zero_on_allocate_) std::memset(host_, 0, host_bytes_);
  }
  return host_;
}

uint8_t* Arena::device_base() {
  if (device_bytes_ < capacity_) {
    DeviceFree(device_);
    device_ = static_cast<uint8_t*>(DeviceMalloc(capacity_));
    device_bytes_ = capacity_;
    if (zero_on_allocate_) DeviceMemset(device_, 0, device_bytes_);
  }
  return device_;
}

}  // namespace demi
