#ifndef DEMI_LAYERS_CLASS_LABEL_HPP_
#define DEMI_LAYERS_CLASS_LABEL_HPP_

#include <cstdint>

#include "demi/util/host_device.hpp"

namespace demi {

/// A class label stored in a float, as an integer: truncated toward zero, as
/// Caffe reads it. NaN, the infinities and values past int64's range give
/// INT64_MIN, never a class: converting them is undefined on the host and
/// gives 0 or a clamp on the device. The same on both devices.
DEMI_HOST_DEVICE inline int64_t ClassLabel(float label) {
  return label > -9.2e18f && label < 9.2e18f ? static_cast<int64_t>(label) : INT64_MIN;
}

}  // namespace demi

#endif  // DEMI_LAYERS_CLASS_LABEL_HPP_
