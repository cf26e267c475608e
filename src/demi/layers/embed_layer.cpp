#include "demi/layers/embed_layer.hpp"

#include <cmath>

#include "demi/filler.hpp"
#include "demi/layer_registry.hpp"
#include "demi/util/math.hpp"

namespace demi {

void EmbedLayer::LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const EmbedParameter& param = layer_param_.embed_param();
  num_output_ = param.num_output();
  input_dim_ = param.input_dim();
  bias_term_ = param.bias_term();
  DEMI_CHECK(num_output_ > 0 && input_dim_ > 0, "Embed layer '", layer_param_.name(),
             "' needs embed_param.num_output > 0 and input_dim > 0, got num_output ", num_output_,
             " and input_dim ", input_dim_);
  const std::vector<int64_t> weight_shape{input_dim_, num_output_};
  const std::vector<int64_t> bias_shape{num_output_};
  if (blobs_.empty()) {
    blobs_.push_back(std::make_shared<Blob>(weight_shape));
    GetFiller(param.weight_filler())->Fill(blobs_[0].get(), rng());
    if (bias_term_) {
      blobs_.push_back(std::make_shared<Blob>(bias_shape));
      GetFiller(param.bias_filler())->Fill(blobs_[1].get(), rng());
    }
  }
  const bool shapes_match = blobs_.size() == (bias_term_ ? 2u : 1u) &&
                            blobs_[0]->shape() == weight_shape &&
                            (!bias_term_ || blobs_[1]->shape() == bias_shape);
  DEMI_CHECK(shapes_match, "Embed layer '", layer_param_.name(), "' was given ", blobs_.size(),
             " param blobs (the first of shape ", blobs_[0]->shape_string(), "), but needs W ",
             ShapeString(weight_shape), (bias_term_ ? " and b " + ShapeString(bias_shape) : ""));
  param_propagate_down_.assign(blobs_.size(), true);
}

void EmbedLayer::Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  std::vector<int64_t> top_shape = bottom[0]->shape();
  top_shape.push_back(num_output_);
  top[0]->Reshape(top_shape);
}

int64_t EmbedLayer::CheckedRow(float value, int64_t i, const Blob& bottom) const {
  DEMI_CHECK(value >= 0 && value < static_cast<float>(input_dim_) && value == std::floor(value),
             "Embed layer '", layer_param_.name(), "': input ", value, " at position ", i,
             " of bottom ", bottom.shape_string(), " is not an index in [0, ", input_dim_, ")");
  return static_cast<int64_t>(value);
}

void EmbedLayer::Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const float* x = bottom[0]->cpu_data();
  const float* w = blobs_[0]->cpu_data();
  float* y = top[0]->mutable_cpu_data();
  for (int64_t i = 0; i < bottom[0]->count(); ++i) {
    Copy(num_output_, w + CheckedRow(x[i], i, *bottom[0]) * num_output_, y + i * num_output_);
    if (bias_term_) Axpy(num_output_, 1.0f, blobs_[1]->cpu_data(), y + i * num_output_);
  }
}

void EmbedLayer::Backward_cpu(const std::vector<Blob*>& top,
                              const std::vector<bool>& propagate_down,
                              const std::vector<Blob*>& bottom) {
  RefuseGradient(propagate_down, 0, "its input indices");
  const float* dy = top[0]->cpu_diff();
  const int64_t count = bottom[0]->count();
  if (param_propagate_down(0)) {
    const float* x = bottom[0]->cpu_data();
    float* dw = blobs_[0]->mutable_cpu_diff();
    for (int64_t i = 0; i < count; ++i) {
      Axpy(num_output_, 1.0f, dy + i * num_output_, dw + static_cast<int64_t>(x[i]) * num_output_);
    }
  }
  if (bias_term_ && param_propagate_down(1)) {
    SumRows(count, num_output_, dy, blobs_[1]->mutable_cpu_diff());
  }
}

DEMI_REGISTER_LAYER(Embed);

}  // namespace demi
