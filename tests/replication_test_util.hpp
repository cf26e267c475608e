#ifndef DEMI_TESTS_REPLICATION_TEST_UTIL_HPP_
#define DEMI_TESTS_REPLICATION_TEST_UTIL_HPP_

#include <algorithm>
#include <cmath>
#include <string>

#include "demi/net.hpp"
#include "demi/util/math.hpp"
#include "demi/util/threads.hpp"
#include "solver_test_util.hpp"
#include "test_util.hpp"

namespace demi {
// Each test file gets its own copy of these helpers.
namespace {

/// Caffe's LeNet solver and net (no BatchNorm) reading `source` (an LMDB of
/// 1 x 28 x 28 images) in batches of `batch`, for 50 iterations. base_lr is
/// 0.001: training amplifies float summation differences (a max pooling or
/// ReLU flip is a jump); at 0.01 LeNet's biases differed by up to 5e-4
/// relative between 1 x 64 and 2 x 32 after 50 iterations, at 0.001 by
/// about 1e-7. `extra` adds solver fields.
inline std::string LeNetSolver(const std::string& source, int batch,
                               const std::string& extra = "") {
  return StrCat(R"(
    base_lr: 0.001 momentum: 0.9 weight_decay: 0.0005
    lr_policy: "inv" gamma: 0.0001 power: 0.75
    max_iter: 50 display: 10 random_seed: 1701 snapshot_after_train: false )",
                extra, R"(
    net_param {
      name: "LeNet"
      layer { name: "mnist" type: "Data" top: "data" top: "label"
              transform_param { scale: 0.00390625 }
              data_param { source: ")",
                source, R"(" batch_size: )", batch, R"( backend: LMDB } }
      layer { name: "conv1" type: "Convolution" bottom: "data" top: "conv1"
              convolution_param { num_output: 20 kernel_size: 5 weight_filler { type: "xavier" } } }
      layer { name: "pool1" type: "Pooling" bottom: "conv1" top: "pool1"
              pooling_param { pool: MAX kernel_size: 2 stride: 2 } }
      layer { name: "conv2" type: "Convolution" bottom: "pool1" top: "conv2"
              convolution_param { num_output: 50 kernel_size: 5 weight_filler { type: "xavier" } } }
      layer { name: "pool2" type: "Pooling" bottom: "conv2" top: "pool2"
              pooling_param { pool: MAX kernel_size: 2 stride: 2 } }
      layer { name: "ip1" type: "InnerProduct" bottom: "pool2" top: "ip1"
              inner_product_param { num_output: 500 weight_filler { type: "xavier" } } }
      layer { name: "relu1" type: "ReLU" bottom: "ip1" top: "ip1" }
      layer { name: "ip2" type: "InnerProduct" bottom: "ip1" top: "ip2"
              inner_product_param { num_output: 10 weight_filler { type: "xavier" } } }
      layer { name: "loss" type: "SoftmaxWithLoss" bottom: "ip2" bottom: "label" top: "loss" }
    })");
}

/// Over the learnable params: the largest |a - b| / |a| of one blob (L2).
inline double WorstRelativeDifference(const Net& reference, const Net& other) {
  double worst = 0;
  const auto& a = reference.learnable_params();
  const auto& b = other.learnable_params();
  EXPECT_EQ(a.size(), b.size());
  for (size_t p = 0; p < a.size() && p < b.size(); ++p) {
    double diff = 0, norm = 0;
    for (int64_t i = 0; i < a[p]->count(); ++i) {
      const double d = a[p]->cpu_data()[i] - b[p]->cpu_data()[i];
      diff += d * d;
      norm += static_cast<double>(a[p]->cpu_data()[i]) * a[p]->cpu_data()[i];
    }
    worst = std::max(worst, std::sqrt(diff / std::max(norm, 1e-30)));
  }
  return worst;
}

/// The params of dir/run_iter_50.caffemodel, trained by ranks from
/// LeNetSolver(dir/db, ...) with solver fields `engine`, are those one
/// process trains on one thread (OpenMP and OpenBLAS, as each rank did:
/// oneDNN's convolutions sum in an order that depends on the threads) with
/// batch 64 for 50 iterations; and training moved them.
inline void ExpectSnapshotMatchesOneThread(const ScratchDir& dir, const std::string& engine) {
  const int blas_threads = BlasThreads();
  const int omp_threads = Threads();
  SetThreads(1);
  auto reference = MakeSolver(LeNetSolver(dir.file("db"), 64, engine));
  reference->Solve();
  omp_set_num_threads(omp_threads);
  SetBlasThreads(blas_threads);
  auto trained = MakeSolver(LeNetSolver(dir.file("db"), 64, engine));
  trained->CopyWeights(dir.file("run_iter_50.caffemodel"));
  EXPECT_LT(WorstRelativeDifference(reference->net(), trained->net()), 1e-5);
  auto untrained = MakeSolver(LeNetSolver(dir.file("db"), 64, engine));
  EXPECT_GT(WorstRelativeDifference(untrained->net(), trained->net()), 1e-2);
}

}  // namespace
}  // namespace demi

#endif  // DEMI_TESTS_REPLICATION_TEST_UTIL_HPP_
