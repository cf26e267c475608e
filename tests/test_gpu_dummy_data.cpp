// DummyData's device fill (dummy_data_layer.cu): the moments and bounds of
// its uniform and gaussian draws, fresh draws each Forward, the same draws
// for the same seed, constants, and the host fill of the other fillers.
// Skipped without a device.
#include <cmath>
#include <vector>

#include "gpu_test_util.hpp"

namespace demi {
namespace {

/// A DummyData layer of `rows` x `columns` values (one axis where `columns`
/// is 0) with `filler` on GPU 0 (or the CPU).
std::unique_ptr<Layer> DummyData(const std::string& filler, int64_t rows,
                                 Device device = Device::kGPU, int64_t columns = 0) {
  const std::string second = columns > 0 ? StrCat(" dim: ", columns) : std::string();
  return MakeLayerOn(StrCat("name: 'd' type: 'DummyData' dummy_data_param { shape { dim: ", rows,
                            second, " } data_filler { ", filler, " } }"),
                     device);
}

std::vector<float> ForwardOnce(Layer* layer, Blob* top) {
  layer->Forward({}, {top});
  return std::vector<float>(top->cpu_data(), top->cpu_data() + top->count());
}

struct Moments {
  double mean = 0, std = 0, min = INFINITY, max = -INFINITY;
};

Moments MomentsOf(const std::vector<float>& values) {
  Moments m;
  double sum = 0, squares = 0;
  for (float v : values) {
    sum += v;
    squares += static_cast<double>(v) * v;
    m.min = std::min(m.min, static_cast<double>(v));
    m.max = std::max(m.max, static_cast<double>(v));
  }
  m.mean = sum / values.size();
  m.std = std::sqrt(squares / values.size() - m.mean * m.mean);
  return m;
}

constexpr int64_t kCount = int64_t{1} << 20;

TEST(GpuDummyDataTest, GaussianDrawsHaveTheMeanAndStdAsked) {
  if (!HaveGpu()) GTEST_SKIP() << "no CUDA device";
  auto layer = DummyData("type: 'gaussian' mean: 2 std: 3", kCount);
  Blob top;
  layer->SetUp({}, {&top});
  const Moments m = MomentsOf(ForwardOnce(layer.get(), &top));
  // Standard errors: 3 / 1024 for the mean, about 3 / 1448 for the std.
  EXPECT_NEAR(m.mean, 2.0, 0.015);
  EXPECT_NEAR(m.std, 3.0, 0.015);
  EXPECT_LT(m.min, 2.0 - 4 * 3.0);  // tails reached: ~30 of 2^20 draws pass 4 sigma
  EXPECT_GT(m.max, 2.0 + 4 * 3.0);
}

TEST(GpuDummyDataTest, UniformDrawsStayInTheirRangeAndSpreadOverIt) {
  if (!HaveGpu()) GTEST_SKIP() << "no CUDA device";
  auto layer = DummyData("type: 'uniform' min: -1 max: 4", kCount);
  Blob top;
  layer->SetUp({}, {&top});
  const Moments m = MomentsOf(ForwardOnce(layer.get(), &top));
  EXPECT_GE(m.min, -1.0);
  EXPECT_LE(m.max, 4.0);
  EXPECT_NEAR(m.mean, 1.5, 0.01);
  EXPECT_NEAR(m.std, 5.0 / std::sqrt(12.0), 0.01);
  EXPECT_LT(m.min, -0.999);
  EXPECT_GT(m.max, 3.999);
}

TEST(GpuDummyDataTest, EachForwardDrawsAfreshAndTheSeedRepeatsTheDraws) {
  if (!HaveGpu()) GTEST_SKIP() << "no CUDA device";
  auto first = DummyData("type: 'gaussian' std: 1", 4096);
  auto second = DummyData("type: 'gaussian' std: 1", 4096);
  Blob a, b;
  first->SetUp({}, {&a});
  second->SetUp({}, {&b});
  const std::vector<float> a1 = ForwardOnce(first.get(), &a);
  const std::vector<float> a2 = ForwardOnce(first.get(), &a);
  EXPECT_NE(a1, a2);
  EXPECT_EQ(ForwardOnce(second.get(), &b), a1);  // both streams start at the default seed
  EXPECT_EQ(ForwardOnce(second.get(), &b), a2);
}

TEST(GpuDummyDataTest, ConstantsAndHostFillersGiveTheCpusValues) {
  if (!HaveGpu()) GTEST_SKIP() << "no CUDA device";
  for (const char* filler :
       {"type: 'constant' value: 0.75", "type: 'xavier'", "type: 'gaussian' std: 1 sparse: 3"}) {
    SCOPED_TRACE(filler);
    // Two axes: xavier's fan-in and fan-out need them.
    auto gpu = DummyData(filler, 30, Device::kGPU, 100);
    auto cpu = DummyData(filler, 30, Device::kCPU, 100);
    Blob on_gpu, on_cpu;
    gpu->SetUp({}, {&on_gpu});
    cpu->SetUp({}, {&on_cpu});
    for (int pass = 0; pass < 2; ++pass) {
      EXPECT_EQ(ForwardOnce(gpu.get(), &on_gpu), ForwardOnce(cpu.get(), &on_cpu));
    }
  }
}

}  // namespace
}  // namespace demi
