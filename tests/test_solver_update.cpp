// Each update rule, a few steps on a tiny net, against values computed by
// hand; regularization, lr_mult/decay_mult, gradient clipping, iter_size and
// the solver registry.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "solver_test_util.hpp"

namespace demi {
namespace {

// loss = w . x + b with x = [1, -2]: the gradient is [1, -2] for w and 1 for
// b whatever w and b are, so the steps below are easy to follow by hand. w
// has lr_mult 1 and decay_mult 1; b has lr_mult 2 and decay_mult 0.
const char* kLinearSolver = R"(
  net_param {
    name: "linear"
    layer { name: "in" type: "Input" top: "x" input_param { shape { dim: 1 dim: 2 } } }
    layer { name: "ip" type: "InnerProduct" bottom: "x" top: "y" loss_weight: 1
            param { lr_mult: 1 decay_mult: 1 } param { lr_mult: 2 decay_mult: 0 }
            inner_product_param { num_output: 1 } }
  }
  lr_policy: "fixed"
  base_lr: 0.1
  snapshot_after_train: false
  random_seed: 1
)";

/// A solver on the linear net with w = [0.5, -0.25], b = 0.1 and input `x`.
std::unique_ptr<Solver> LinearSolver(const std::string& extra, std::vector<float> x = {1, -2}) {
  SolverParameter param = ParseText<SolverParameter>(kLinearSolver);
  param.MergeFrom(ParseText<SolverParameter>(extra));  // `extra` overrides
  auto solver = SolverRegistry::Create(param);
  FillValues(solver->net().input_blobs()[0], x);
  FillValues(solver->net().learnable_params()[0], {0.5f, -0.25f});
  FillValues(solver->net().learnable_params()[1], {0.1f});
  return solver;
}

/// [w0, w1, b] after training.
std::vector<float> Weights(const Solver& solver) { return AllParams(solver.net()); }

void ExpectNear(const std::vector<float>& actual, const std::vector<double>& expected,
                const std::string& what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_NEAR(actual[i], expected[i], 1e-5 * std::abs(expected[i]) + 1e-7)
        << what << " [" << i << "]";
  }
}

TEST(SolverUpdateTest, SGDWithMomentumAndL2) {
  auto solver = LinearSolver(R"(type: "SGD" momentum: 0.9 weight_decay: 0.01)");
  solver->Step(1);
  // g_w = x + 0.01 w = [1.005, -2.0025]; v = 0.1 g; w -= v.
  // b: decay_mult 0, lr 0.1 * 2: v = 0.2, b = 0.1 - 0.2.
  ExpectNear(Weights(*solver), {0.3995, -0.04975, -0.1}, "w after 1 step");
  ExpectNear(AllHistory(*solver), {0.1005, -0.20025, 0.2}, "v after 1 step");
  solver->Step(2);
  // Step 2: g = [1.003995, -2.0004975]; v = 0.9 v + 0.1 g = [0.1908495, -0.38027475].
  // Step 3: g = [1.002086505, -1.9966947525]; v = [0.2719732005, -0.54191675025].
  // b: v = 0.38 then 0.542; b = -0.48 then -1.022.
  ExpectNear(Weights(*solver), {-0.0633227005, 0.87244150025, -1.022}, "w after 3 steps");
  ExpectNear(AllHistory(*solver), {0.2719732005, -0.54191675025, 0.542}, "v after 3 steps");
  EXPECT_EQ(solver->iter(), 3);
}

TEST(SolverUpdateTest, SGDWithL1) {
  auto solver =
      LinearSolver(R"(type: "SGD" momentum: 0.9 weight_decay: 0.01 regularization_type: "L1")");
  solver->Step(3);
  // g_w = x + 0.01 sign(w): w keeps its signs for the first two steps, so
  // g = [1.01, -2.01] twice; after step 2 w1 > 0, so g = [1.01, -1.99].
  // v = [0.101, -0.201], [0.1919, -0.3819], [0.27371, -0.54271].
  ExpectNear(Weights(*solver), {-0.06661, 0.87561, -1.022}, "w");
  ExpectNear(AllHistory(*solver), {0.27371, -0.54271, 0.542}, "v");
}

TEST(SolverUpdateTest, Nesterov) {
  auto solver = LinearSolver(R"(type: "Nesterov" momentum: 0.9 weight_decay: 0.01)");
  solver->Step(1);
  // v = 0.1 g = [0.1005, -0.20025]; step = 1.9 v - 0.9 * 0 = [0.19095, -0.380475].
  ExpectNear(Weights(*solver), {0.30905, 0.130475, -0.28}, "w after 1 step");
  solver->Step(2);
  ExpectNear(Weights(*solver), {-0.3075274353, 1.359028547, -1.5098}, "w after 3 steps");
  ExpectNear(AllHistory(*solver), {0.2717202028, -0.5414126429, 0.542}, "v after 3 steps");
}

TEST(SolverUpdateTest, AdaGrad) {
  auto solver = LinearSolver(R"(type: "AdaGrad" delta: 0.1)");
  solver->Step(3);
  // Step t moves w by 0.1 g / (|g| sqrt(t) + 0.1): for g = 1,
  // 0.1 / 1.1 + 0.1 / (sqrt(2) + 0.1) + 0.1 / (sqrt(3) + 0.1).
  ExpectNear(Weights(*solver), {0.2884663875, -0.03035073373, -0.323067225}, "w");
  ExpectNear(AllHistory(*solver), {3, 12, 3}, "sum of squared gradients");
}

TEST(SolverUpdateTest, RMSProp) {
  auto solver = LinearSolver(R"(type: "RMSProp" rms_decay: 0.9)");
  solver->Step(3);
  // h = 0.1 g^2, 0.19 g^2, 0.271 g^2; steps 0.1 g / sqrt(h).
  ExpectNear(Weights(*solver), {-0.2377381685, 0.487738178, -1.375476337}, "w");
  ExpectNear(AllHistory(*solver), {0.271, 1.084, 0.271}, "mean square");
}

TEST(SolverUpdateTest, AdaDelta) {
  auto solver = LinearSolver(R"(type: "AdaDelta" base_lr: 1 momentum: 0.95 delta: 1e-6)");
  solver->Step(3);
  ExpectNear(Weights(*solver), {0.486431247, -0.2364311442, 0.07286249404}, "w");
  // Set 0: E[g^2] = 0.05, 0.0975, 0.142625 times g^2; set 1: E[step^2].
  ExpectNear(AllHistory(*solver),
             {0.142625, 0.5705, 0.142625, 2.91996944e-06, 2.920013723e-06, 2.91996944e-06},
             "history");
}

TEST(SolverUpdateTest, AdamWithBiasCorrection) {
  auto solver = LinearSolver(R"(type: "Adam" momentum: 0.9 momentum2: 0.999 delta: 1e-8)");
  solver->Step(1);
  // With bias correction the first step is lr * g / |g| (up to delta).
  ExpectNear(Weights(*solver), {0.4, -0.15, -0.1}, "w after 1 step");
  solver->Step(2);
  // A constant gradient keeps the corrected ratio at 1: three steps of lr.
  ExpectNear(Weights(*solver), {0.2000000723, 0.04999996387, -0.4999998555}, "w after 3 steps");
  // m = (1 - 0.9^3) g; v = (1 - 0.999^3) g^2.
  ExpectNear(AllHistory(*solver), {0.271, -0.542, 0.271, 0.002997001, 0.011988004, 0.002997001},
             "m and v");
}

TEST(SolverUpdateTest, ClipGradientsScalesToTheGlobalNorm) {
  // x = [3, 4]: the gradient [3, 4, 1] has norm sqrt(26).
  auto clipped = LinearSolver(R"(type: "SGD" clip_gradients: 1)", {3, 4});
  clipped->Step(1);
  const double norm = std::sqrt(26.0);
  ExpectNear(Weights(*clipped), {0.5 - 0.3 / norm, -0.25 - 0.4 / norm, 0.1 - 0.2 / norm},
             "clipped");
  auto unclipped = LinearSolver(R"(type: "SGD" clip_gradients: 10)", {3, 4});
  unclipped->Step(1);
  ExpectNear(Weights(*unclipped), {0.2, -0.65, -0.1}, "below the threshold");
}

TEST(SolverUpdateTest, LrMultZeroFreezesAParam) {
  auto solver = MakeSolver(R"(
    net_param {
      layer { name: "in" type: "Input" top: "x" input_param { shape { dim: 1 dim: 2 } } }
      layer { name: "ip" type: "InnerProduct" bottom: "x" top: "y" loss_weight: 1
              param { lr_mult: 0 } param { lr_mult: 1 }
              inner_product_param { num_output: 1 weight_filler { type: "constant" value: 2 } } }
    }
    type: "SGD" lr_policy: "fixed" base_lr: 0.5 weight_decay: 0.1 momentum: 0.9
    snapshot_after_train: false
  )");
  FillValues(solver->net().input_blobs()[0], {1, 1});
  solver->Step(2);
  EXPECT_EQ(DataOf(*solver->net().learnable_params()[0]), (std::vector<float>{2, 2}));
  // b (decay_mult 1): g = 1, v = 0.5, b = -0.5; g = 1 + 0.1 * -0.5 = 0.95,
  // v = 0.9 * 0.5 + 0.5 * 0.95 = 0.925, b = -1.425.
  EXPECT_NEAR(solver->net().learnable_params()[1]->cpu_data()[0], -1.425f, 1e-6);
}

// iter_size = k at batch b must give the params of iter_size = 1 at batch
// k * b: the loss is a mean over the batch (loss_weight 1 / batch), and the
// data layer draws the same stream in either case.
const char* kAccumulating = R"(
  net_param {
    layer { name: "data" type: "DummyData" top: "x"
            dummy_data_param { shape { dim: 0 dim: 3 }
                               data_filler { type: "uniform" min: -1 max: 1 } } }
    layer { name: "ip1" type: "InnerProduct" bottom: "x" top: "h"
            inner_product_param { num_output: 5 weight_filler { type: "gaussian" std: 0.5 }
                                  bias_filler { type: "constant" value: 0.1 } } }
    layer { name: "relu1" type: "ReLU" bottom: "h" top: "h" }
    layer { name: "ip2" type: "InnerProduct" bottom: "h" top: "y"
            inner_product_param { num_output: 2 weight_filler { type: "gaussian" std: 0.5 }
                                  bias_filler { type: "constant" value: 0.3 } } }
    layer { name: "relu2" type: "ReLU" bottom: "y" top: "loss" loss_weight: 0 }
  }
  lr_policy: "fixed" base_lr: 0.05 momentum: 0.9 weight_decay: 0.01
  snapshot_after_train: false random_seed: 5
)";

std::unique_ptr<Solver> AccumulatingSolver(const std::string& type, float clip, int batch,
                                           int iter_size) {
  SolverParameter param = ParseText<SolverParameter>(kAccumulating);
  NetParameter* net = param.mutable_net_param();
  net->mutable_layer(0)->mutable_dummy_data_param()->mutable_shape(0)->set_dim(0, batch);
  net->mutable_layer(4)->set_loss_weight(0, 1.0f / batch);
  param.set_type(type);
  param.set_iter_size(iter_size);
  param.set_clip_gradients(clip);
  auto solver = SolverRegistry::Create(param);
  solver->net().layer_by_name("data")->SeedRng(77);
  return solver;
}

TEST(SolverUpdateTest, IterSizeMatchesLargerBatch) {
  // Without clipping and with clipping at every step (-1: off).
  const std::vector<std::pair<std::string, float>> cases = {
      {"SGD", -1.0f}, {"Adam", -1.0f}, {"SGD", 0.05f}};
  for (const auto& [type, clip] : cases) {
    const std::string what = StrCat(type, " with clip_gradients ", clip);
    auto big = AccumulatingSolver(type, clip, 8, 1);
    auto accumulated = AccumulatingSolver(type, clip, 2, 4);
    const std::vector<float> initial = AllParams(big->net());
    ASSERT_EQ(AllParams(accumulated->net()), initial);
    big->Step(4);
    accumulated->Step(4);
    const std::vector<float> expected = AllParams(big->net());
    const std::vector<float> actual = AllParams(accumulated->net());
    ASSERT_EQ(actual.size(), expected.size());
    ASSERT_NE(expected, initial) << what << ": training changed nothing";
    for (size_t i = 0; i < expected.size(); ++i) {
      EXPECT_NEAR(actual[i], expected[i], 1e-6 * std::max(std::abs(expected[i]), 0.1f))
          << what << ", param value " << i;
    }
  }
}

TEST(SolverRegistryTest, KnowsEveryType) {
  const std::vector<std::string> types = SolverRegistry::Types();
  for (const char* type : {"SGD", "Nesterov", "AdaGrad", "RMSProp", "AdaDelta", "Adam"}) {
    EXPECT_NE(std::find(types.begin(), types.end(), type), types.end()) << type;
    auto solver = LinearSolver(StrCat("type: \"", type, "\""));
    EXPECT_STREQ(solver->type(), type);
    const size_t sets = std::string(type) == "AdaDelta" || std::string(type) == "Adam" ? 2 : 1;
    EXPECT_EQ(solver->history().size(), 2 * sets) << type;
  }
}

TEST(SolverRegistryTest, LegacySolverTypeMapsToType) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"SGD", "SGD"},         {"NESTEROV", "Nesterov"}, {"ADAGRAD", "AdaGrad"},
      {"RMSPROP", "RMSProp"}, {"ADADELTA", "AdaDelta"}, {"ADAM", "Adam"}};
  for (const auto& [legacy, type] : cases) {
    SolverParameter param = ParseText<SolverParameter>("solver_type: " + legacy);
    EXPECT_TRUE(UpgradeSolverAsNeeded("test", &param));
    EXPECT_EQ(param.type(), type);
    EXPECT_FALSE(param.has_solver_type());
    EXPECT_STREQ(LinearSolver("solver_type: " + legacy)->type(), type.c_str());
  }
  SolverParameter modern = ParseText<SolverParameter>(R"(type: "Adam")");
  EXPECT_FALSE(UpgradeSolverAsNeeded("test", &modern));
}

TEST(SolverRegistryTest, Errors) {
  ExpectErrorContaining([] { LinearSolver(R"(type: "Lion")"); },
                        {"unknown solver type 'Lion'",
                         "AdaDelta, AdaGrad, Adam, Nesterov, "
                         "RMSProp, SGD"});
  ExpectErrorContaining([] { LinearSolver(R"(type: "SGD" solver_type: ADAM)"); },
                        {"solver_type ADAM", "contradicts type \"SGD\""});
  ExpectErrorContaining([] { LinearSolver(R"(type: "AdaGrad" momentum: 0.9)"); },
                        {"AdaGrad", "momentum", "0.9"});
  ExpectErrorContaining([] { LinearSolver(R"(type: "RMSProp" momentum: 0.9)"); },
                        {"RMSProp", "momentum", "rms_decay"});
  ExpectErrorContaining([] { LinearSolver(R"(type: "RMSProp" rms_decay: 1)"); },
                        {"rms_decay in [0, 1)", "got 1"});
  ExpectErrorContaining([] { LinearSolver(R"(type: "Adam" momentum2: 1.5)"); },
                        {"momentum2", "got 1.5"});
  ExpectErrorContaining([] { LinearSolver(R"(regularization_type: "L3")"); },
                        {"regularization_type \"L3\"", "L1 or L2"});
  ExpectErrorContaining([] { LinearSolver("iter_size: 0"); }, {"iter_size", "got 0"});
}

}  // namespace
}  // namespace demi
