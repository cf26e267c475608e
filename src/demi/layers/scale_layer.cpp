#include "demi/layers/scale_layer.hpp"

#include <type_traits>

#include "demi/filler.hpp"
#include "demi/layer_registry.hpp"
#include "demi/layers/layer_checks.hpp"
#include "demi/util/channel_blocks.hpp"
#include "demi/util/math.hpp"
#include "demi/util/threads.hpp"

namespace demi {

void ScaleLayer::LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const ScaleParameter& param = layer_param_.scale_param();
  const std::string& name = layer_param_.name();
  const bool scale_is_param = bottom.size() == 1;
  scale_is_param_ = scale_is_param;
  const size_t expected = (scale_is_param ? 1 : 0) + (param.bias_term() ? 1 : 0);
  bias_index_ = param.bias_term() ? static_cast<int>(expected) - 1 : -1;
  in_place_ = top[0] == bottom[0];
  if (!blobs_.empty()) {
    DEMI_CHECK(blobs_.size() == expected, "Scale layer '", name, "' has ", expected,
               " param blobs (scale from ", scale_is_param ? "a param" : "bottom 1",
               param.bias_term() ? ", a bias" : ", no bias", "), but was given ", blobs_.size());
  } else {
    std::vector<int64_t> shape;
    if (scale_is_param) {
      shape = AxesShape(*this, *bottom[0], param.axis(), param.num_axes(), "scale_param");
      blobs_.push_back(std::make_shared<Blob>(shape));
      FillerParameter unit;
      unit.set_type("constant");
      unit.set_value(1.0f);
      GetFiller(param.has_filler() ? param.filler() : unit)->Fill(blobs_[0].get(), rng());
    } else {
      shape = bottom[1]->shape();
    }
    if (param.bias_term()) {
      blobs_.push_back(std::make_shared<Blob>(shape));
      GetFiller(param.bias_filler())->Fill(blobs_.back().get(), rng());
    }
  }
  param_propagate_down_.assign(blobs_.size(), true);
  if (in_place_) RegisterBuffer("input", &input_, BufferLifetime::kSavedForBackward);
}

void ScaleLayer::Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const std::string& name = layer_param_.name();
  const Blob& scale = bottom.size() == 2 ? *bottom[1] : *blobs_[0];
  const int axis = OperandAxis(*this, *bottom[0], scale, layer_param_.scale_param().axis(),
                               "scale_param", "scale", bottom.size() == 2);
  if (bias_index_ >= 0) {
    const Blob& bias = *blobs_[bias_index_];
    DEMI_CHECK(bias.shape() == scale.shape(), "Scale layer '", name, "': bias of shape ",
               bias.shape_string(), " differs from scale of shape ", scale.shape_string());
  }
  outer_ = bottom[0]->count(0, axis);
  scale_dim_ = scale.count();
  inner_ = bottom[0]->count(axis + scale.num_axes());
  top[0]->ReshapeLike(*bottom[0]);
  if (in_place_) {
    input_.set_storage_type(bottom[0]->storage_type());  // a copy of x
    input_.ReshapeLike(*bottom[0]);
  }
  // One scale per channel of an image batch: the layer reads channel-blocked
  // blobs too (on the CPU, with the DNNL engine).
  channel_scale_ = bottom.size() == 1 && bottom[0]->num_axes() == 4 &&
                   outer_ == bottom[0]->shape(0) && scale_dim_ == bottom[0]->shape(1);
  sums_.assign(per_channel() ? scale_dim_ : 0, 0.0);
}

ChannelBlocks ScaleLayer::Channels(const Blob& blob) const {
  return {outer_, scale_dim_, inner_, blob.channel_block()};
}

bool ScaleLayer::ShareSavedInput(Blob* saved) {
  if (!in_place_ || saved->count() != input_.count()) return false;
  input_.ShareData(*saved);
  input_shared_ = true;
  return true;
}

void ScaleLayer::Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  VisitStorageType(top[0]->storage_type(),
                   [&](auto tag) { ForwardStored<decltype(tag)>(bottom, top); });
}

template <typename T>
void ScaleLayer::ForwardStored(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const T* x = bottom[0]->cpu_data_as<T>();
  if (in_place_ && !input_shared_ && runs_backward()) {
    // y overwrites x, and Backward needs x for ds.
    Copy(bottom[0]->count(), x, input_.mutable_cpu_data_as<T>());
  }
  const float* s = (bottom.size() == 2 ? bottom[1] : blobs_[0].get())->cpu_data();
  const float* b = bias_index_ >= 0 ? blobs_[bias_index_]->cpu_data() : nullptr;
  T* y = top[0]->mutable_cpu_data_as<T>();
  if (b != nullptr) {
    StoreChannelElements(Channels(*top[0]), y,
                         [=](int64_t k, int64_t c) { return x[k] * s[c] + b[c]; });
  } else {
    StoreChannelElements(Channels(*top[0]), y,
                         [=](int64_t k, int64_t c) { return x[k] * s[c] + 0.0f; });
  }
}

void ScaleLayer::Backward_cpu(const std::vector<Blob*>& top,
                              const std::vector<bool>& propagate_down,
                              const std::vector<Blob*>& bottom) {
  VisitStorageType(top[0]->storage_type(),
                   [&](auto tag) { BackwardStored<decltype(tag)>(top, propagate_down, bottom); });
}

template <typename T>
void ScaleLayer::BackwardStored(const std::vector<Blob*>& top,
                                const std::vector<bool>& propagate_down,
                                const std::vector<Blob*>& bottom) {
  const T* dy = top[0]->cpu_diff_as<T>();
  const bool scale_is_param = bottom.size() == 1;
  const int64_t outer = outer_, dim = scale_dim_, inner = inner_;
  const ChannelBlocks t = Channels(*top[0]);
  // Caffe's layout of floats sums rows with lane sums; blocked (or 16-bit)
  // blobs per channel in ChannelSums.
  bool float_rows = false;
  if constexpr (std::is_same_v<T, float>) float_rows = t.block == 1;
  if (bias_index_ >= 0 && param_propagate_down(bias_index_)) {
    float* db = blobs_[bias_index_]->mutable_cpu_diff();
    if constexpr (std::is_same_v<T, float>) {
      if (float_rows) {
        // Threads take entries: each db[d] still adds o = 0, 1, ... in order.
        ParallelFor(dim, GrainFor(outer * inner), [=](int64_t begin, int64_t end) {
          for (int64_t o = 0; o < outer; ++o) {
            for (int64_t d = begin; d < end; ++d) {
              db[d] += static_cast<float>(LaneSum(inner, dy + (o * dim + d) * inner));
            }
          }
        });
      }
    }
    if (!float_rows) {
      SumChannels<T>(t, sums_.data(),
                     [dy](int64_t k, int64_t) { return static_cast<float>(dy[k]); });
      for (int64_t d = 0; d < dim; ++d) db[d] += static_cast<float>(sums_[d]);
    }
  }
  if (scale_is_param ? param_propagate_down(0) : propagate_down[1]) {
    // Before dx: in place, dx overwrites dy. A param gradient accumulates;
    // bottom 1's gradient is written.
    const T* x = in_place_ ? input_.cpu_data_as<T>() : bottom[0]->cpu_data_as<T>();
    float* ds = (scale_is_param ? blobs_[0].get() : bottom[1])->mutable_cpu_diff();
    if (!scale_is_param) Set(scale_dim_, 0.0f, ds);
    if constexpr (std::is_same_v<T, float>) {
      if (float_rows) {
        // As db: each ds[d] adds o = 0, 1, ... in order; each row's dot is a
        // lane sum (not BLAS, which must not be called from threads).
        ParallelFor(dim, GrainFor(outer * inner), [=](int64_t begin, int64_t end) {
          for (int64_t o = 0; o < outer; ++o) {
            for (int64_t d = begin; d < end; ++d) {
              const int64_t at = (o * dim + d) * inner;
              ds[d] += static_cast<float>(LaneDot(inner, dy + at, x + at));
            }
          }
        });
      }
    }
    if (!float_rows) {
      SumChannels<T>(t, sums_.data(), [dy, x](int64_t k, int64_t) {
        return static_cast<float>(dy[k]) * static_cast<float>(x[k]);
      });
      for (int64_t d = 0; d < dim; ++d) ds[d] += static_cast<float>(sums_[d]);
    }
  }
  if (propagate_down[0]) {
    const float* s = (scale_is_param ? blobs_[0].get() : bottom[1])->cpu_data();
    T* dx = bottom[0]->mutable_cpu_diff_as<T>();
    StoreChannelElements(t, dx, [=](int64_t k, int64_t c) { return dy[k] * s[c]; });
  }
}

DEMI_REGISTER_LAYER(Scale);

}  // namespace demi
