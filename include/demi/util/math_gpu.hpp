#ifndef DEMI_UTIL_MATH_GPU_HPP_
#define DEMI_UTIL_MATH_GPU_HPP_

// The device twins of util/math.hpp: same names with a Gpu prefix, same
// row-major conventions, pointers to device memory of the current device,
// work queued on this thread's stream (util/cuda.hpp). BLAS goes through
// cuBLAS; the elementwise functions are grid-stride kernels (math_gpu.cu).
// Reductions return to the host, so they wait for the stream.
#ifndef CPU_ONLY

#include <cstdint>

namespace demi {

/// C = alpha * op(A) * op(B) + beta * C, with op(A) M x K and op(B) K x N.
void GpuGemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
             const float* a, const float* b, float beta, float* c);
/// y = alpha * op(A) * x + beta * y, with A M x N.
void GpuGemv(bool trans_a, int64_t m, int64_t n, float alpha, const float* a, const float* x,
             float beta, float* y);
void GpuAxpy(int64_t n, float alpha, const float* x, float* y);  ///< y += a x
void GpuAxpby(int64_t n, float alpha, const float* x, float beta, float* y);
void GpuScal(int64_t n, float alpha, float* x);           ///< x *= a
bool GpuScalAllFinite(int64_t n, float alpha, float* x);  ///< ScalAllFinite
void GpuCopy(int64_t n, const float* x, float* y);
void GpuSet(int64_t n, float value, float* y);
void GpuAddScalar(int64_t n, float alpha, float* y);  ///< y += a
void GpuAdd(int64_t n, const float* a, const float* b, float* y);
void GpuSub(int64_t n, const float* a, const float* b, float* y);
void GpuMul(int64_t n, const float* a, const float* b, float* y);
void GpuDiv(int64_t n, const float* a, const float* b, float* y);
void GpuPowx(int64_t n, const float* a, float b, float* y);
void GpuSqr(int64_t n, const float* a, float* y);
void GpuExp(int64_t n, const float* a, float* y);
void GpuLog(int64_t n, const float* a, float* y);
void GpuAbs(int64_t n, const float* a, float* y);
void GpuSign(int64_t n, const float* a, float* y);  ///< -1, 0 or 1
void GpuTanh(int64_t n, const float* a, float* y);
void GpuTanhGradient(int64_t n, const float* y, const float* dy, float* dx);
void GpuScaleRows(int64_t rows, int64_t width, const float* scale, const float* in, float* out);
void GpuAddToRows(int64_t rows, int64_t width, const float* row, float* y);
/// One thread per column, adding the rows in order: the CPU's sum, bit for bit.
void GpuSumRows(int64_t rows, int64_t width, const float* x, float* sum);

/// Reductions, accumulated by cuBLAS in float and returned as double.
double GpuDot(int64_t n, const float* x, const float* y);
double GpuAsum(int64_t n, const float* x);
double GpuSumsq(int64_t n, const float* x);
/// *out += float(sum of x[i] y[i]) / divisor, all on the device (nothing
/// read back): a layer's loss added into a pending loss. One block: for the
/// few elements of loss tops.
void GpuAddDot(int64_t n, const float* x, const float* y, float divisor, float* out);

}  // namespace demi

#endif  // CPU_ONLY
#endif  // DEMI_UTIL_MATH_GPU_HPP_
