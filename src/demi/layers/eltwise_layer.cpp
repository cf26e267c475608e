#include "demi/layers/eltwise_layer.hpp"

#include "demi/layer_registry.hpp"
#include "demi/util/device_math.hpp"
#include "demi/util/threads.hpp"

namespace demi {

void EltwiseLayer::LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const EltwiseParameter& param = layer_param_.eltwise_param();
  op_ = param.operation();
  stable_prod_grad_ = param.stable_prod_grad();
  DEMI_CHECK(param.coeff_size() == 0 || op_ == EltwiseParameter::SUM, "Eltwise layer '",
             layer_param_.name(), "' takes coeff only for operation SUM");
  DEMI_CHECK(param.coeff_size() == 0 || param.coeff_size() == static_cast<int>(bottom.size()),
             "Eltwise layer '", layer_param_.name(), "' has ", param.coeff_size(),
             " coeff values for ", bottom.size(), " bottoms; give one per bottom");
  coeffs_.assign(bottom.size(), 1.0f);
  for (int i = 0; i < param.coeff_size(); ++i) coeffs_[i] = param.coeff(i);
  if (op_ == EltwiseParameter::MAX) {
    RegisterBuffer("argmax", &argmax_, BufferLifetime::kSavedForBackward);
  }
  DnnlSetUp();
}

void EltwiseLayer::Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const std::string& name = layer_param_.name();
  for (size_t i = 0; i < bottom.size(); ++i) {
    DEMI_CHECK(bottom[i]->shape() == bottom[0]->shape(), "Eltwise layer '", name, "': bottom ", i,
               " has shape ", bottom[i]->shape_string(), " but bottom 0 has ",
               bottom[0]->shape_string(), "; all bottoms must have one shape");
    DEMI_CHECK(bottom[i] != top[0], "Eltwise layer '", name, "' cannot run in place");
  }
  top[0]->ReshapeLike(*bottom[0]);
  if (op_ == EltwiseParameter::MAX) argmax_.ReshapeLike(*bottom[0]);
  if (dnnl_) DnnlReshape(bottom, *top[0]);
}

void EltwiseLayer::Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  if (DnnlReady()) return DnnlForward(bottom, top[0]);
  if (op_ != EltwiseParameter::MAX) {
    ForwardByMath(Device::kCPU, bottom, top[0]);
    return;
  }
  const int64_t count = top[0]->count();
  float* y = top[0]->mutable_cpu_data();
  float* argmax = argmax_.mutable_cpu_data();
  const float* a = bottom[0]->cpu_data();
  const float* b = bottom[1]->cpu_data();
  ParallelFor(count, [=](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      // Caffe's order: bottom 0 wins over bottom 1 only when strictly larger.
      const bool first = a[i] > b[i];
      y[i] = first ? a[i] : b[i];
      argmax[i] = first ? 0.0f : 1.0f;
    }
  });
  for (size_t k = 2; k < bottom.size(); ++k) {
    const float* x = bottom[k]->cpu_data();
    ParallelFor(count, [=](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        if (x[i] > y[i]) {
          y[i] = x[i];
          argmax[i] = static_cast<float>(k);
        }
      }
    });
  }
}

void EltwiseLayer::Backward_cpu(const std::vector<Blob*>& top,
                                const std::vector<bool>& propagate_down,
                                const std::vector<Blob*>& bottom) {
  if (DnnlReady()) return DnnlBackward(*top[0], propagate_down, bottom);
  if (op_ != EltwiseParameter::MAX) {
    BackwardByMath(Device::kCPU, *top[0], propagate_down, bottom);
    return;
  }
  const int64_t count = top[0]->count();
  const float* dy = top[0]->cpu_diff();
  const float* argmax = argmax_.cpu_data();
  for (size_t k = 0; k < bottom.size(); ++k) {
    if (!propagate_down[k]) continue;
    float* dx = bottom[k]->mutable_cpu_diff();
    const float winner = static_cast<float>(k);
    ParallelFor(count, [=](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) dx[i] = argmax[i] == winner ? dy[i] : 0.0f;
    });
  }
}

void EltwiseLayer::ForwardByMath(Device device, const std::vector<Blob*>& bottom, Blob* top) const {
  const int64_t count = top->count();
  float* y = top->mutable_data_on(device);
  if (op_ == EltwiseParameter::PROD) {
    Mul(device, count, bottom[0]->data_on(device), bottom[1]->data_on(device), y);
    for (size_t k = 2; k < bottom.size(); ++k) Mul(device, count, y, bottom[k]->data_on(device), y);
    return;
  }
  Set(device, count, 0.0f, y);
  for (size_t k = 0; k < bottom.size(); ++k) {
    Axpy(device, count, coeffs_[k], bottom[k]->data_on(device), y);
  }
}

void EltwiseLayer::BackwardByMath(Device device, const Blob& top,
                                  const std::vector<bool>& propagate_down,
                                  const std::vector<Blob*>& bottom) const {
  const int64_t count = top.count();
  const float* dy = top.diff_on(device);
  for (size_t k = 0; k < bottom.size(); ++k) {
    if (!propagate_down[k]) continue;
    float* dx = bottom[k]->mutable_diff_on(device);
    if (op_ == EltwiseParameter::SUM) {
      Copy(device, count, dy, dx);
      if (coeffs_[k] != 1.0f) Scal(device, count, coeffs_[k], dx);
      continue;
    }
    if (stable_prod_grad_) {
      // Product of the other bottoms, so a zero in x_k does no harm.
      bool started = false;
      for (size_t j = 0; j < bottom.size(); ++j) {
        if (j == k) continue;
        if (started) {
          Mul(device, count, dx, bottom[j]->data_on(device), dx);
        } else {
          Copy(device, count, bottom[j]->data_on(device), dx);
          started = true;
        }
      }
    } else {
      Div(device, count, top.data_on(device), bottom[k]->data_on(device), dx);
    }
    Mul(device, count, dx, dy, dx);
  }
}

DEMI_REGISTER_LAYER(Eltwise);

}  // namespace demi
