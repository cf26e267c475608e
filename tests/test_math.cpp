// The row operations and tanh of util/math.hpp, by hand, and their CUDA
// twins of util/math_gpu.hpp against them (bit for bit where they sum).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "demi/blob.hpp"
#include "demi/util/math.hpp"
#include "demi/util/math_gpu.hpp"
#include "gpu_test_util.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

TEST(MathTest, RowOperationsByHand) {
  const std::vector<float> x{1, 2, 3, 4, 5, 6};  // 2 x 3
  std::vector<float> scaled(6);
  const std::vector<float> scale{2, -1};
  ScaleRows(2, 3, scale.data(), x.data(), scaled.data());
  EXPECT_EQ(scaled, (std::vector<float>{2, 4, 6, -4, -5, -6}));

  std::vector<float> y = x;
  const std::vector<float> row{10, 20, 30};
  AddToRows(2, 3, row.data(), y.data());
  EXPECT_EQ(y, (std::vector<float>{11, 22, 33, 14, 25, 36}));

  std::vector<float> sum{100, 200, 300};  // accumulates
  SumRows(2, 3, x.data(), sum.data());
  EXPECT_EQ(sum, (std::vector<float>{105, 207, 309}));
}

TEST(MathTest, TanhAndItsGradient) {
  const std::vector<float> x{-2.0f, 0.0f, 0.5f};
  std::vector<float> y(3), dx(3);
  Tanh(3, x.data(), y.data());
  for (int i = 0; i < 3; ++i) EXPECT_FLOAT_EQ(y[i], std::tanh(x[i]));
  const std::vector<float> dy{1.0f, 2.0f, -3.0f};
  TanhGradient(3, y.data(), dy.data(), dx.data());
  for (int i = 0; i < 3; ++i) EXPECT_FLOAT_EQ(dx[i], dy[i] * (1 - y[i] * y[i]));
}

#ifndef CPU_ONLY
TEST(GpuMathTest, RowOperationsAndTanhMatchTheCpu) {
  if (!HaveGpu()) GTEST_SKIP() << "no CUDA device";
  const int64_t rows = 37, width = 300;  // past a block of threads
  Blob x({rows, width}), scale({rows}), row({width});
  FillGaussian(&x, 1);
  FillGaussian(&scale, 2);
  FillGaussian(&row, 3);

  Blob cpu({rows, width}), gpu({rows, width});
  ScaleRows(rows, width, scale.cpu_data(), x.cpu_data(), cpu.mutable_cpu_data());
  GpuScaleRows(rows, width, scale.gpu_data(), x.gpu_data(), gpu.mutable_gpu_data());
  ExpectClose(gpu, cpu, 0.0f, "ScaleRows");

  cpu.CopyFrom(x);
  gpu.CopyFrom(x);
  AddToRows(rows, width, row.cpu_data(), cpu.mutable_cpu_data());
  GpuAddToRows(rows, width, row.gpu_data(), gpu.mutable_gpu_data());
  ExpectClose(gpu, cpu, 0.0f, "AddToRows");

  Blob cpu_sum({width}), gpu_sum({width});
  cpu_sum.CopyFrom(row);
  gpu_sum.CopyFrom(row);
  SumRows(rows, width, x.cpu_data(), cpu_sum.mutable_cpu_data());
  GpuSumRows(rows, width, x.gpu_data(), gpu_sum.mutable_gpu_data());
  ExpectClose(gpu_sum, cpu_sum, 0.0f, "SumRows");

  Tanh(x.count(), x.cpu_data(), cpu.mutable_cpu_data());
  GpuTanh(x.count(), x.gpu_data(), gpu.mutable_gpu_data());
  ExpectClose(gpu, cpu, 1e-6f, "Tanh");
  Blob cpu_dx({rows, width}), gpu_dx({rows, width});
  TanhGradient(x.count(), cpu.cpu_data(), x.cpu_data(), cpu_dx.mutable_cpu_data());
  GpuTanhGradient(x.count(), cpu.gpu_data(), x.gpu_data(), gpu_dx.mutable_gpu_data());
  ExpectClose(gpu_dx, cpu_dx, 1e-6f, "TanhGradient");  // nvcc may fuse 1 - y * y
}
#endif  // CPU_ONLY

}  // namespace
}  // namespace demi
