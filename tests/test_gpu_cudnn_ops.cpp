// The cuDNN engine of ReLU, Sigmoid, TanH and Softmax against the CPU
// reference, next to the CAFFE engine (the CUDA twins). Runs where a GPU
// exists; on builds without cuDNN both engines are the twins.
#include <string>

#include "gpu_test_util.hpp"

namespace demi {
namespace {

class GpuCudnnEngineTest : public ::testing::TestWithParam<std::string> {};

TEST_P(GpuCudnnEngineTest, ActivationsMatchTheCpu) {
  const std::string engine = GetParam();
  for (const char* type : {"ReLU", "Sigmoid", "TanH"}) {
    std::string param = std::string(type) == "ReLU"      ? "relu_param"
                        : std::string(type) == "Sigmoid" ? "sigmoid_param"
                                                         : "tanh_param";
    GpuCase c;
    c.layer = StrCat("name: 'a' type: '", type, "' ", param, " { engine: ", engine, " }");
    c.bottoms = {{2, 3, 5, 13}};
    // Keep away from ReLU's kink for the finite differences.
    c.fill = [](int, Blob* blob) {
      FillUniform(blob, 7, -2.0f, 2.0f);
      float* x = blob->mutable_cpu_data();
      for (int64_t i = 0; i < blob->count(); ++i) {
        if (std::abs(x[i]) < 0.05f) x[i] += 0.1f;
      }
    };
    SCOPED_TRACE(type);
    ExpectGpuMatchesCpu(c);
  }
}

TEST_P(GpuCudnnEngineTest, SoftmaxMatchesTheCpuOnEveryAxis) {
  for (int axis : {0, 1, 2}) {
    GpuCase c;
    c.layer = StrCat("name: 's' type: 'Softmax' softmax_param { axis: ", axis,
                     " engine: ", GetParam(), " }");
    c.bottoms = {{3, 13, 7}};
    SCOPED_TRACE(axis);
    ExpectGpuMatchesCpu(c);
  }
}

INSTANTIATE_TEST_SUITE_P(Engines, GpuCudnnEngineTest, ::testing::Values("CAFFE", "CUDNN"));

}  // namespace
}  // namespace demi
