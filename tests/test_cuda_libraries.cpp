// util/cuda_libraries: cuBLAS, cuDNN and NCCL are loaded on first GPU use, so a
// CPU run of a CUDA build maps none of them. CUDA builds only; the loading
// itself is tested in test_lazy_library.
#ifndef CPU_ONLY

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "demi/util/cuda_libraries.hpp"
#include "solver_test_util.hpp"

namespace demi {
namespace {

/// The CUDA libraries of this process's /proc/self/maps among `names`.
std::vector<std::string> MappedAmong(const std::vector<std::string>& names) {
  std::ifstream maps("/proc/self/maps");
  std::vector<std::string> found;
  for (std::string line; std::getline(maps, line);) {
    for (const std::string& name : names) {
      if (line.find("/" + name) != std::string::npos) found.push_back(line);
    }
  }
  return found;
}

const std::vector<std::string> kLazyLibraries = {"libcublas", "libcudnn", "libnccl"};

TEST(CudaLibrariesTest, ACpuRunLoadsNoneOfThem) {
  // Only a process that has not used a GPU can show it; on a machine with
  // one, the suite's GPU tests may have run first.
  if (!MappedAmong(kLazyLibraries).empty()) {
    GTEST_SKIP() << "an earlier test of this process used the GPU";
  }
  // A convolution, pooling, ReLU and softmax: the layers with cuDNN engines.
  auto solver = MakeSolver(R"(
    type: "SGD" base_lr: 0.01 momentum: 0.9 lr_policy: "fixed" random_seed: 5
    net_param {
      layer { name: "data" type: "DummyData" top: "x" top: "label"
              dummy_data_param { shape { dim: 2 dim: 1 dim: 8 dim: 8 } shape { dim: 2 }
                                 data_filler { type: "gaussian" }
                                 data_filler { type: "constant" value: 1 } } }
      layer { name: "conv" type: "Convolution" bottom: "x" top: "conv"
              convolution_param { num_output: 3 kernel_size: 3
                                  weight_filler { type: "xavier" } } }
      layer { name: "pool" type: "Pooling" bottom: "conv" top: "pool"
              pooling_param { pool: MAX kernel_size: 2 stride: 2 } }
      layer { name: "relu" type: "ReLU" bottom: "pool" top: "pool" }
      layer { name: "ip" type: "InnerProduct" bottom: "pool" top: "ip"
              inner_product_param { num_output: 2 weight_filler { type: "xavier" } } }
      layer { name: "loss" type: "SoftmaxWithLoss" bottom: "ip" bottom: "label" top: "loss" }
    })");
  solver->Step(3);
  EXPECT_EQ(solver->iter(), 3);
  EXPECT_TRUE(std::isfinite(solver->smoothed_loss()));
  for (const std::string& line : MappedAmong(kLazyLibraries)) {
    ADD_FAILURE() << "a CPU run mapped a CUDA library: " << line;
  }
}

}  // namespace
}  // namespace demi

#endif  // CPU_ONLY
