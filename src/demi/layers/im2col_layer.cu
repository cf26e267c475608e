#include "demi/layers/im2col_layer.hpp"
#include "demi/util/cuda.hpp"

namespace demi {

// launchers (the kernels are GpuIm2col / GpuCol2im of util/im2col.cu)

void Im2colLayer::Forward_gpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const int64_t in_size = bottom[0]->count(1);
  const int64_t out_size = top[0]->count(1);
  const float* x = bottom[0]->gpu_data();
  float* y = top[0]->mutable_gpu_data();
  for (int64_t n = 0; n < num_; ++n) GpuIm2col(x + n * in_size, geometry_, y + n * out_size);
}

void Im2colLayer::Backward_gpu(const std::vector<Blob*>& top,
                               const std::vector<bool>& propagate_down,
                               const std::vector<Blob*>& bottom) {
  if (!propagate_down[0]) return;
  const int64_t in_size = bottom[0]->count(1);
  const int64_t out_size = top[0]->count(1);
  const float* dy = top[0]->gpu_diff();
  float* dx = bottom[0]->mutable_gpu_diff();
  for (int64_t n = 0; n < num_; ++n) GpuCol2im(dy + n * out_size, geometry_, dx + n * in_size);
}

}  // namespace demi
