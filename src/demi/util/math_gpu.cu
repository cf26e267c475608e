#include <limits>

#include "demi/common.hpp"
#include "demi/util/convert_gpu.hpp"
#include "demi/util/cuda_kernel.cuh"
#include "demi/util/gpu_math.hpp"
#include "demi/util/math_gpu.hpp"

namespace demi {

namespace {

/// cuBLAS takes int sizes; a layer past them is a user's net to reshape.
int BlasInt(int64_t value) {
  DEMI_CHECK(value <= std::numeric_limits<int>::max(), "a matrix dimension of ", value,
             " is past cuBLAS's 32-bit int (", std::numeric_limits<int>::max(),
             "): use a smaller batch or split the layer");
  return static_cast<int>(value);
}

/// cuBLAS's name for a stored type (the blobs' types, checked where they are set).
cudaDataType_t CublasType(Type type) {
  CHECK(type == FLOAT || type == FLOAT16 || type == BFLOAT16)
      << "cuBLAS matrices are stored in FLOAT, FLOAT16 or BFLOAT16 here";
  return type == FLOAT16 ? CUDA_R_16F : type == BFLOAT16 ? CUDA_R_16BF : CUDA_R_32F;
}

// kernels

__global__ void SetKernel(int64_t n, float value, float* y) {
  for (int64_t i = GridStart(); i < n; i += GridStride()) y[i] = value;
}

/// Set by ScalAllFiniteKernel where a result is not finite: one int per
/// device for the life of the program, so the solver's overflow check
/// allocates nothing per step (one solver updates a device at a time).
__device__ int scal_not_finite;

/// x *= a, and scal_not_finite = 1 where a result is not finite.
__global__ void ScalAllFiniteKernel(int64_t n, float alpha, float* x) {
  for (int64_t i = GridStart(); i < n; i += GridStride()) {
    const float v = x[i] * alpha;
    x[i] = v;
    if (!isfinite(v)) scal_not_finite = 1;
  }
}

__global__ void AddScalarKernel(int64_t n, float alpha, float* y) {
  for (int64_t i = GridStart(); i < n; i += GridStride()) y[i] += alpha;
}

__global__ void TanhGradientKernel(int64_t n, const float* y, const float* dy, float* dx) {
  for (int64_t i = GridStart(); i < n; i += GridStride()) dx[i] = dy[i] * (1.0f - y[i] * y[i]);
}

__global__ void ScaleRowsKernel(int64_t count, int64_t width, const float* scale, const float* in,
                                float* out) {
  for (int64_t i = GridStart(); i < count; i += GridStride()) out[i] = scale[i / width] * in[i];
}

__global__ void AddToRowsKernel(int64_t count, int64_t width, const float* row, float* y) {
  for (int64_t i = GridStart(); i < count; i += GridStride()) y[i] += row[i % width];
}

__global__ void SumRowsKernel(int64_t rows, int64_t width, const float* x, float* sum) {
  for (int64_t i = GridStart(); i < width; i += GridStride()) {
    float total = sum[i];
    for (int64_t r = 0; r < rows; ++r) total += x[r * width + i];
    sum[i] = total;
  }
}

/// *out += float(the sum of x[i] y[i] / divisor, in double): one block, its
/// threads' sums added in a fixed tree (deterministic). A loss times a large
/// loss scale may pass a float; divided by it, it does not.
__global__ void AddDotKernel(int64_t n, const float* x, const float* y, float divisor, float* out) {
  __shared__ double shared[kCudaThreads];
  double sum = 0;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) sum += static_cast<double>(x[i]) * y[i];
  const double total = BlockSum(sum, shared);
  if (threadIdx.x == 0) *out += static_cast<float>(total / divisor);
}

/// y[i] = op(a[i], b[i]) for the binary elementwise functions.
template <typename Op>
__global__ void BinaryKernel(int64_t n, const float* a, const float* b, float* y, Op op) {
  ElementwiseInto(n, y, [=](int64_t i) { return op(a[i], b[i]); });
}

/// y[i] = op(a[i]) for the unary elementwise functions.
template <typename Op>
__global__ void UnaryKernel(int64_t n, const float* a, float* y, Op op) {
  ElementwiseInto(n, y, [=](int64_t i) { return op(a[i]); });
}

struct AddOp {
  __device__ float operator()(float a, float b) const { return a + b; }
};
struct SubOp {
  __device__ float operator()(float a, float b) const { return a - b; }
};
struct MulOp {
  __device__ float operator()(float a, float b) const { return a * b; }
};
struct DivOp {
  __device__ float operator()(float a, float b) const { return a / b; }
};
struct PowxOp {
  float power;
  __device__ float operator()(float a) const { return powf(a, power); }
};
struct SqrOp {
  __device__ float operator()(float a) const { return a * a; }
};
struct ExpOp {
  __device__ float operator()(float a) const { return expf(a); }
};
struct LogOp {
  __device__ float operator()(float a) const { return logf(a); }
};
struct AbsOp {
  __device__ float operator()(float a) const { return fabsf(a); }
};
struct SignOp {
  __device__ float operator()(float a) const { return static_cast<float>((a > 0) - (a < 0)); }
};
struct TanhOp {
  __device__ float operator()(float a) const { return tanhf(a); }
};

// launchers

template <typename Op>
void LaunchBinary(int64_t n, const float* a, const float* b, float* y, Op op, const char* name) {
  if (n <= 0) return;
  BinaryKernel<<<ElementwiseBlocks(n), kCudaThreads, 0, CudaStream()>>>(n, a, b, y, op);
  CheckLaunch(name);
}

template <typename Op>
void LaunchUnary(int64_t n, const float* a, float* y, Op op, const char* name) {
  if (n <= 0) return;
  UnaryKernel<<<ElementwiseBlocks(n), kCudaThreads, 0, CudaStream()>>>(n, a, y, op);
  CheckLaunch(name);
}

/// This thread's cuBLAS handle, set to the thread's GPU math (gpu_math.hpp):
/// TF32 tensor ops for kTensorOps, cuBLAS's default FP32 math otherwise.
cublasHandle_t CublasHandleForMath() {
  cublasHandle_t handle = CublasHandle();
  DEMI_CUBLAS_CHECK(cublasSetMathMode(handle, CurrentGpuMath() == GpuMath::kTensorOps
                                                  ? CUBLAS_TF32_TENSOR_OP_MATH
                                                  : CUBLAS_DEFAULT_MATH));
  return handle;
}

}  // namespace

void GpuGemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
             const float* a, const float* b, float beta, float* c) {
  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T.
  const int lda = BlasInt(trans_a ? m : k);
  const int ldb = BlasInt(trans_b ? k : n);
  DEMI_CUBLAS_CHECK(cublasSgemm(CublasHandleForMath(), trans_b ? CUBLAS_OP_T : CUBLAS_OP_N,
                                trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, BlasInt(n), BlasInt(m),
                                BlasInt(k), &alpha, b, ldb, a, lda, &beta, c, BlasInt(n)));
}

void GpuGemmStored(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                   Type ab_type, const void* a, const void* b, float beta, Type c_type, void* c) {
  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T.
  const int lda = BlasInt(trans_a ? m : k);
  const int ldb = BlasInt(trans_b ? k : n);
  DEMI_CUBLAS_CHECK(cublasGemmEx(CublasHandle(), trans_b ? CUBLAS_OP_T : CUBLAS_OP_N,
                                 trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, BlasInt(n), BlasInt(m),
                                 BlasInt(k), &alpha, b, CublasType(ab_type), ldb, a,
                                 CublasType(ab_type), lda, &beta, c, CublasType(c_type), BlasInt(n),
                                 CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

void GpuGemv(bool trans_a, int64_t m, int64_t n, float alpha, const float* a, const float* x,
             float beta, float* y) {
  // Row-major M x N A is column-major N x M A^T: flip the transpose.
  DEMI_CUBLAS_CHECK(cublasSgemv(CublasHandleForMath(), trans_a ? CUBLAS_OP_N : CUBLAS_OP_T,
                                BlasInt(n), BlasInt(m), &alpha, a, BlasInt(n), x, 1, &beta, y, 1));
}

void GpuAxpy(int64_t n, float alpha, const float* x, float* y) {
  DEMI_CUBLAS_CHECK(cublasSaxpy(CublasHandle(), BlasInt(n), &alpha, x, 1, y, 1));
}

void GpuAxpby(int64_t n, float alpha, const float* x, float beta, float* y) {
  // As the CPU Axpby: beta 0 overwrites, so a NaN in an unset y never leaks.
  if (beta == 0.0f) {
    GpuSet(n, 0.0f, y);
  } else {
    GpuScal(n, beta, y);
  }
  GpuAxpy(n, alpha, x, y);
}

void GpuScal(int64_t n, float alpha, float* x) {
  DEMI_CUBLAS_CHECK(cublasSscal(CublasHandle(), BlasInt(n), &alpha, x, 1));
}

bool GpuScalAllFinite(int64_t n, float alpha, float* x) {
  if (n <= 0) return true;
  // The flag is read back once: the solver decides on the host whether to
  // update.
  const int zero = 0;
  DEMI_CUDA_CHECK(cudaMemcpyToSymbolAsync(scal_not_finite, &zero, sizeof(int), 0,
                                          cudaMemcpyHostToDevice, CudaStream()));
  ScalAllFiniteKernel<<<CudaBlocks(n), kCudaThreads, 0, CudaStream()>>>(n, alpha, x);
  CheckLaunch("ScalAllFiniteKernel");
  int not_finite = 0;
  DEMI_CUDA_CHECK(cudaMemcpyFromSymbolAsync(&not_finite, scal_not_finite, sizeof(int), 0,
                                            cudaMemcpyDeviceToHost, CudaStream()));
  DEMI_CUDA_CHECK(cudaStreamSynchronize(CudaStream()));
  return not_finite == 0;
}

void GpuCopy(int64_t n, const float* x, float* y) {
  if (x == y || n <= 0) return;
  DEMI_CUDA_CHECK(cudaMemcpyAsync(y, x, n * sizeof(float), cudaMemcpyDeviceToDevice, CudaStream()));
}

void GpuSet(int64_t n, float value, float* y) {
  if (n <= 0) return;
  if (value == 0.0f) {
    DEMI_CUDA_CHECK(cudaMemsetAsync(y, 0, n * sizeof(float), CudaStream()));
    return;
  }
  SetKernel<<<CudaBlocks(n), kCudaThreads, 0, CudaStream()>>>(n, value, y);
  CheckLaunch("SetKernel");
}

void GpuAddScalar(int64_t n, float alpha, float* y) {
  if (n <= 0) return;
  AddScalarKernel<<<CudaBlocks(n), kCudaThreads, 0, CudaStream()>>>(n, alpha, y);
  CheckLaunch("AddScalarKernel");
}

void GpuAdd(int64_t n, const float* a, const float* b, float* y) {
  LaunchBinary(n, a, b, y, AddOp(), "Add");
}
void GpuSub(int64_t n, const float* a, const float* b, float* y) {
  LaunchBinary(n, a, b, y, SubOp(), "Sub");
}
void GpuMul(int64_t n, const float* a, const float* b, float* y) {
  LaunchBinary(n, a, b, y, MulOp(), "Mul");
}
void GpuDiv(int64_t n, const float* a, const float* b, float* y) {
  LaunchBinary(n, a, b, y, DivOp(), "Div");
}
void GpuPowx(int64_t n, const float* a, float b, float* y) {
  LaunchUnary(n, a, y, PowxOp{b}, "Powx");
}
void GpuSqr(int64_t n, const float* a, float* y) { LaunchUnary(n, a, y, SqrOp(), "Sqr"); }
void GpuExp(int64_t n, const float* a, float* y) { LaunchUnary(n, a, y, ExpOp(), "Exp"); }
void GpuLog(int64_t n, const float* a, float* y) { LaunchUnary(n, a, y, LogOp(), "Log"); }
void GpuAbs(int64_t n, const float* a, float* y) { LaunchUnary(n, a, y, AbsOp(), "Abs"); }
void GpuSign(int64_t n, const float* a, float* y) { LaunchUnary(n, a, y, SignOp(), "Sign"); }
void GpuTanh(int64_t n, const float* a, float* y) { LaunchUnary(n, a, y, TanhOp(), "Tanh"); }

void GpuTanhGradient(int64_t n, const float* y, const float* dy, float* dx) {
  if (n <= 0) return;
  TanhGradientKernel<<<CudaBlocks(n), kCudaThreads, 0, CudaStream()>>>(n, y, dy, dx);
  CheckLaunch("TanhGradientKernel");
}

void GpuScaleRows(int64_t rows, int64_t width, const float* scale, const float* in, float* out) {
  const int64_t count = rows * width;
  if (count <= 0) return;
  ScaleRowsKernel<<<CudaBlocks(count), kCudaThreads, 0, CudaStream()>>>(count, width, scale, in,
                                                                        out);
  CheckLaunch("ScaleRowsKernel");
}

void GpuAddToRows(int64_t rows, int64_t width, const float* row, float* y) {
  const int64_t count = rows * width;
  if (count <= 0) return;
  AddToRowsKernel<<<CudaBlocks(count), kCudaThreads, 0, CudaStream()>>>(count, width, row, y);
  CheckLaunch("AddToRowsKernel");
}

void GpuSumRows(int64_t rows, int64_t width, const float* x, float* sum) {
  if (width <= 0) return;
  SumRowsKernel<<<CudaBlocks(width), kCudaThreads, 0, CudaStream()>>>(rows, width, x, sum);
  CheckLaunch("SumRowsKernel");
}

double GpuDot(int64_t n, const float* x, const float* y) {
  float result = 0;
  if (n > 0) DEMI_CUBLAS_CHECK(cublasSdot(CublasHandle(), BlasInt(n), x, 1, y, 1, &result));
  return result;
}

void GpuAddDot(int64_t n, const float* x, const float* y, float divisor, float* out) {
  if (n <= 0) return;
  Launch("AddDotKernel", 1, AddDotKernel, n, x, y, divisor, out);
}

double GpuAsum(int64_t n, const float* x) {
  float result = 0;
  if (n > 0) DEMI_CUBLAS_CHECK(cublasSasum(CublasHandle(), BlasInt(n), x, 1, &result));
  return result;
}

double GpuSumsq(int64_t n, const float* x) { return GpuDot(n, x, x); }

}  // namespace demi
