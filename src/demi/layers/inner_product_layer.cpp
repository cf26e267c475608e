#include "demi/layers/inner_product_layer.hpp"

#include "demi/filler.hpp"
#include "demi/layer_registry.hpp"
#include "demi/util/device_math.hpp"

namespace demi {

void InnerProductLayer::LayerSetUp(const std::vector<Blob*>& bottom,
                                   const std::vector<Blob*>& top) {
  const InnerProductParameter& param = layer_param_.inner_product_param();
  DEMI_CHECK(param.num_output() > 0, "InnerProduct layer '", layer_param_.name(),
             "' needs num_output > 0");
  n_ = param.num_output();
  bias_term_ = param.bias_term();
  transpose_ = param.transpose();
  const int axis = bottom[0]->CanonicalAxisIndex(param.axis());
  k_ = bottom[0]->count(axis);
  param_propagate_down_.assign(bias_term_ ? 2 : 1, true);
  DnnlSetUp();
#ifndef CPU_ONLY
  if (context_.device == Device::kGPU) {
    staging_.ForEachBuffer([this](const char* name, Blob* blob) {
      RegisterBuffer(name, blob, BufferLifetime::kScratch);
    });
    RegisterBuffer("narrow_weights", &narrow_weights_, BufferLifetime::kSavedForBackward);
  }
#endif
  if (!blobs_.empty()) {
    LOG(INFO) << "Skipping parameter initialization of " << layer_param_.name();
    return;
  }
  std::vector<int64_t> weight_shape =
      transpose_ ? std::vector<int64_t>{k_, n_} : std::vector<int64_t>{n_, k_};
  blobs_.push_back(std::make_shared<Blob>(weight_shape));
  GetFiller(param.weight_filler())->Fill(blobs_[0].get(), rng());
  if (bias_term_) {
    blobs_.push_back(std::make_shared<Blob>(std::vector<int64_t>{n_}));
    GetFiller(param.bias_filler())->Fill(blobs_[1].get(), rng());
  }
}

void InnerProductLayer::Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  axis_ = bottom[0]->CanonicalAxisIndex(layer_param_.inner_product_param().axis());
  DEMI_CHECK(bottom[0]->count(axis_) == k_, "InnerProduct layer '", layer_param_.name(),
             "' was set up for ", k_, " inputs per row, but bottom shape ",
             bottom[0]->shape_string(), " gives ", bottom[0]->count(axis_));
  m_ = bottom[0]->count(0, axis_);
  std::vector<int64_t> top_shape(bottom[0]->shape().begin(), bottom[0]->shape().begin() + axis_);
  top_shape.push_back(n_);
  top[0]->Reshape(top_shape);
  if (dnnl_) DnnlReshape(*bottom[0]);
#ifndef CPU_ONLY
  if (context_.device == Device::kGPU) {
    staging_.Reshape(engine_.types, *bottom[0], *top[0]);
    narrow_weights_.set_storage_type(staging_.type());
    narrow_weights_.Reshape(staging_.type() == FLOAT ? std::vector<int64_t>{0}
                                                     : blobs_[0]->shape());
  }
#endif
}

void InnerProductLayer::ForwardOnDevice(const std::vector<Blob*>& bottom,
                                        const std::vector<Blob*>& top) {
  const Device device = context_.device;
  if (device == Device::kCPU && DnnlReady()) {
    DnnlForward(*bottom[0], top[0]);
    return;
  }
#ifndef CPU_ONLY
  if (device == Device::kGPU && staging_.type() != FLOAT) {
    return ForwardStoredGpu(*bottom[0], top[0]);
  }
#endif
  float* y = top[0]->mutable_data_on(device);
  Gemm(device, false, !transpose_, m_, n_, k_, 1.0f, bottom[0]->data_on(device),
       blobs_[0]->data_on(device), 0.0f, y);
  if (bias_term_) AddToRows(device, m_, n_, blobs_[1]->data_on(device), y);
}

void InnerProductLayer::BackwardOnDevice(const std::vector<Blob*>& top,
                                         const std::vector<bool>& propagate_down,
                                         const std::vector<Blob*>& bottom) {
  const Device device = context_.device;
#ifndef CPU_ONLY
  if (device == Device::kGPU && staging_.type() != FLOAT) {
    return BackwardStoredGpu(*top[0], propagate_down[0], bottom[0]);
  }
#endif
  const bool dnnl = device == Device::kCPU && DnnlReady();
  const float* dy = top[0]->diff_on(device);
  const bool weights_wanted = param_propagate_down(0);
  const bool bias_wanted = bias_term_ && param_propagate_down(1);
  // In BFLOAT16 backward math one oneDNN primitive gives both gradients.
  const bool dnnl_gradients = dnnl && DnnlComputesWeightGradient();
  if (dnnl_gradients && (weights_wanted || bias_wanted)) {
    DnnlWeightGradient(*bottom[0], *top[0],
                       weights_wanted ? blobs_[0]->mutable_cpu_diff() : nullptr,
                       bias_wanted ? blobs_[1]->mutable_cpu_diff() : nullptr);
  }
  if (weights_wanted && !dnnl_gradients) {
    const float* x = dnnl ? DnnlPlainBottom(*bottom[0]) : bottom[0]->data_on(device);
    float* dw = blobs_[0]->mutable_diff_on(device);
    if (transpose_) {
      Gemm(device, true, false, k_, n_, m_, 1.0f, x, dy, 1.0f, dw);  // dW (K x N) += x^T dy
    } else {
      Gemm(device, true, false, n_, k_, m_, 1.0f, dy, x, 1.0f, dw);  // dW (N x K) += dy^T x
    }
  }
  if (bias_wanted && !dnnl_gradients) {
    SumRows(device, m_, n_, dy, blobs_[1]->mutable_diff_on(device));
  }
  if (propagate_down[0] && dnnl) {
    DnnlBackwardData(*top[0], bottom[0]);
  } else if (propagate_down[0]) {
    // dx (M x K) = dy (M x N) W (N x K), or dy W^T when W is stored K x N.
    Gemm(device, false, transpose_, m_, k_, n_, 1.0f, dy, blobs_[0]->data_on(device), 0.0f,
         bottom[0]->mutable_diff_on(device));
  }
}

DEMI_REGISTER_LAYER(InnerProduct);

}  // namespace demi
