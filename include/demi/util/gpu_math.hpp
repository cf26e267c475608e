#ifndef DEMI_UTIL_GPU_MATH_HPP_
#define DEMI_UTIL_GPU_MATH_HPP_
// The GPU FLOAT math (common.hpp's GpuMath) of the calls this host thread
// makes. Layers call the math library (GpuGemm...) without their Context, so
// Layer sets it around each of its GPU passes and the cuBLAS wrappers read
// it. Plain C++: CPU_ONLY builds compile it too.
#include "demi/common.hpp"

namespace demi {

/// The math this thread's cuBLAS calls use: kDeterministic outside any scope.
GpuMath CurrentGpuMath();

/// What `math` computes with, for the log.
const char* Describe(GpuMath math);

/// Sets this thread's GPU math until it goes out of scope (scopes nest).
class GpuMathScope {
 public:
  explicit GpuMathScope(GpuMath math);
  ~GpuMathScope();
  GpuMathScope(const GpuMathScope&) = delete;
  GpuMathScope& operator=(const GpuMathScope&) = delete;

 private:
  GpuMath previous_;
};

}  // namespace demi

#endif  // DEMI_UTIL_GPU_MATH_HPP_
