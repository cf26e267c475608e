// The fused GPU update of every rule against the CPU's pass, bit for bit:
// params pulled towards a constant target through a Euclidean loss, whose
// gradient (p - t) / n is element-wise, so CPU and GPU see the same
// gradients and any difference is the update's. The targets are xavier
// draws, which DummyData fills on the host on either device (its uniform and
// gaussian fills run on the GPU, from another generator). Skipped without a
// device.
#include "gpu_test_util.hpp"
#include "solver_test_util.hpp"

namespace demi {
namespace {

std::string TargetSolver(const std::string& type, const std::string& regularization) {
  const std::string hyper = type == "AdaGrad" || type == "RMSProp" ? "" : "momentum: 0.9";
  return StrCat(R"(
    net_param {
      layer { name: "w" type: "Parameter" top: "w" param { lr_mult: 1.5 decay_mult: 2 }
              parameter_param { shape { dim: 3 dim: 1001 } } }
      layer { name: "b" type: "Parameter" top: "b" param { lr_mult: 0.5 decay_mult: 0 }
              parameter_param { shape { dim: 3 dim: 1001 } } }
      layer { name: "sum" type: "Eltwise" bottom: "w" bottom: "b" top: "p" }
      layer { name: "t" type: "DummyData" top: "t"
              dummy_data_param { shape { dim: 3 dim: 1001 }
                                 data_filler { type: "xavier" } } }
      layer { name: "loss" type: "EuclideanLoss" bottom: "p" bottom: "t" top: "loss" }
    }
    type: ")",
                type, "\" ", hyper, R"( base_lr: 0.1 lr_policy: "step" gamma: 0.5 stepsize: 3
    weight_decay: 0.01 random_seed: 11 max_iter: 20 snapshot_after_train: false )",
                regularization);
}

std::unique_ptr<Solver> MakeSolverOn(const std::string& text, Device device) {
  SolverParameter param = ParseText<SolverParameter>(text);
  Context context;
  context.device = device;
  if (device == Device::kGPU) SetCurrentDevice(0);
  return SolverRegistry::Create(param, context);
}

class GpuSolverUpdateTest : public ::testing::TestWithParam<const char*> {};

TEST_P(GpuSolverUpdateTest, FusedKernelMatchesTheCpuPass) {
  if (!HaveGpu()) GTEST_SKIP() << "no CUDA device";
  for (const char* regularization : {"", R"(regularization_type: "L1")"}) {
    SCOPED_TRACE(StrCat(GetParam(), " ", regularization));
    auto cpu = MakeSolverOn(TargetSolver(GetParam(), regularization), Device::kCPU);
    auto gpu = MakeSolverOn(TargetSolver(GetParam(), regularization), Device::kGPU);
    ASSERT_EQ(AllParams(cpu->net()), AllParams(gpu->net()));
    for (int iter = 0; iter < 6; ++iter) {
      cpu->Step(1);
      gpu->Step(1);
      ASSERT_EQ(AllParams(gpu->net()), AllParams(cpu->net())) << "after iteration " << iter;
      ASSERT_EQ(AllHistory(*gpu), AllHistory(*cpu)) << "after iteration " << iter;
    }
    EXPECT_GT(cpu->net().learnable_params()[0]->asum_data(), 0.0) << "the params never moved";
  }
}

INSTANTIATE_TEST_SUITE_P(EveryRule, GpuSolverUpdateTest,
                         ::testing::Values("SGD", "Nesterov", "AdaGrad", "RMSProp", "AdaDelta",
                                           "Adam"));

}  // namespace
}  // namespace demi
