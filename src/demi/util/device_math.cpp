#include "demi/util/device_math.hpp"

#include "demi/util/math.hpp"
#ifndef CPU_ONLY
#include "demi/util/math_gpu.hpp"
#endif

namespace demi {

// ON_DEVICE(device, F(args)) calls GpuF(args) on a GPU and F(args) on the
// host; the Gpu names exist only where CUDA is built in.
#ifdef CPU_ONLY
#define ON_DEVICE(device, call) (static_cast<void>(device), call)
#else
#define ON_DEVICE(device, call) ((device) == Device::kGPU ? Gpu##call : call)
#endif

void Gemm(Device device, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
          const float* a, const float* b, float beta, float* c) {
  ON_DEVICE(device, Gemm(trans_a, trans_b, m, n, k, alpha, a, b, beta, c));
}

void Gemv(Device device, bool trans_a, int64_t m, int64_t n, float alpha, const float* a,
          const float* x, float beta, float* y) {
  ON_DEVICE(device, Gemv(trans_a, m, n, alpha, a, x, beta, y));
}

void Axpy(Device device, int64_t n, float alpha, const float* x, float* y) {
  ON_DEVICE(device, Axpy(n, alpha, x, y));
}

void Axpby(Device device, int64_t n, float alpha, const float* x, float beta, float* y) {
  ON_DEVICE(device, Axpby(n, alpha, x, beta, y));
}

void Scal(Device device, int64_t n, float alpha, float* x) { ON_DEVICE(device, Scal(n, alpha, x)); }
bool ScalAllFinite(Device device, int64_t n, float alpha, float* x) {
  return ON_DEVICE(device, ScalAllFinite(n, alpha, x));
}
void Copy(Device device, int64_t n, const float* x, float* y) { ON_DEVICE(device, Copy(n, x, y)); }
void Set(Device device, int64_t n, float value, float* y) { ON_DEVICE(device, Set(n, value, y)); }

void AddScalar(Device device, int64_t n, float alpha, float* y) {
  ON_DEVICE(device, AddScalar(n, alpha, y));
}

void Add(Device device, int64_t n, const float* a, const float* b, float* y) {
  ON_DEVICE(device, Add(n, a, b, y));
}

void Sub(Device device, int64_t n, const float* a, const float* b, float* y) {
  ON_DEVICE(device, Sub(n, a, b, y));
}

void Mul(Device device, int64_t n, const float* a, const float* b, float* y) {
  ON_DEVICE(device, Mul(n, a, b, y));
}

void Div(Device device, int64_t n, const float* a, const float* b, float* y) {
  ON_DEVICE(device, Div(n, a, b, y));
}

void Powx(Device device, int64_t n, const float* a, float b, float* y) {
  ON_DEVICE(device, Powx(n, a, b, y));
}

void Sqr(Device device, int64_t n, const float* a, float* y) { ON_DEVICE(device, Sqr(n, a, y)); }
void Exp(Device device, int64_t n, const float* a, float* y) { ON_DEVICE(device, Exp(n, a, y)); }
void Log(Device device, int64_t n, const float* a, float* y) { ON_DEVICE(device, Log(n, a, y)); }
void Abs(Device device, int64_t n, const float* a, float* y) { ON_DEVICE(device, Abs(n, a, y)); }
void Tanh(Device device, int64_t n, const float* a, float* y) { ON_DEVICE(device, Tanh(n, a, y)); }

void TanhGradient(Device device, int64_t n, const float* y, const float* dy, float* dx) {
  ON_DEVICE(device, TanhGradient(n, y, dy, dx));
}

void ScaleRows(Device device, int64_t rows, int64_t width, const float* scale, const float* in,
               float* out) {
  ON_DEVICE(device, ScaleRows(rows, width, scale, in, out));
}

void AddToRows(Device device, int64_t rows, int64_t width, const float* row, float* y) {
  ON_DEVICE(device, AddToRows(rows, width, row, y));
}

void SumRows(Device device, int64_t rows, int64_t width, const float* x, float* sum) {
  ON_DEVICE(device, SumRows(rows, width, x, sum));
}

double Dot(Device device, int64_t n, const float* x, const float* y) {
  return ON_DEVICE(device, Dot(n, x, y));
}

double Asum(Device device, int64_t n, const float* x) { return ON_DEVICE(device, Asum(n, x)); }
double Sumsq(Device device, int64_t n, const float* x) { return ON_DEVICE(device, Sumsq(n, x)); }

void Im2col(Device device, const float* image, const ConvGeometry& g, float* columns) {
  ON_DEVICE(device, Im2col(image, g, columns));
}

void Col2im(Device device, const float* columns, const ConvGeometry& g, float* image) {
  ON_DEVICE(device, Col2im(columns, g, image));
}

#undef ON_DEVICE

}  // namespace demi
