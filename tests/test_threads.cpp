#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "demi/util/im2col.hpp"
#include "demi/util/math.hpp"
#include "demi/util/threads.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

/// Bit patterns, so that -0 vs 0 and NaN payloads count as differences.
std::vector<uint32_t> Bits(const std::vector<float>& values) {
  std::vector<uint32_t> bits(values.size());
  if (!values.empty()) std::memcpy(bits.data(), values.data(), values.size() * sizeof(float));
  return bits;
}

/// Runs threaded code on 1 and on 2 threads (also on a 1-core machine:
/// OpenMP starts the threads asked for) and restores the settings after.
class ThreadsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    omp_threads_ = omp_get_max_threads();
    blas_threads_ = BlasThreads();
  }
  void TearDown() override {
    omp_set_num_threads(omp_threads_);
    SetBlasThreads(blas_threads_);
  }

  /// fn's output with `threads` threads, run twice: the runs must agree bit
  /// for bit (a fixed thread count repeats exactly).
  static std::vector<float> Run(int threads, const std::function<std::vector<float>()>& fn) {
    SetThreads(threads);
    const std::vector<float> first = fn();
    EXPECT_EQ(Bits(first), Bits(fn())) << "two runs on " << threads << " thread(s) differ";
    return first;
  }
  /// fn on 1 and 2 threads equals `expected` (the serial reference) bit for bit.
  static void ExpectSameOnOneAndTwoThreads(const std::vector<float>& expected,
                                           const std::function<std::vector<float>()>& fn,
                                           const std::string& what) {
    EXPECT_EQ(Bits(Run(1, fn)), Bits(expected)) << what << " on 1 thread";
    EXPECT_EQ(Bits(Run(2, fn)), Bits(expected)) << what << " on 2 threads";
  }

  int omp_threads_ = 1;
  int blas_threads_ = 1;
};

/// Sizes above the parallel threshold, and odd so blocks end mid-vector.
constexpr int64_t kN = 3 * kMinParallelWork + 13;

std::vector<float> Gaussian(int64_t n, uint32_t seed) {
  Blob blob({n});
  FillGaussian(&blob, seed);
  return DataOf(blob);
}

TEST_F(ThreadsTest, SetThreadsGovernsOpenMpAndBlas) {
  // OpenBLAS gets the threads when it runs the GEMMs, else one.
  const bool blas_from_env = std::getenv("OPENBLAS_NUM_THREADS") != nullptr;
  const GemmLibrary library = CurrentGemmLibrary();
  for (GemmLibrary gemm : {GemmLibrary::kOpenBlas, GemmLibrary::kDnnl}) {
    SetGemmLibrary(gemm);
    for (int n : {1, 2}) {
      SetThreads(n);
      EXPECT_EQ(Threads(), n);
      if (!blas_from_env) {
        EXPECT_EQ(BlasThreads(), gemm == GemmLibrary::kOpenBlas ? n : 1);
      }
    }
  }
  SetGemmLibrary(library);
  SetThreads(0);
  EXPECT_EQ(Threads(), DefaultThreads());
}

TEST_F(ThreadsTest, StartThreadGivesTheNewThreadTheCallersThreads) {
  // One more than OpenMP's default for new threads, so inheriting it shows.
  const int wanted = DefaultThreads() + 1;
  omp_set_num_threads(wanted);
  int seen = 0;
  StartThread([&seen] { seen = omp_get_max_threads(); }).join();
  EXPECT_EQ(seen, wanted);
  int plain = 0;
  std::thread([&plain] { plain = omp_get_max_threads(); }).join();
  EXPECT_NE(plain, wanted) << "a plain thread no longer starts from OpenMP's default";
}

TEST_F(ThreadsTest, DefaultThreadsIsOmpNumThreadsElseTheCores) {
  const char* saved = std::getenv("OMP_NUM_THREADS");
  const std::string before = saved ? saved : "";
  setenv("OMP_NUM_THREADS", "3", 1);
  EXPECT_EQ(DefaultThreads(), 3);
  setenv("OMP_NUM_THREADS", "5,2", 1);  // nested levels: the first is ours
  EXPECT_EQ(DefaultThreads(), 5);
  unsetenv("OMP_NUM_THREADS");
  EXPECT_EQ(DefaultThreads(), omp_get_num_procs());
  if (saved) setenv("OMP_NUM_THREADS", before.c_str(), 1);
}

TEST_F(ThreadsTest, ParallelForCoversEveryItemOnceInOneBlockPerThread) {
  SetThreads(2);
  std::vector<int> hits(kN, 0);
  std::vector<int> thread_of(kN, -1);
  ParallelFor(kN, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      ++hits[i];
      thread_of[i] = omp_get_thread_num();
    }
  });
  EXPECT_EQ(std::set<int>(hits.begin(), hits.end()), std::set<int>{1});
  // Two contiguous blocks, split in the middle, thread 0 first.
  EXPECT_EQ(thread_of.front(), 0);
  EXPECT_EQ(thread_of[kN / 2 - 1], 0);
  EXPECT_EQ(thread_of[kN / 2], 1);
  EXPECT_EQ(thread_of.back(), 1);
}

TEST_F(ThreadsTest, ParallelForRunsSmallLoopsOnTheCallingThread) {
  SetThreads(2);
  int calls = 0;
  bool in_parallel = true;
  ParallelFor(kMinParallelWork + 1, [&](int64_t begin, int64_t end) {
    ++calls;
    in_parallel = omp_in_parallel();
    EXPECT_EQ(begin, 0);
    EXPECT_EQ(end, kMinParallelWork + 1);
  });
  EXPECT_EQ(calls, 1);
  EXPECT_FALSE(in_parallel);
  // Planes of 4096 elements: 8 planes per thread at least.
  std::vector<int64_t> blocks;
  ParallelFor(9, GrainFor(4096), [&](int64_t begin, int64_t) { blocks.push_back(begin); });
  EXPECT_EQ(blocks, (std::vector<int64_t>{0}));
}

TEST_F(ThreadsTest, ElementWiseMathIsBitExactOnOneAndTwoThreads) {
  const std::vector<float> a = Gaussian(kN, 1), b = Gaussian(kN, 2);
  std::vector<float> positive(kN), nonzero(kN);
  for (int64_t i = 0; i < kN; ++i) {
    positive[i] = std::fabs(a[i]) + 0.5f;
    nonzero[i] = b[i] >= 0 ? b[i] + 0.25f : b[i] - 0.25f;
  }
  const float alpha = 0.37f, beta = -1.3f;
  // Each helper against its plain serial loop.
  struct Case {
    const char* name;
    std::function<float(int64_t)> expected;
    std::function<void(float*)> run;  // writes kN floats, starting from b
  };
  const std::vector<Case> cases = {
      {"Axpy", [&](int64_t i) { return b[i] + alpha * a[i]; },
       [&](float* y) { Axpy(kN, alpha, a.data(), y); }},
      {"Axpby", [&](int64_t i) { return alpha * a[i] + beta * b[i]; },
       [&](float* y) { Axpby(kN, alpha, a.data(), beta, y); }},
      {"Axpby beta 0", [&](int64_t i) { return alpha * a[i]; },
       [&](float* y) { Axpby(kN, alpha, a.data(), 0.0f, y); }},
      {"Scal", [&](int64_t i) { return alpha * b[i]; }, [&](float* y) { Scal(kN, alpha, y); }},
      {"AddScalar", [&](int64_t i) { return b[i] + alpha; },
       [&](float* y) { AddScalar(kN, alpha, y); }},
      {"Add", [&](int64_t i) { return a[i] + b[i]; }, [&](float* y) { Add(kN, a.data(), y, y); }},
      {"Sub", [&](int64_t i) { return a[i] - b[i]; }, [&](float* y) { Sub(kN, a.data(), y, y); }},
      {"Mul", [&](int64_t i) { return a[i] * b[i]; }, [&](float* y) { Mul(kN, a.data(), y, y); }},
      {"Div", [&](int64_t i) { return a[i] / nonzero[i]; },
       [&](float* y) { Div(kN, a.data(), nonzero.data(), y); }},
      {"Sqr", [&](int64_t i) { return a[i] * a[i]; }, [&](float* y) { Sqr(kN, a.data(), y); }},
      {"Abs", [&](int64_t i) { return std::fabs(a[i]); }, [&](float* y) { Abs(kN, a.data(), y); }},
      {"Exp", [&](int64_t i) { return std::exp(a[i]); }, [&](float* y) { Exp(kN, a.data(), y); }},
      {"Log", [&](int64_t i) { return std::log(positive[i]); },
       [&](float* y) { Log(kN, positive.data(), y); }},
      {"Powx", [&](int64_t i) { return std::pow(positive[i], 1.7f); },
       [&](float* y) { Powx(kN, positive.data(), 1.7f, y); }},
      {"Tanh", [&](int64_t i) { return std::tanh(a[i]); },
       [&](float* y) { Tanh(kN, a.data(), y); }},
      {"TanhGradient", [&](int64_t i) { return b[i] * (1.0f - a[i] * a[i]); },
       [&](float* y) { TanhGradient(kN, a.data(), y, y); }},
      {"Set", [&](int64_t) { return alpha; }, [&](float* y) { Set(kN, alpha, y); }},
      {"Copy", [&](int64_t i) { return a[i]; }, [&](float* y) { Copy(kN, a.data(), y); }},
  };
  for (const Case& c : cases) {
    std::vector<float> expected(kN);
    for (int64_t i = 0; i < kN; ++i) expected[i] = c.expected(i);
    ExpectSameOnOneAndTwoThreads(
        expected,
        [&] {
          std::vector<float> y = b;
          c.run(y.data());
          return y;
        },
        c.name);
  }
}

TEST_F(ThreadsTest, RowOperationsAreBitExactOnOneAndTwoThreads) {
  const int64_t rows = 517, width = 389;  // above the threshold, odd
  const std::vector<float> x = Gaussian(rows * width, 3), row = Gaussian(width, 4);
  const std::vector<float> scale = Gaussian(rows, 5), start = Gaussian(width, 6);
  std::vector<float> scaled(rows * width), added(rows * width), sums = start;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t i = 0; i < width; ++i) {
      scaled[r * width + i] = scale[r] * x[r * width + i];
      added[r * width + i] = x[r * width + i] + row[i];
      sums[i] += x[r * width + i];  // rows in order
    }
  }
  ExpectSameOnOneAndTwoThreads(
      scaled,
      [&] {
        std::vector<float> out(rows * width);
        ScaleRows(rows, width, scale.data(), x.data(), out.data());
        return out;
      },
      "ScaleRows");
  ExpectSameOnOneAndTwoThreads(
      added,
      [&] {
        std::vector<float> y = x;
        AddToRows(rows, width, row.data(), y.data());
        return y;
      },
      "AddToRows");
  ExpectSameOnOneAndTwoThreads(
      sums,
      [&] {
        std::vector<float> sum = start;
        SumRows(rows, width, x.data(), sum.data());
        return sum;
      },
      "SumRows");
}

TEST_F(ThreadsTest, Im2colAndCol2imAreBitExactOnOneAndTwoThreads) {
  // Padding, stride 2 in both axes and dilation: every branch of the walk.
  ConvGeometry g{37, 65, 63, 3, 4, 2, 3, 2, 2, 1, 2};
  const int64_t out_h = g.output_h(), out_w = g.output_w();
  const int64_t rows = g.channels * g.kernel_h * g.kernel_w;
  ASSERT_GT(rows * out_h * out_w, 2 * kMinParallelWork);
  const std::vector<float> image = Gaussian(g.channels * g.height * g.width, 7);
  const std::vector<float> columns = Gaussian(rows * out_h * out_w, 8);
  // References by the definition, adding in (c, kh, kw, oh, ow) order.
  std::vector<float> unfolded(columns.size()), folded(image.size(), 0.0f);
  int64_t col = 0;
  for (int64_t c = 0; c < g.channels; ++c) {
    for (int64_t kh = 0; kh < g.kernel_h; ++kh) {
      for (int64_t kw = 0; kw < g.kernel_w; ++kw) {
        for (int64_t oh = 0; oh < out_h; ++oh) {
          for (int64_t ow = 0; ow < out_w; ++ow, ++col) {
            const int64_t ih = oh * g.stride_h - g.pad_h + kh * g.dilation_h;
            const int64_t iw = ow * g.stride_w - g.pad_w + kw * g.dilation_w;
            const bool inside = ih >= 0 && ih < g.height && iw >= 0 && iw < g.width;
            const int64_t at = (c * g.height + ih) * g.width + iw;
            unfolded[col] = inside ? image[at] : 0.0f;
            if (inside) folded[at] += columns[col];
          }
        }
      }
    }
  }
  ExpectSameOnOneAndTwoThreads(
      unfolded,
      [&] {
        std::vector<float> out(columns.size(), kNaN);
        Im2col(image.data(), g, out.data());
        return out;
      },
      "Im2col");
  ExpectSameOnOneAndTwoThreads(
      folded,
      [&] {
        std::vector<float> out(image.size(), kNaN);
        Col2im(columns.data(), g, out.data());
        return out;
      },
      "Col2im");
}

/// A layer's forward top and backward bottom diff (and param diffs) on x,
/// with `engine` for a layer whose param names none.
std::vector<float> ForwardBackward(const std::string& prototxt, const std::vector<int64_t>& shape,
                                   bool in_place, EngineKind engine = EngineKind::kDefault) {
  Blob x(shape), y;
  FillGaussian(&x, 11);
  std::vector<Blob*> bottom{&x}, top{in_place ? &x : &y};
  auto layer = MakeLayer(prototxt);
  Context context;
  context.engine = engine;
  layer->set_context(context);
  layer->SetUp(bottom, top);
  layer->Forward(bottom, top);
  std::vector<float> out = DataOf(*top[0]);
  Blob dy(top[0]->shape());
  FillGaussian(&dy, 12);
  Copy(dy.count(), dy.cpu_data(), top[0]->mutable_cpu_diff());
  for (auto& blob : layer->blobs()) Set(blob->count(), 0.0f, blob->mutable_cpu_diff());
  layer->Backward(top, {true}, bottom);
  const std::vector<float> dx = DiffOf(*bottom[0]);
  out.insert(out.end(), dx.begin(), dx.end());
  for (auto& blob : layer->blobs()) {
    const std::vector<float> diff = DiffOf(*blob);
    out.insert(out.end(), diff.begin(), diff.end());
  }
  return out;
}

TEST_F(ThreadsTest, ThreadedLayersGiveTheSameBitsOnOneAndTwoThreads) {
  // Shapes above the threshold with odd sizes. BatchNorm's, Scale's and
  // Bias's sums run per channel in a fixed order, so they too are bit-exact.
  const std::vector<int64_t> shape{3, 37, 29, 31};
  const std::vector<std::pair<std::string, bool>> layers = {
      {R"(type: "ReLU" relu_param { negative_slope: 0.1 })", true},
      {R"(type: "ReLU")", false},
      {R"(type: "BatchNorm")", true},
      {R"(type: "BatchNorm" batch_norm_param { use_global_stats: false })", false},
      {R"(type: "Scale" scale_param { bias_term: true
           filler { type: "gaussian" } bias_filler { type: "gaussian" } })",
       true},
      {R"(type: "Bias" bias_param { filler { type: "gaussian" } })", false},
      {R"(type: "Pooling" pooling_param { pool: MAX kernel_size: 3 stride: 2 pad: 1 })", false},
      {R"(type: "Pooling" pooling_param { pool: AVE kernel_size: 3 stride: 2 pad: 1 })", false},
      {R"(type: "Sigmoid")", false},
      {R"(type: "ELU")", true},
      {R"(type: "Swish")", false},
      {R"(type: "AbsVal")", false},
      {R"(type: "Convolution" convolution_param { engine: CAFFE num_output: 5 kernel_size: 3 pad: 1
           weight_filler { type: "gaussian" } bias_filler { type: "gaussian" } })",
       false},
      {R"(type: "InnerProduct" inner_product_param { num_output: 7
           weight_filler { type: "gaussian" } bias_filler { type: "gaussian" } })",
       false},
  };
  // The GEMMs (the convolution and inner product cases) run on OpenBLAS on
  // one thread: on two, and in oneDNN's sgemm on CPUs without AVX-512 (seen
  // on an AVX2 EPYC) at any count, a skinny product's sums are split among
  // threads. For the same reason InnerProduct runs the CAFFE engine, not
  // oneDNN's primitive.
  const GemmLibrary library = CurrentGemmLibrary();
  SetGemmLibrary(GemmLibrary::kOpenBlas);
  const auto run = [&](const std::string& prototxt, bool in_place) {
    SetBlasThreads(1);
    const bool inner_product = prototxt.find("InnerProduct") != std::string::npos;
    return ForwardBackward(prototxt, shape, in_place,
                           inner_product ? EngineKind::kCaffe : EngineKind::kDefault);
  };
  for (const auto& [prototxt, in_place] : layers) {
    const std::vector<float> one = Run(1, [&] { return run(prototxt, in_place); });
    const std::vector<float> two = Run(2, [&] { return run(prototxt, in_place); });
    EXPECT_EQ(Bits(one), Bits(two)) << prototxt;
  }
  SetGemmLibrary(library);
}

}  // namespace
}  // namespace demi
