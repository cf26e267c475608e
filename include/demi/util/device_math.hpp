#ifndef DEMI_UTIL_DEVICE_MATH_HPP_
#define DEMI_UTIL_DEVICE_MATH_HPP_

// The math of util/math.hpp, util/math_gpu.hpp and util/im2col.hpp behind one
// name: each function takes the Device first and runs the host or the CUDA
// implementation, so a layer whose GPU path is only math calls writes its
// Forward and Backward once, on pointers from Blob::data_on(device) and the
// like. Results are those of the function called (the GPU twins agree with the
// host where util/math_gpu.hpp says so). A CPU_ONLY build has no device
// pointers (Blob::gpu_data refuses first), so it always runs the host code and
// references no CUDA symbol.

#include <cstdint>

#include "demi/common.hpp"
#include "demi/util/im2col.hpp"

namespace demi {

void Gemm(Device device, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
          const float* a, const float* b, float beta, float* c);
void Gemv(Device device, bool trans_a, int64_t m, int64_t n, float alpha, const float* a,
          const float* x, float beta, float* y);
void Axpy(Device device, int64_t n, float alpha, const float* x, float* y);
void Axpby(Device device, int64_t n, float alpha, const float* x, float beta, float* y);
void Scal(Device device, int64_t n, float alpha, float* x);
bool ScalAllFinite(Device device, int64_t n, float alpha, float* x);
void Copy(Device device, int64_t n, const float* x, float* y);
void Set(Device device, int64_t n, float value, float* y);
void AddScalar(Device device, int64_t n, float alpha, float* y);
void Add(Device device, int64_t n, const float* a, const float* b, float* y);
void Sub(Device device, int64_t n, const float* a, const float* b, float* y);
void Mul(Device device, int64_t n, const float* a, const float* b, float* y);
void Div(Device device, int64_t n, const float* a, const float* b, float* y);
void Powx(Device device, int64_t n, const float* a, float b, float* y);
void Sqr(Device device, int64_t n, const float* a, float* y);
void Exp(Device device, int64_t n, const float* a, float* y);
void Log(Device device, int64_t n, const float* a, float* y);
void Abs(Device device, int64_t n, const float* a, float* y);
void Tanh(Device device, int64_t n, const float* a, float* y);
void TanhGradient(Device device, int64_t n, const float* y, const float* dy, float* dx);

// Row operations (util/math.hpp) on a row-major `rows` x `width` matrix.
void ScaleRows(Device device, int64_t rows, int64_t width, const float* scale, const float* in,
               float* out);
void AddToRows(Device device, int64_t rows, int64_t width, const float* row, float* y);
void SumRows(Device device, int64_t rows, int64_t width, const float* x, float* sum);

/// Reductions: the host accumulates in double, cuBLAS in float.
double Dot(Device device, int64_t n, const float* x, const float* y);
double Asum(Device device, int64_t n, const float* x);
double Sumsq(Device device, int64_t n, const float* x);

void Im2col(Device device, const float* image, const ConvGeometry& g, float* columns);
void Col2im(Device device, const float* columns, const ConvGeometry& g, float* image);

}  // namespace demi

#endif  // DEMI_UTIL_DEVICE_MATH_HPP_
