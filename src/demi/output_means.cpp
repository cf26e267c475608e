#include "demi/output_means.hpp"

namespace demi {

void OutputMeans::Add(const Net& net) {
  const auto& outputs = net.output_blobs();
  size_t index = 0;
  for (size_t j = 0; j < outputs.size(); ++j) {
    const float* values = outputs[j]->cpu_data();
    for (int64_t k = 0; k < outputs[j]->count(); ++k, ++index) {
      if (batches_ == 0) {
        sums_.push_back(values[k]);
        blob_ids_.push_back(net.output_blob_indices()[j]);
      } else {
        sums_[index] += values[k];
      }
    }
  }
  ++batches_;
}

}  // namespace demi
