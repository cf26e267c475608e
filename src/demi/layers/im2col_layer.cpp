#include "demi/layers/im2col_layer.hpp"

#include "demi/layer_registry.hpp"
#include "demi/layers/base_conv_layer.hpp"
#include "demi/util/device_math.hpp"

namespace demi {

void Im2colLayer::LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  DEMI_CHECK(bottom[0] != top[0], "Im2col layer '", layer_param_.name(),
             "' cannot run in place: its columns are not its image");
  geometry_ = ReadConvGeometry(layer_param_, *bottom[0]);
}

void Im2colLayer::Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  DEMI_CHECK(bottom[0]->num_axes() == 4, "Im2col layer '", layer_param_.name(),
             "' needs a 4-D N x C x H x W bottom, got shape ", bottom[0]->shape_string());
  CheckConvWindowFits(layer_param_, geometry_, *bottom[0]);
  num_ = bottom[0]->shape(0);
  geometry_.channels = bottom[0]->shape(1);
  geometry_.height = bottom[0]->shape(2);
  geometry_.width = bottom[0]->shape(3);
  top[0]->Reshape(num_, geometry_.channels * geometry_.kernel_h * geometry_.kernel_w,
                  geometry_.output_h(), geometry_.output_w());
}

void Im2colLayer::ForwardOnDevice(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const Device device = context_.device;
  const int64_t in_size = bottom[0]->count(1);
  const int64_t out_size = top[0]->count(1);
  const float* x = bottom[0]->data_on(device);
  float* y = top[0]->mutable_data_on(device);
  for (int64_t n = 0; n < num_; ++n) Im2col(device, x + n * in_size, geometry_, y + n * out_size);
}

void Im2colLayer::BackwardOnDevice(const std::vector<Blob*>& top,
                                   const std::vector<bool>& propagate_down,
                                   const std::vector<Blob*>& bottom) {
  if (!propagate_down[0]) return;
  const Device device = context_.device;
  const int64_t in_size = bottom[0]->count(1);
  const int64_t out_size = top[0]->count(1);
  const float* dy = top[0]->diff_on(device);
  float* dx = bottom[0]->mutable_diff_on(device);
  for (int64_t n = 0; n < num_; ++n) Col2im(device, dy + n * out_size, geometry_, dx + n * in_size);
}

DEMI_REGISTER_LAYER(Im2col);

}  // namespace demi
