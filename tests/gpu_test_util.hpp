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
#include "gradient_checker.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

inline bool HaveGpu() { return DeviceCount() > 0; }

/// One layer configuration to compare: the layer's prototxt and its bottom
/// shapes. `fill` sets bottom i (default: Gaussian, seed 1000 + i);
/// `propagate_down` defaults to true for every bottom.
struct GpuCase {
  std::string layer;
  std::vector<std::vector<int64_t>> bottoms;
  std::function<void(int index, Blob* bottom)> fill;
  std::vector<bool> propagate_down;
  bool check_gradient = true;
  float stepsize = 1e-2f;
  float threshold = 1e-2f;
  /// |gpu - cpu| <= tolerance * (1 + |cpu|) for every value compared.
  float tolerance = 1e-4f;
};

inline std::unique_ptr<Layer> MakeLayerOn(const std::string& text, Device device) {
  std::unique_ptr<Layer> layer = MakeLayer(text);
  Context context;
  context.device = device;
  layer->set_context(context);
  return layer;
}

inline void ExpectClose(const Blob& gpu, const Blob& cpu, float tolerance,
                        const std::string& what) {
  ASSERT_EQ(gpu.shape(), cpu.shape()) << what;
  const float* g = gpu.cpu_data();
  const float* c = cpu.cpu_data();
  int reported = 0;
  for (int64_t i = 0; i < cpu.count() && reported < 5; ++i) {
    if (!(std::abs(g[i] - c[i]) <= tolerance * (1 + std::abs(c[i])))) {
      ADD_FAILURE() << what << "[" << i << "]: gpu " << g[i] << " vs cpu " << c[i];
      ++reported;
    }
  }
}

inline void ExpectCloseDiff(const Blob& gpu, const Blob& cpu, float tolerance,
                            const std::string& what) {
  Blob g(gpu.shape()), c(cpu.shape());
  Copy(gpu.count(), gpu.cpu_diff(), g.mutable_cpu_data());
  Copy(cpu.count(), cpu.cpu_diff(), c.mutable_cpu_data());
  ExpectClose(g, c, tolerance, what);
}

/// Runs the case's layer on the CPU and on GPU 0 with the same params,
/// inputs and top gradients; their tops, bottom gradients and param
/// gradients must agree. Then checks the GPU layer's gradients against
/// finite differences.
inline void ExpectGpuMatchesCpu(const GpuCase& c) {
  if (!HaveGpu()) GTEST_SKIP() << "no CUDA device";
  const size_t num_bottoms = c.bottoms.size();
  std::vector<std::unique_ptr<Blob>> cpu_bottoms, gpu_bottoms;
  std::vector<Blob*> cpu_bottom, gpu_bottom;
  for (size_t i = 0; i < num_bottoms; ++i) {
    cpu_bottoms.push_back(std::make_unique<Blob>(c.bottoms[i]));
    if (c.fill) {
      c.fill(static_cast<int>(i), cpu_bottoms.back().get());
    } else {
      FillGaussian(cpu_bottoms.back().get(), 1000 + static_cast<uint32_t>(i));
    }
    gpu_bottoms.push_back(std::make_unique<Blob>(c.bottoms[i]));
    gpu_bottoms.back()->CopyFrom(*cpu_bottoms.back());
    cpu_bottom.push_back(cpu_bottoms.back().get());
    gpu_bottom.push_back(gpu_bottoms.back().get());
  }
  auto cpu_layer = MakeLayerOn(c.layer, Device::kCPU);
  auto gpu_layer = MakeLayerOn(c.layer, Device::kGPU);
  const int num_tops = std::max(cpu_layer->ExactNumTopBlobs(), cpu_layer->MinTopBlobs());
  std::vector<std::unique_ptr<Blob>> owned;
  std::vector<Blob*> cpu_top, gpu_top;
  for (int i = 0; i < std::max(num_tops, 1); ++i) {
    owned.push_back(std::make_unique<Blob>());
    cpu_top.push_back(owned.back().get());
    owned.push_back(std::make_unique<Blob>());
    gpu_top.push_back(owned.back().get());
  }
  cpu_layer->SetUp(cpu_bottom, cpu_top);
  gpu_layer->SetUp(gpu_bottom, gpu_top);
  ASSERT_EQ(cpu_layer->blobs().size(), gpu_layer->blobs().size());
  for (size_t p = 0; p < cpu_layer->blobs().size(); ++p) {
    gpu_layer->blobs()[p]->CopyFrom(*cpu_layer->blobs()[p]);
  }

  cpu_layer->Forward(cpu_bottom, cpu_top);
  gpu_layer->Forward(gpu_bottom, gpu_top);
  for (size_t t = 0; t < cpu_top.size(); ++t) {
    ExpectClose(*gpu_top[t], *cpu_top[t], c.tolerance, StrCat("top ", t));
  }

  std::vector<bool> propagate_down = c.propagate_down;
  if (propagate_down.empty()) propagate_down.assign(num_bottoms, true);
  for (size_t t = 0; t < cpu_top.size(); ++t) {
    if (cpu_layer->loss(static_cast<int>(t)) != 0.0f) continue;  // holds the loss weight
    Blob diff(cpu_top[t]->shape());
    FillGaussian(&diff, 2000 + static_cast<uint32_t>(t));
    Copy(diff.count(), diff.cpu_data(), cpu_top[t]->mutable_cpu_diff());
    Copy(diff.count(), diff.cpu_data(), gpu_top[t]->mutable_cpu_diff());
  }
  for (size_t p = 0; p < cpu_layer->blobs().size(); ++p) {
    Set(cpu_layer->blobs()[p]->count(), 0.0f, cpu_layer->blobs()[p]->mutable_cpu_diff());
    Set(gpu_layer->blobs()[p]->count(), 0.0f, gpu_layer->blobs()[p]->mutable_cpu_diff());
  }
  cpu_layer->Backward(cpu_top, propagate_down, cpu_bottom);
  gpu_layer->Backward(gpu_top, propagate_down, gpu_bottom);
  for (size_t i = 0; i < num_bottoms; ++i) {
    if (!propagate_down[i]) continue;
    ExpectCloseDiff(*gpu_bottom[i], *cpu_bottom[i], c.tolerance, StrCat("bottom diff ", i));
  }
  for (size_t p = 0; p < cpu_layer->blobs().size(); ++p) {
    ExpectCloseDiff(*gpu_layer->blobs()[p], *cpu_layer->blobs()[p], c.tolerance,
                    StrCat("param diff ", p));
  }

  if (!c.check_gradient) return;
  auto checked = MakeLayerOn(c.layer, Device::kGPU);
  GradientChecker checker(c.stepsize, c.threshold);
  for (size_t i = 0; i < num_bottoms; ++i) gpu_bottoms[i]->CopyFrom(*cpu_bottoms[i]);
  if (std::all_of(propagate_down.begin(), propagate_down.end(), [](bool down) { return down; })) {
    checker.CheckGradient(checked.get(), gpu_bottom, gpu_top);
    return;
  }
  // Some bottoms take no gradient (labels, RNN's cont): check the others one at a time.
  for (size_t i = 0; i < num_bottoms; ++i) {
    if (propagate_down[i]) {
      checker.CheckGradient(checked.get(), gpu_bottom, gpu_top, static_cast<int>(i));
    }
  }
}

}  // namespace
}  // namespace demi

#endif  // DEMI_TESTS_GPU_TEST_UTIL_HPP_
