#include "demi/blob.hpp"
#include "demi/util/convert_gpu.hpp"
#include "demi/util/cuda_kernel.cuh"
#include "demi/util/stored_types.cuh"

namespace demi {

namespace {

// kernels

template <typename From, typename To>
__global__ void ConvertKernel(int64_t n, const From* x, To* y) {
  ElementwiseLoop(
      n, [=](int64_t i) { return Widen(x[i]); },
      [=](int64_t i, float value) { y[i] = Narrow<To>(value); });
}

template <typename T>
__global__ void AddWidenedKernel(int64_t n, const T* x, float* y) {
  ElementwiseInto(n, y, [=](int64_t i) { return y[i] + Widen(x[i]); });
}

/// The tile a block of TransposeKernel moves: kTile x kTile elements, read
/// along x's rows and written along y's (coalesced both ways).
constexpr int kTile = 32;

/// For each of `num` matrices of rows x cols elements: y = x transposed
/// (y[n][j][i] = x[n][i][j]), converted from From to To; with kAccumulate,
/// y[n][j][i] += x[n][i][j] (To float). Blocks take tiles by a grid stride.
template <typename From, typename To, bool kAccumulate>
__global__ void TransposeKernel(int64_t num, int64_t rows, int64_t cols, const From* x, To* y) {
  __shared__ float tile[kTile][kTile + 1];  // +1: no bank conflicts down a column
  const int64_t tile_rows = (rows + kTile - 1) / kTile, tile_cols = (cols + kTile - 1) / kTile;
  const int lane = threadIdx.x % kTile, first = threadIdx.x / kTile;
  constexpr int kStep = kCudaThreads / kTile;
  for (int64_t t = blockIdx.x; t < num * tile_rows * tile_cols; t += gridDim.x) {
    const int64_t n = t / (tile_rows * tile_cols);
    const int64_t row0 = t / tile_cols % tile_rows * kTile, col0 = t % tile_cols * kTile;
    const From* in = x + n * rows * cols;
    To* out = y + n * rows * cols;
    for (int r = first; r < kTile; r += kStep) {
      const int64_t i = row0 + r, j = col0 + lane;
      if (i < rows && j < cols) tile[r][lane] = Widen(in[i * cols + j]);
    }
    __syncthreads();
    for (int r = first; r < kTile; r += kStep) {
      const int64_t j = col0 + r, i = row0 + lane;  // y's row j, column i
      if (i < rows && j < cols) {
        if constexpr (kAccumulate) {
          out[j * rows + i] += tile[lane][r];
        } else {
          out[j * rows + i] = Narrow<To>(tile[lane][r]);
        }
      }
    }
    __syncthreads();  // before the tile is written again
  }
}

template <typename From, typename To, bool kAccumulate>
void Transpose(int64_t num, int64_t rows, int64_t cols, const void* x, void* y) {
  const int64_t tiles = num * ((rows + kTile - 1) / kTile) * ((cols + kTile - 1) / kTile);
  Launch("TransposeKernel", BlockPerItem(tiles), TransposeKernel<From, To, kAccumulate>, num, rows,
         cols, static_cast<const From*>(x), static_cast<To*>(y));
}

}  // namespace

// launchers

void GpuConvert(int64_t n, Type from, const void* x, Type to, void* y) {
  if (n == 0) return;
  if (from == to) {
    const size_t bytes = static_cast<size_t>(n) * (from == FLOAT ? sizeof(float) : 2);
    DEMI_CUDA_CHECK(cudaMemcpyAsync(y, x, bytes, cudaMemcpyDeviceToDevice, CudaStream()));
    return;
  }
  VisitStorageType(from, [&](auto from_tag) {
    VisitStorageType(to, [&](auto to_tag) {
      using From = decltype(from_tag);
      using To = decltype(to_tag);
      Launch("ConvertKernel", ElementwiseBlocks(n), ConvertKernel<From, To>, n,
             static_cast<const From*>(x), static_cast<To*>(y));
    });
  });
}

void GpuAddWidened(int64_t n, Type type, const void* x, float* y) {
  if (n == 0) return;
  VisitStorageType(type, [&](auto tag) {
    using T = decltype(tag);
    Launch("AddWidenedKernel", ElementwiseBlocks(n), AddWidenedKernel<T>, n,
           static_cast<const T*>(x), y);
  });
}

void GpuConvertLayout(int64_t num, int64_t channels, int64_t spatial, Type from, const void* x,
                      Type to, void* y, bool to_channels_last) {
  if (num * channels * spatial == 0) return;
  // Each image is a channels x spatial matrix in Caffe's layout and its
  // transpose channels last.
  const int64_t rows = to_channels_last ? channels : spatial;
  const int64_t cols = to_channels_last ? spatial : channels;
  VisitStorageType(from, [&](auto from_tag) {
    VisitStorageType(to, [&](auto to_tag) {
      Transpose<decltype(from_tag), decltype(to_tag), false>(num, rows, cols, x, y);
    });
  });
}

void GpuAddWidenedFromChannelsLast(int64_t num, int64_t channels, int64_t spatial, Type type,
                                   const void* x, float* y) {
  if (num * channels * spatial == 0) return;
  VisitStorageType(
      type, [&](auto tag) { Transpose<decltype(tag), float, true>(num, spatial, channels, x, y); });
}

}  // namespace demi
