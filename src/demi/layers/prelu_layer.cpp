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

ChannelBlocks PReLULayer::Channels(const Blob& bottom) const {
  if (channel_shared_) return {bottom.shape(0), 1, bottom.count(1), 1};
  return {bottom.shape(0), bottom.shape(1), bottom.count(2), 1};
}

void PReLULayer::Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  SaveInput(*bottom[0]);
  VisitStorageType(top[0]->storage_type(),
                   [&](auto tag) { ForwardStored<decltype(tag)>(*bottom[0], top[0]); });
}

template <typename T>
void PReLULayer::ForwardStored(const Blob& bottom, Blob* top) {
  const T* x = bottom.cpu_data_as<T>();
  const float* slope = blobs_[0]->cpu_data();
  // In place, each y[k] overwrites the x[k] it was computed from.
  StoreChannelElements(Channels(bottom), top->mutable_cpu_data_as<T>(), [=](int64_t k, int64_t c) {
    const float v = static_cast<float>(x[k]);
    return v > 0 ? v : slope[c] * v;
  });
}

void PReLULayer::Backward_cpu(const std::vector<Blob*>& top,
                              const std::vector<bool>& propagate_down,
                              const std::vector<Blob*>& bottom) {
  VisitStorageType(bottom[0]->storage_type(), [&](auto tag) {
    BackwardStored<decltype(tag)>(*top[0], propagate_down[0], bottom[0]);
  });
}

template <typename T>
void PReLULayer::BackwardStored(const Blob& top, bool propagate_down, Blob* bottom) {
  const T* x = Input(*bottom).cpu_data_as<T>();
  const T* dy = top.cpu_diff_as<T>();
  const ChannelBlocks t = Channels(*bottom);
  // The slope gradient first: in place, dx overwrites dy.
  if (param_propagate_down(0)) {
    sums_.assign(t.channels, 0.0);
    SumChannels<T>(t, sums_.data(), [=](int64_t k, int64_t) {
      const float v = static_cast<float>(x[k]);
      return v <= 0 ? static_cast<float>(dy[k]) * v : 0.0f;
    });
    float* da = blobs_[0]->mutable_cpu_diff();
    for (int64_t c = 0; c < t.channels; ++c) da[c] += static_cast<float>(sums_[c]);
  }
  if (!propagate_down) return;
  const float* slope = blobs_[0]->cpu_data();
  StoreChannelElements(t, bottom->mutable_cpu_diff_as<T>(), [=](int64_t k, int64_t c) {
    const float g = static_cast<float>(dy[k]);
    return static_cast<float>(x[k]) > 0 ? g : slope[c] * g;
  });
}

DEMI_REGISTER_LAYER(PReLU);

}  // namespace demi
