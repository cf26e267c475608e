#include "demi/util/gpu_math.hpp"

namespace demi {

namespace {

thread_local GpuMath thread_gpu_math = GpuMath::kDeterministic;

}  // namespace

GpuMath CurrentGpuMath() { return thread_gpu_math; }

const char* Describe(GpuMath math) {
  return math == GpuMath::kTensorOps
             ? "TF32 tensor ops where the GPU has them, fastest measured cuDNN algorithms "
               "(--deterministic: plain FP32)"
             : "plain FP32, deterministic cuDNN algorithms";
}

GpuMathScope::GpuMathScope(GpuMath math) : previous_(thread_gpu_math) { thread_gpu_math = math; }

GpuMathScope::~GpuMathScope() { thread_gpu_math = previous_; }

}  // namespace demi
