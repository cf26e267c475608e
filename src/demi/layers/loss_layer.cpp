#include "demi/layers/loss_layer.hpp"

#include <algorithm>

namespace demi {

float LossLayer::Normalizer(LossParameter::NormalizationMode mode, int64_t outer, int64_t inner,
                            int64_t valid) {
  int64_t normalizer = 1;
  switch (mode) {
    case LossParameter::FULL:
      normalizer = outer * inner;
      break;
    case LossParameter::VALID:
      normalizer = valid;
      break;
    case LossParameter::BATCH_SIZE:
      normalizer = outer;
      break;
    case LossParameter::NONE:
      normalizer = 1;
      break;
  }
  return static_cast<float>(std::max<int64_t>(normalizer, 1));
}

}  // namespace demi
