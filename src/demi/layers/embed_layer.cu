#include <algorithm>
#include <numeric>

#include "demi/layers/embed_layer.hpp"
#include "demi/util/cuda_kernel.cuh"
#include "demi/util/math_gpu.hpp"

namespace demi {

namespace {

// kernels

/// y[i, j] = W[x[i], j] (+ b[j]).
__global__ void EmbedForwardKernel(int64_t n, int64_t num_output, const float* x, const float* w,
                                   const float* b, float* y) {
  for (int64_t e = GridStart(); e < n; e += GridStride()) {
    const int64_t j = e % num_output;
    const float value = w[static_cast<int64_t>(x[e / num_output]) * num_output + j];
    y[e] = b ? value + b[j] : value;
  }
}

/// dW[rows[r], j] += dy[i, j] for the positions i that read row rows[r],
/// items[begin[r]] .. items[begin[r + 1] - 1], added in increasing order
/// (the CPU's order): one thread per used element of W, no atomics.
__global__ void EmbedWeightGradKernel(int64_t n, int64_t num_output, const float* rows,
                                      const float* begin, const float* items, const float* dy,
                                      float* dw) {
  for (int64_t e = GridStart(); e < n; e += GridStride()) {
    const int64_t r = e / num_output;
    const int64_t j = e % num_output;
    float* out = dw + static_cast<int64_t>(rows[r]) * num_output + j;
    float sum = *out;
    const int64_t last = static_cast<int64_t>(begin[r + 1]);
    for (int64_t t = static_cast<int64_t>(begin[r]); t < last; ++t) {
      sum += dy[static_cast<int64_t>(items[t]) * num_output + j];
    }
    *out = sum;
  }
}

}  // namespace

// launchers

void EmbedLayer::Forward_gpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const float* x = bottom[0]->cpu_data();
  for (int64_t i = 0; i < bottom[0]->count(); ++i) CheckedRow(x[i], i, *bottom[0]);
  const int64_t n = top[0]->count();
  if (n == 0) return;
  Launch("EmbedForwardKernel", CudaBlocks(n), EmbedForwardKernel, n, num_output_,
         bottom[0]->gpu_data(), blobs_[0]->gpu_data(), bias_term_ ? blobs_[1]->gpu_data() : nullptr,
         top[0]->mutable_gpu_data());
}

void EmbedLayer::Backward_gpu(const std::vector<Blob*>& top,
                              const std::vector<bool>& propagate_down,
                              const std::vector<Blob*>& bottom) {
  RefuseGradient(propagate_down, 0, "its input indices");
  const int64_t positions = bottom[0]->count();
  if (positions == 0) return;
  const float* dy = top[0]->gpu_diff();
  if (param_propagate_down(0)) {
    // Group the positions by the row they read, on the host, in increasing
    // order within a row; floats hold these integers exactly.
    DEMI_CHECK(std::max(input_dim_, positions) <= int64_t{1} << 24, "Embed layer '",
               layer_param_.name(), "': the GPU backward indexes rows and positions in floats, ",
               "which hold at most 2^24 of them, but there are ", input_dim_, " rows and ",
               positions, " positions; train this layer on the CPU or use a smaller input_dim "
               "or batch");
    const float* x = bottom[0]->cpu_data();
    std::vector<int64_t> order(static_cast<size_t>(positions));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [x](int64_t a, int64_t b) { return x[a] < x[b]; });
    std::vector<float> rows, begin;
    for (int64_t t = 0; t < positions; ++t) {
      if (t == 0 || x[order[t]] != x[order[t - 1]]) {
        rows.push_back(x[order[t]]);
        begin.push_back(static_cast<float>(t));
      }
    }
    begin.push_back(static_cast<float>(positions));
    const int64_t num_rows = static_cast<int64_t>(rows.size());
    gather_.Reshape(std::vector<int64_t>{2 * num_rows + 1 + positions});
    float* host = gather_.mutable_cpu_data();
    std::copy(rows.begin(), rows.end(), host);
    std::copy(begin.begin(), begin.end(), host + num_rows);
    for (int64_t t = 0; t < positions; ++t) {
      host[2 * num_rows + 1 + t] = static_cast<float>(order[t]);
    }
    const float* gather = gather_.gpu_data();
    const int64_t n = num_rows * num_output_;
    Launch("EmbedWeightGradKernel", CudaBlocks(n), EmbedWeightGradKernel, n, num_output_, gather,
           gather + num_rows, gather + 2 * num_rows + 1, dy, blobs_[0]->mutable_gpu_diff());
  }
  if (bias_term_ && param_propagate_down(1)) {
    GpuSumRows(positions, num_output_, dy, blobs_[1]->mutable_gpu_diff());
  }
}

}  // namespace demi
