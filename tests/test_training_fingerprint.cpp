// What ranks compare when they join: the solver fields that must agree, the
// built train net, the data shard layout.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>

#include "data_test_util.hpp"
#include "demi/net.hpp"
#include "demi/parallel/training_fingerprint.hpp"
#include "solver_test_util.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

const char* kSolver = R"(base_lr: 0.01 lr_policy: "fixed" max_iter: 100 display: 10
                         snapshot_prefix: "/a/run" net: "/a/net.prototxt")";

/// The fingerprint of kSolver after `change`.
Fingerprint SolverPrint(const std::function<void(SolverParameter*)>& change = nullptr,
                        const std::string& replicas = "1 on the CPU") {
  SolverParameter param = ParseText<SolverParameter>(kSolver);
  if (change) change(&param);
  return RunFingerprint(param, replicas);
}

TEST(TrainingFingerprintTest, SolverFieldsThatDecideTheRunMustAgree) {
  const Fingerprint reference = SolverPrint();
  EXPECT_EQ(
      FirstDifference(reference, SolverPrint([](SolverParameter* p) { p->set_max_iter(200); })),
      "solver.max_iter (100 vs 200)");
  EXPECT_EQ(
      FirstDifference(reference, SolverPrint([](SolverParameter* p) { p->set_base_lr(0.1f); })),
      "solver.base_lr (0.01 vs 0.1)");
  EXPECT_EQ(
      FirstDifference(reference, SolverPrint([](SolverParameter* p) { p->set_type("Adam"); })),
      "solver.type (\"SGD\" vs \"Adam\")");
  // Unset on one side compares as its default.
  EXPECT_EQ(
      FirstDifference(reference, SolverPrint([](SolverParameter* p) { p->set_test_interval(5); })),
      "solver.test_interval (0 vs 5)");
  EXPECT_EQ(FirstDifference(reference, SolverPrint(nullptr, "2 on the CPU")),
            "replicas per rank (1 on the CPU vs 2 on the CPU)");
}

TEST(TrainingFingerprintTest, PathsAndRankZerosOwnFieldsMayDiffer) {
  EXPECT_EQ(FirstDifference(SolverPrint(), SolverPrint([](SolverParameter* p) {
                              p->set_snapshot_prefix("/b/run");
                              p->set_net("/b/net.prototxt");
                              p->add_test_iter(5);
                              p->set_device_id(1);
                              p->set_debug_info(true);
                              p->set_average_loss(10);
                            })),
            "");
}

TEST(TrainingFingerprintTest, LegacySolverTypeComparesAsItsUpgrade) {
  EXPECT_EQ(FirstDifference(
                SolverPrint([](SolverParameter* p) { p->set_solver_type(SolverParameter::ADAM); }),
                SolverPrint([](SolverParameter* p) { p->set_type("Adam"); })),
            "");
}

std::string SmallNet(const std::string& activation, int outputs) {
  return StrCat(R"(
    layer { name: "in" type: "Input" top: "x" input_param { shape { dim: 2 dim: 3 } } }
    layer { name: "ip1" type: "InnerProduct" bottom: "x" top: "y"
            inner_product_param { num_output: )",
                outputs, R"( } }
    layer { name: "act1" type: ")",
                activation, R"(" bottom: "y" top: "y" })");
}

Fingerprint NetPrint(const std::string& text, const Context& context = Context()) {
  Net net(ParseText<NetParameter>(text), context);
  return NetFingerprint(net);
}

TEST(TrainingFingerprintTest, NamesTheLayerTypeThatDiffers) {
  EXPECT_EQ(FirstDifference(NetPrint(SmallNet("ReLU", 4)), NetPrint(SmallNet("ReLU", 4))), "");
  EXPECT_EQ(FirstDifference(NetPrint(SmallNet("ReLU", 4)), NetPrint(SmallNet("Sigmoid", 4))),
            "net layer 'act1' type (ReLU vs Sigmoid)");
}

TEST(TrainingFingerprintTest, NamesTheParamShapeThatDiffers) {
  EXPECT_EQ(FirstDifference(NetPrint(SmallNet("ReLU", 4)), NetPrint(SmallNet("ReLU", 5))),
            "net layer 'ip1' param 0 shape (4 3 (12) vs 5 3 (15))");
}

TEST(TrainingFingerprintTest, NamesLayerSettingsAndMissingLayers) {
  const std::string relu = SmallNet("ReLU", 4);
  EXPECT_EQ(FirstDifference(NetPrint(relu), NetPrint(StrCat(relu, R"(
    layer { name: "act2" type: "ReLU" bottom: "y" top: "y" relu_param { negative_slope: 0.1 } })"))),
            "net layer #3 (absent vs act2)");
  const std::string leaky = R"(
    layer { name: "in" type: "Input" top: "x" input_param { shape { dim: 2 dim: 3 } } }
    layer { name: "act" type: "ReLU" bottom: "x" top: "y" relu_param { negative_slope: )";
  EXPECT_EQ(FirstDifference(NetPrint(StrCat(leaky, "0.1 } }")), NetPrint(StrCat(leaky, "0.2 } }"))),
            "net layer 'act' relu_param ({ negative_slope: 0.1 } vs { negative_slope: 0.2 })");
}

TEST(TrainingFingerprintTest, DataPathsMayDifferButNotTheShardLayout) {
  ScratchDir dir;
  WriteBandsDB(dir.file("a"), 20);
  std::filesystem::copy(dir.file("a"), dir.file("b"), std::filesystem::copy_options::recursive);
  WriteBandsDB(dir.file("c"), 24);
  auto data_net = [&](const std::string& db) {
    return StrCat(R"(
      state { phase: TRAIN }
      layer { name: "d" type: "Data" top: "data" top: "label" include { phase: TRAIN }
              data_param { source: ")",
                  db, R"(" batch_size: 4 backend: LMDB } })");
  };
  Context replica;
  replica.replica = 1;
  replica.num_replicas = 2;
  const Fingerprint reference = NetPrint(data_net(dir.file("a")), replica);
  EXPECT_EQ(FirstDifference(reference, NetPrint(data_net(dir.file("b")), replica)), "");
  EXPECT_EQ(FirstDifference(reference, NetPrint(data_net(dir.file("c")), replica)),
            "net layer 'd' shard layout (20 records in batches of 4 over 2 shard(s) vs 24 "
            "records in batches of 4 over 2 shard(s))");
}

}  // namespace
}  // namespace demi
