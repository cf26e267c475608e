// `device_query --gemm`'s measurement (util/gemm_rate.hpp): each precision
// timed on the GPU where one exists; a clear error everywhere else.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "demi/util/gemm_rate.hpp"
#include "gpu_test_util.hpp"

namespace demi {
namespace {

TEST(GemmRateTest, RefusesAnEmptyProductOrNoTimedRuns) {
  EXPECT_THROW(MeasureGemmRates(0, 0, 1), Error);
  EXPECT_THROW(MeasureGemmRates(64, 0, 0), Error);
}

#ifdef CPU_ONLY
TEST(GemmRateTest, SaysACpuOnlyBuildHasNoGpuToMeasure) {
  try {
    MeasureGemmRates(64, 0, 1);
    FAIL() << "a CPU_ONLY build measured a GPU";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("CPU_ONLY"), std::string::npos) << e.what();
  }
}
#endif

TEST(GpuGemmRateTest, TimesEachPrecisionWithFp32Sums) {
  if (!HaveGpu()) GTEST_SKIP() << "no CUDA device";
  SetCurrentDevice(0);
  const std::vector<GemmRate> rates = MeasureGemmRates(512, 1, 2);
  std::set<std::string> precisions;
  for (const GemmRate& rate : rates) {
    precisions.insert(rate.precision);
    EXPECT_EQ(rate.n, 512);
    EXPECT_GT(rate.ms, 0.0) << rate.precision;
    EXPECT_NEAR(rate.tflops, 2.0 * 512 * 512 * 512 / (rate.ms * 1e9), 1e-6 * rate.tflops);
  }
  EXPECT_EQ(precisions, (std::set<std::string>{"FP32", "TF32", "FLOAT16", "BFLOAT16"}));
}

}  // namespace
}  // namespace demi
