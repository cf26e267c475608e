#ifndef DEMI_TESTS_GPU_TEST_UTIL_HPP_
#define DEMI_TESTS_GPU_TEST_UTIL_HPP_

// GPU twins against their CPU reference. Test suites named Gpu*Test are
// skipped as a whole, with one line, where no CUDA device exists
// (test_main.cpp); each case also checks HaveGpu() itself.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "demi/layer_registry.hpp"
#include "demi/util/device.hpp"
#include "layer_compare_util.hpp"

namespace demi {
namespace {

inline bool HaveGpu() { return DeviceCount() > 0; }

using GpuCase = LayerCase;

inline std::unique_ptr<Layer> MakeLayerOn(const std::string& text, Device device) {
  std::unique_ptr<Layer> layer = MakeLayer(text);
  Context context;
  context.device = device;
  layer->set_context(context);
  return layer;
}

/// Runs the case's layer on the CPU and on GPU 0 (ExpectLayersAgree), then
/// checks the GPU layer's gradients against finite differences.
inline void ExpectGpuMatchesCpu(const GpuCase& c) {
  if (!HaveGpu()) GTEST_SKIP() << "no CUDA device";
  ExpectLayersAgree(
      c, [&] { return MakeLayerOn(c.layer, Device::kCPU); },
      [&] { return MakeLayerOn(c.layer, Device::kGPU); });
}

/// A test of a 16-bit type (its parameter) on GPU 0: skipped without a
/// device, and in builds without cuDNN, where no GPU layer stores 16 bits.
class GpuSixteenBitTest : public ::testing::TestWithParam<Type> {
 protected:
  void SetUp() override {
    if (!HaveGpu()) GTEST_SKIP() << "no CUDA device";
#ifndef USE_CUDNN
    GTEST_SKIP() << "built without cuDNN: no GPU layer stores 16 bits";
#endif
  }
  Type type() const { return GetParam(); }
};

}  // namespace
}  // namespace demi

#endif  // DEMI_TESTS_GPU_TEST_UTIL_HPP_
