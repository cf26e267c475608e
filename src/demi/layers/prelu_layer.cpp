#include "demi/layers/prelu_layer.hpp"

#include "demi/filler.hpp"
#include "demi/layer_registry.hpp"
#include "demi/util/math.hpp"

namespace demi {

void PReLULayer::LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const PReLUParameter& param = layer_param_.prelu_param();
  DEMI_CHECK(bottom[0]->num_axes() >= 2, "PReLU layer '", layer_param_.name(),
             "' needs a bottom of at least 2 axes (N x C x ...), got ", bottom[0]->shape_string());
  channel_shared_ = param.channel_shared();
  const std::vector<int64_t> slope_shape =
      channel_shared_ ? std::vector<int64_t>{} : std::vector<int64_t>{bottom[0]->shape(1)};
  if (blobs_.empty()) {
    blobs_.push_back(std::make_shared<Blob>(slope_shape));
    FillerParameter filler = param.filler();
    if (!param.has_filler()) filler.set_value(0.25f);  // a constant filler by default
    GetFiller(filler)->Fill(blobs_[0].get(), rng());
  }
  DEMI_CHECK(blobs_[0]->count() == (channel_shared_ ? 1 : bottom[0]->shape(1)), "PReLU layer '",
             layer_param_.name(), "' has slopes of shape ", blobs_[0]->shape_string(),
             ", but bottom ", bottom[0]->shape_string(), " needs ", ShapeString(slope_shape));
  param_propagate_down_.assign(blobs_.size(), true);
  InputSavingNeuronLayer::LayerSetUp(bottom, top);
}

void PReLULayer::ApplySlopes(const Blob& bottom, const float* x, const float* in,
                             float* out) const {
  const int64_t num = bottom.shape(0);
  const int64_t channels = bottom.shape(1);
  const int64_t dim = bottom.count(2);
  const float* slope = blobs_[0]->cpu_data();
  for (int64_t n = 0; n < num; ++n) {
    for (int64_t c = 0; c < channels; ++c) {
      const float a = slope[channel_shared_ ? 0 : c];
      const int64_t offset = (n * channels + c) * dim;
      for (int64_t j = offset; j < offset + dim; ++j) out[j] = x[j] > 0 ? in[j] : a * in[j];
    }
  }
}

void PReLULayer::Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const float* x = bottom[0]->cpu_data();
  SaveInput(*bottom[0]);
  ApplySlopes(*bottom[0], x, x, top[0]->mutable_cpu_data());
}

void PReLULayer::Backward_cpu(const std::vector<Blob*>& top,
                              const std::vector<bool>& propagate_down,
                              const std::vector<Blob*>& bottom) {
  const int64_t num = bottom[0]->shape(0);
  const int64_t channels = bottom[0]->shape(1);
  const int64_t dim = bottom[0]->count(2);
  const float* x = Input(*bottom[0]).cpu_data();
  const float* dy = top[0]->cpu_diff();
  // The slope gradient first: in place, dx overwrites dy.
  if (param_propagate_down(0)) {
    float* da = blobs_[0]->mutable_cpu_diff();
    for (int64_t n = 0; n < num; ++n) {
      for (int64_t c = 0; c < channels; ++c) {
        const int64_t offset = (n * channels + c) * dim;
        double sum = 0;
        for (int64_t j = offset; j < offset + dim; ++j) {
          if (x[j] <= 0) sum += double(dy[j]) * x[j];
        }
        da[channel_shared_ ? 0 : c] += static_cast<float>(sum);
      }
    }
  }
  if (propagate_down[0]) ApplySlopes(*bottom[0], x, dy, bottom[0]->mutable_cpu_diff());
}

DEMI_REGISTER_LAYER(PReLU);

}  // namespace demi
