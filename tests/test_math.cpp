// The row operations and tanh of util/math.hpp, by hand, and their CUDA
// twins of util/math_gpu.hpp against them (bit for bit where they sum).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
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

TEST(MathTest, GemmPastBlasIntIsAnErrorNamingTheDimension) {
  // The sizes are refused before any operand is read, so none is needed.
  const int64_t rows = int64_t{3} << 30;
  try {
    Gemm(true, false, rows, 1, 1, 1.0f, nullptr, nullptr, 0.0f, nullptr);
    FAIL() << "a 3 GiB-row GEMM ran";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(StrCat("a matrix dimension of ", rows, " is past BLAS")),
              std::string::npos)
        << e.what();
  }
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
// The lane reductions agree with a long-double sum for every length around
// the lane count (tails included), and sum in a fixed order: a reversed
// copy of the input gives another order, hence possibly other bits, but the
// same input always the same bits.
TEST(MathTest, LaneReductions) {
  for (int64_t n : {0, 1, 7, 8, 9, 15, 16, 17, 1000, 3137}) {
    std::vector<float> x(static_cast<size_t>(n)), y(static_cast<size_t>(n));
    std::mt19937 rng(static_cast<uint32_t>(n));
    std::normal_distribution<float> normal(0.5f, 2.0f);
    long double sum = 0, dot = 0, deviation = 0;
    for (int64_t i = 0; i < n; ++i) {
      x[i] = normal(rng);
      y[i] = normal(rng);
      sum += x[i];
      dot += static_cast<long double>(x[i]) * y[i];
    }
    const double mean = n > 0 ? static_cast<double>(sum / n) : 0.0;
    for (int64_t i = 0; i < n; ++i) deviation += (x[i] - mean) * (x[i] - mean);
    EXPECT_NEAR(LaneSum(n, x.data()), static_cast<double>(sum), 1e-9 * (1 + n)) << n;
    EXPECT_NEAR(LaneDot(n, x.data(), y.data()), static_cast<double>(dot), 1e-9 * (1 + n)) << n;
    EXPECT_NEAR(LaneSquaredDeviation(n, x.data(), mean), static_cast<double>(deviation),
                1e-9 * (1 + n))
        << n;
    EXPECT_EQ(LaneSum(n, x.data()), LaneSum(n, x.data()));
  }
}

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
