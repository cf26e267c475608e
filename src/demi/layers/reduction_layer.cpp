#include "demi/layers/reduction_layer.hpp"

#include "demi/layer_registry.hpp"
#include "demi/layers/layer_checks.hpp"
#include "demi/util/math.hpp"

namespace demi {

bool ReductionLayer::BackwardReadsBottomData(int) const {
  const ReductionParameter::ReductionOp op = layer_param_.reduction_param().operation();
  return op == ReductionParameter::ASUM || op == ReductionParameter::SUMSQ;
}

void ReductionLayer::Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const Blob& x = *bottom[0];
  const int axis =
      CanonicalAxis(*this, x, layer_param_.reduction_param().axis(), "reduction_param.axis");
  num_ = x.count(0, axis);
  dim_ = x.count(axis);
  top[0]->Reshape(std::vector<int64_t>(x.shape().begin(), x.shape().begin() + axis));
}

void ReductionLayer::Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const ReductionParameter& param = layer_param_.reduction_param();
  const float* x = bottom[0]->cpu_data();
  float* y = top[0]->mutable_cpu_data();
  for (int64_t i = 0; i < num_; ++i) {
    const float* row = x + i * dim_;
    double value = 0;
    switch (param.operation()) {
      case ReductionParameter::SUM:
      case ReductionParameter::MEAN:
        for (int64_t j = 0; j < dim_; ++j) value += row[j];
        if (param.operation() == ReductionParameter::MEAN) value /= static_cast<double>(dim_);
        break;
      case ReductionParameter::ASUM:
        value = Asum(dim_, row);
        break;
      case ReductionParameter::SUMSQ:
        value = Sumsq(dim_, row);
        break;
    }
    y[i] = static_cast<float>(param.coeff() * value);
  }
}

void ReductionLayer::Backward_cpu(const std::vector<Blob*>& top,
                                  const std::vector<bool>& propagate_down,
                                  const std::vector<Blob*>& bottom) {
  if (!propagate_down[0]) return;
  const ReductionParameter& param = layer_param_.reduction_param();
  const float* dy = top[0]->cpu_diff();
  const float* x = BackwardReadsBottomData(0) ? bottom[0]->cpu_data() : nullptr;
  float* dx = bottom[0]->mutable_cpu_diff();
  for (int64_t i = 0; i < num_; ++i) {
    const float g = param.coeff() * dy[i];
    float* row_dx = dx + i * dim_;
    switch (param.operation()) {
      case ReductionParameter::SUM:
        Set(dim_, g, row_dx);
        break;
      case ReductionParameter::MEAN:
        Set(dim_, g / static_cast<float>(dim_), row_dx);
        break;
      case ReductionParameter::ASUM:
        for (int64_t j = 0; j < dim_; ++j) {
          const float v = x[i * dim_ + j];
          row_dx[j] = v > 0 ? g : (v < 0 ? -g : 0.0f);
        }
        break;
      case ReductionParameter::SUMSQ:
        for (int64_t j = 0; j < dim_; ++j) row_dx[j] = 2.0f * g * x[i * dim_ + j];
        break;
    }
  }
}

DEMI_REGISTER_LAYER(Reduction);

}  // namespace demi
