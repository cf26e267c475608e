#ifndef DEMI_UTIL_BATCH_SIZE_HPP_
#define DEMI_UTIL_BATCH_SIZE_HPP_

#include <cstdint>

#include "demi/proto/demi.pb.h"

namespace demi {

/// Sets the batch (first) dimension of every input-producing layer of the
/// net: Input and DummyData shapes, Data and ImageData batch_size. Returns
/// how many layers changed.
int SetBatchSize(NetParameter* param, int64_t batch);

}  // namespace demi

#endif  // DEMI_UTIL_BATCH_SIZE_HPP_
