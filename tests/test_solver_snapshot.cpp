// Snapshots, resuming and fine-tuning: what the files hold, bit-identical
// resume for every update rule, a crash in the middle of a write, and copying
// weights by layer name.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <thread>

#include "demi/data/hdf5.hpp"
#include "demi/hdf5_snapshots.hpp"
#include "demi/util/io.hpp"
#include "solver_test_util.hpp"

namespace demi {
namespace {

namespace fs = std::filesystem;

// Randomness everywhere a resume could lose it: gaussian data and dropout in
// the train net, uniform data in the test net; and BatchNorm's computed
// statistics, which the test net reads.
const char* kRandomNet = R"(
  name: "random"
  layer { name: "data" type: "DummyData" top: "x"
          dummy_data_param { shape { dim: 8 dim: 4 } data_filler { type: "gaussian" }
                             } include { phase: TRAIN } }
  layer { name: "test_data" type: "DummyData" top: "x"
          dummy_data_param { shape { dim: 8 dim: 4 } data_filler { type: "uniform" min: -2 max: 2 }
                             } include { phase: TEST } }
  layer { name: "teacher" type: "InnerProduct" bottom: "x" top: "target"
          param { lr_mult: 0 decay_mult: 0 } param { lr_mult: 0 decay_mult: 0 }
          inner_product_param { num_output: 2 weight_filler { type: "gaussian" } } }
  layer { name: "ip1" type: "InnerProduct" bottom: "x" top: "h"
          inner_product_param { num_output: 6 weight_filler { type: "xavier" } } }
  layer { name: "bn" type: "BatchNorm" bottom: "h" top: "h" }
  layer { name: "relu" type: "ReLU" bottom: "h" top: "h" }
  layer { name: "drop" type: "Dropout" bottom: "h" top: "h" dropout_param { dropout_ratio: 0.3 } }
  layer { name: "ip2" type: "InnerProduct" bottom: "h" top: "pred"
          inner_product_param { num_output: 2 weight_filler { type: "xavier" } } }
  layer { name: "loss" type: "EuclideanLoss" bottom: "pred" bottom: "target" top: "loss" }
)";

std::string RandomSolver(const std::string& type, const std::string& prefix, int max_iter,
                         const std::string& extra = "") {
  const std::string hyper = type == "AdaGrad" || type == "RMSProp" ? "" : "momentum: 0.9";
  return StrCat("net_param {", kRandomNet, "} type: \"", type, "\" ", hyper, R"(
    base_lr: 0.01 lr_policy: "step" gamma: 0.5 stepsize: 3 weight_decay: 0.001
    test_iter: 2 test_interval: 2 random_seed: 9 snapshot_prefix: ")",
                prefix, "\" max_iter: ", max_iter, " ", extra);
}

TEST(SnapshotTest, FilesHoldParamsHistoryAndRandomState) {
  ScratchDir dir;
  auto solver = MakeSolver(RandomSolver("Adam", dir.file("run"), 3));
  solver->Step(3);
  solver->Snapshot();
  NetParameter model;
  ReadProtoFromBinaryFile(dir.file("run_iter_3.caffemodel"), &model);
  const Net& net = solver->net();
  int checked = 0;
  for (const LayerParameter& layer : model.layer()) {
    const auto& blobs = net.layer_by_name(layer.name())->blobs();
    ASSERT_EQ(layer.blobs_size(), static_cast<int>(blobs.size())) << layer.name();
    for (size_t j = 0; j < blobs.size(); ++j, ++checked) {
      const BlobProto& proto = layer.blobs(static_cast<int>(j));
      EXPECT_EQ(std::vector<float>(proto.data().begin(), proto.data().end()), DataOf(*blobs[j]))
          << layer.name() << " param " << j;
    }
  }
  EXPECT_EQ(checked, 9);  // teacher (not learned, still saved), ip1, bn, ip2
  // BatchNorm's statistics: after 3 iterations the scale factor is
  // 1 + 0.999 + 0.999^2.
  const auto& bn = net.layer_by_name("bn")->blobs();
  EXPECT_NEAR(bn[2]->cpu_data()[0], 1 + 0.999 + 0.999 * 0.999, 1e-5);
  EXPECT_GT(bn[1]->asum_data(), 0);
  SolverState state;
  ReadProtoFromBinaryFile(dir.file("run_iter_3.solverstate"), &state);
  EXPECT_EQ(state.iter(), 3);
  EXPECT_EQ(state.current_step(), 1);
  EXPECT_EQ(state.learned_net(), dir.file("run_iter_3.caffemodel"));
  // Adam keeps two moments for each learnable param, as Caffe lays them out:
  // those with lr_mult 0 (the teacher's, bn's) too.
  EXPECT_EQ(state.history_size(), 18);
  EXPECT_EQ(state.rng_state_size(),
            static_cast<int>(net.layers().size() + solver->test_nets()[0]->layers().size()));
}

class ResumeTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ResumeTest, ResumeIsBitIdentical) {
  const std::string type = GetParam();
  ScratchDir dir;
  const ResumeRuns runs = RunStraightAndResumed(
      dir,
      [&](const std::string& prefix, int max_iter, const std::string& extra) {
        return RandomSolver(type, prefix, max_iter, extra);
      },
      8);
  EXPECT_EQ(runs.second_half->TestAll(), runs.straight->TestAll());
}

TEST(SnapshotTest, ResumeShowsTheUninterruptedSmoothedLoss) {
  // The window of average_loss losses spans the resume (8 iterations,
  // resumed at 4): the state carries it, so the resumed run's smoothed loss
  // is the straight run's, bit for bit.
  ScratchDir dir;
  const ResumeRuns runs = RunStraightAndResumed(
      dir,
      [&](const std::string& prefix, int max_iter, const std::string& extra) {
        return RandomSolver("Adam", prefix, max_iter, extra + " average_loss: 6");
      },
      8);
  EXPECT_EQ(runs.second_half->smoothed_loss(), runs.straight->smoothed_loss());
  EXPECT_NE(runs.first_half->smoothed_loss(), runs.straight->smoothed_loss());
  SolverState state;
  ReadProtoFromBinaryFile(dir.file("split_iter_4.solverstate"), &state);
  EXPECT_EQ(state.loss_window_size(), 4);  // all 4 losses so far, within 6
}

TEST(SnapshotTest, Hdf5SnapshotsHoldCaffesLayoutAndResumeBitIdentically) {
  ScratchDir dir;
  const auto solver_text = [&](const std::string& prefix, int max_iter, const std::string& extra) {
    return RandomSolver("Adam", prefix, max_iter,
                        extra + " snapshot_format: HDF5 average_loss: 3 snapshot_diff: true");
  };
  auto straight = MakeSolver(solver_text(dir.file("straight"), 8, ""));
  straight->Solve();
  auto first = MakeSolver(solver_text(dir.file("split"), 4, "snapshot_after_train: true"));
  first->Solve();
  // Caffe's files: weights as data/<layer>/<i> (and the diffs), the state's
  // own datasets.
  const std::string model = dir.file("split_iter_4.caffemodel.h5");
  const std::string state = dir.file("split_iter_4.solverstate.h5");
  ASSERT_TRUE(IsHdf5File(model) && IsHdf5File(state));
  EXPECT_FALSE(std::filesystem::exists(dir.file("split_iter_4.caffemodel")));
  std::vector<float> values;
  EXPECT_EQ(ReadHdf5Dataset(model, "data/ip1/0", &values), (std::vector<int64_t>{6, 4}));
  EXPECT_EQ(values, DataOf(*first->net().layer_by_name("ip1")->blobs()[0]));
  EXPECT_EQ(ReadHdf5Dataset(model, "diff/ip2/1", &values), (std::vector<int64_t>{2}));
  EXPECT_TRUE(Hdf5HasMember(model, "data/relu"));  // every layer has its group, as in Caffe
  EXPECT_EQ(ReadHdf5Int(state, "iter"), 4);
  EXPECT_EQ(ReadHdf5String(state, "learned_net"), model);
  EXPECT_EQ(ReadHdf5Int(state, "current_step"), 1);
  EXPECT_EQ(Hdf5GroupMembers(state, "history").size(), 18u);
  // Resumed from it, the run is the straight one's, bit for bit.
  auto second = MakeSolver(solver_text(dir.file("split"), 8, ""));
  second->Solve(state);
  EXPECT_EQ(AllParams(second->net()), AllParams(straight->net()));
  EXPECT_EQ(AllHistory(*second), AllHistory(*straight));
  EXPECT_EQ(second->smoothed_loss(), straight->smoothed_loss());
  EXPECT_EQ(second->TestAll(), straight->TestAll());
  // The weights alone load as any weights do.
  auto fine_tuned = MakeSolver(solver_text(dir.file("tuned"), 1, ""));
  fine_tuned->net().CopyTrainedLayersFrom(model);
  EXPECT_EQ(AllParams(fine_tuned->net()), AllParams(first->net()));
}

TEST(SnapshotTest, Hdf5WeightsOfLayersNamedWithSlashesNestAndReadBack) {
  // GoogLeNet's "inception_3a/1x1" beside a layer "inception_3a" of its own.
  ScratchDir dir;
  NetParameter weights = ParseText<NetParameter>(R"(
    layer { name: "inception_3a" blobs { shape { dim: 2 } data: 1 data: 2 } }
    layer { name: "inception_3a/1x1" blobs { shape { dim: 1 dim: 2 } data: 3 data: 4 }
                                     blobs { shape { } data: 5 } }
    layer { name: "relu" })");
  WriteHdf5Weights(weights, dir.file("w.caffemodel.h5"));
  const NetParameter read = ReadHdf5Weights(dir.file("w.caffemodel.h5"));
  ASSERT_EQ(read.layer_size(), 2);  // relu holds nothing
  std::map<std::string, std::string> by_name;
  for (const LayerParameter& layer : read.layer()) by_name[layer.name()] = layer.DebugString();
  for (const LayerParameter& layer : weights.layer()) {
    if (layer.blobs_size() > 0) {
      EXPECT_EQ(by_name[layer.name()], layer.DebugString());
    }
  }
}

// HDF5 keeps a modification time in each object by default: ours keep none,
// so a resumed run's HDF5 snapshot is the uninterrupted one's, byte for byte.
TEST(SnapshotTest, Hdf5FilesOfTheSameContentsAreTheSameBytes) {
  ScratchDir dir;
  const NetParameter weights = ParseText<NetParameter>(R"(
    layer { name: "a/b" blobs { shape { dim: 2 } data: 1 data: 2 } }
    layer { name: "c" blobs { shape { dim: 1 } data: 3 } })");
  WriteHdf5Weights(weights, dir.file("first.h5"));
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));  // times are in seconds
  WriteHdf5Weights(weights, dir.file("second.h5"));
  auto bytes = [](const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  };
  EXPECT_FALSE(bytes(dir.file("first.h5")).empty());
  EXPECT_EQ(bytes(dir.file("first.h5")), bytes(dir.file("second.h5")));
}

TEST(SnapshotTest, ACaffeHdf5StateResumesWithFreshRandomStreams) {
  // Caffe's .solverstate.h5 has no demitasse_state: iteration, history and
  // weights come back, the random streams start afresh.
  ScratchDir dir;
  auto first = MakeSolver(RandomSolver("SGD", dir.file("ours"), 3, "snapshot_after_train: true"));
  first->Solve();
  SolverState ours;
  ReadProtoFromBinaryFile(dir.file("ours_iter_3.solverstate"), &ours);
  Hdf5FileImage caffes;
  caffes.AddInt("iter", ours.iter());
  caffes.AddString("learned_net", dir.file("ours_iter_3.caffemodel"));
  caffes.AddInt("current_step", ours.current_step());
  for (int i = 0; i < ours.history_size(); ++i) {
    const BlobProto& blob = ours.history(i);
    caffes.AddFloats(StrCat("history/", i), ShapeFromProto(blob), blob.data().data());
  }
  caffes.Save(dir.file("caffe.solverstate.h5"));
  auto resumed = MakeSolver(RandomSolver("SGD", dir.file("resumed"), 5));
  resumed->Restore(dir.file("caffe.solverstate.h5"));
  EXPECT_EQ(resumed->iter(), 3);
  EXPECT_EQ(AllParams(resumed->net()), AllParams(first->net()));
  EXPECT_EQ(AllHistory(*resumed), AllHistory(*first));
  // Weights given as a state are refused by name, HDF5 ones too, and a
  // state given as weights, whatever its name.
  ExpectErrorContaining([&] { resumed->Restore(dir.file("ours_iter_3.caffemodel")); },
                        {"is a weights file"});
  WriteHdf5Weights(NetParameter(), dir.file("w.caffemodel.h5"));
  ExpectErrorContaining([&] { resumed->Restore(dir.file("w.caffemodel.h5")); },
                        {"is a weights file"});
  std::filesystem::copy_file(dir.file("caffe.solverstate.h5"), dir.file("renamed.h5"));
  ExpectErrorContaining([&] { resumed->net().CopyTrainedLayersFrom(dir.file("renamed.h5")); },
                        {"is an HDF5 solver state, not weights; use --snapshot"});
  // A state of a negative iteration is refused, naming the file.
  Hdf5FileImage negative;
  negative.AddInt("iter", -5);
  negative.Save(dir.file("negative.solverstate.h5"));
  ExpectErrorContaining([&] { resumed->Restore(dir.file("negative.solverstate.h5")); },
                        {"negative.solverstate.h5' holds iteration -5"});
}

TEST(SnapshotTest, Hdf5WeightsMayLeaveOutSharedParamsAsCaffeWrites) {
  // Caffe's ToHDF5 writes a shared param under its owner only: here b's
  // weights (a's) are absent, its bias present; a layer whose own param is
  // absent is an error naming it.
  ScratchDir dir;
  const std::string net_text = R"(
    layer { name: "in" type: "Input" top: "x" input_param { shape { dim: 2 dim: 3 } } }
    layer { name: "a" type: "InnerProduct" bottom: "x" top: "a" param { name: "w" }
            inner_product_param { num_output: 3 bias_term: false } }
    layer { name: "b" type: "InnerProduct" bottom: "a" top: "b" param { name: "w" } param { }
            inner_product_param { num_output: 3 } })";
  Net net(ParseText<NetParameter>(StrCat("state { phase: TEST } ", net_text)));
  Hdf5FileImage caffes;
  const std::vector<float> w{1, 2, 3, 4, 5, 6, 7, 8, 9}, bias{-1, -2, -3};
  caffes.AddFloats("data/a/0", {3, 3}, w.data());
  caffes.AddFloats("data/b/1", {3}, bias.data());
  caffes.Save(dir.file("caffe.caffemodel.h5"));
  net.CopyTrainedLayersFrom(dir.file("caffe.caffemodel.h5"));
  EXPECT_EQ(DataOf(*net.layer_by_name("b")->blobs()[0]), w);
  EXPECT_EQ(DataOf(*net.layer_by_name("b")->blobs()[1]), bias);
  Hdf5FileImage lacking;
  lacking.AddFloats("data/a/0", {3, 3}, w.data());
  lacking.AddFloats("data/b/0", {3, 3}, w.data());
  lacking.Save(dir.file("lacking.caffemodel.h5"));
  ExpectErrorContaining([&] { net.CopyTrainedLayersFrom(dir.file("lacking.caffemodel.h5")); },
                        {"layer 'b' has 2 params but the weights file holds 1"});
  Hdf5FileImage without_bias;
  without_bias.AddFloats("data/b/0", {3, 3}, w.data());
  without_bias.AddFloats("data/b/2", {3}, bias.data());
  without_bias.Save(dir.file("gap.caffemodel.h5"));
  ExpectErrorContaining([&] { net.CopyTrainedLayersFrom(dir.file("gap.caffemodel.h5")); },
                        {"layer 'b' has 2 params but the weights file holds 3"});
  Hdf5FileImage owner_missing;
  owner_missing.AddFloats("data/b/1", {3}, bias.data());
  owner_missing.AddGroup("data/a");
  owner_missing.Save(dir.file("owner.caffemodel.h5"));
  Net owner(ParseText<NetParameter>(StrCat("state { phase: TEST } ", R"(
    layer { name: "in" type: "Input" top: "x" input_param { shape { dim: 2 dim: 3 } } }
    layer { name: "b" type: "InnerProduct" bottom: "x" top: "b" inner_product_param { num_output: 3 } })")));
  ExpectErrorContaining([&] { owner.CopyTrainedLayersFrom(dir.file("owner.caffemodel.h5")); },
                        {"holds no param 0 of layer 'b', which owns it"});
  // Names that cannot both be groups: a layer "x" with param 1 and a layer "x/1".
  Hdf5FileImage colliding;
  colliding.AddFloats("data/x/1", {3}, bias.data());
  ExpectErrorContaining([&] { colliding.AddFloats("data/x/1/0", {3}, bias.data()); }, {"data/x/1"});
  ExpectErrorContaining([&] { colliding.AddGroup("data/x/1"); },
                        {"'data/x/1' is a dataset already"});
}

TEST(SnapshotTest, ASolverFineTunesFromHdf5Weights) {
  ScratchDir dir;
  auto source = MakeSolver(RandomSolver("SGD", dir.file("source"), 2,
                                        "snapshot_after_train: true snapshot_format: HDF5"));
  source->Solve();
  auto tuned = MakeSolver(
      RandomSolver("SGD", dir.file("tuned"), 2,
                   StrCat("weights: \"", dir.file("source_iter_2.caffemodel.h5"), "\"")));
  EXPECT_EQ(AllParams(tuned->net()), AllParams(source->net()));
  EXPECT_EQ(AllParams(*tuned->test_nets()[0]), AllParams(source->net()));
}

INSTANTIATE_TEST_SUITE_P(EveryType, ResumeTest,
                         ::testing::Values("SGD", "Nesterov", "AdaGrad", "RMSProp", "AdaDelta",
                                           "Adam"));

TEST(SnapshotTest, CrashMidWriteLeavesThePreviousSnapshot) {
  ScratchDir dir;
  const std::string text = RandomSolver("SGD", dir.file("run"), 10);
  auto solver = MakeSolver(text);
  solver->Step(2);
  solver->Snapshot();
  const std::vector<float> params_at_2 = AllParams(solver->net());
  const std::string model_at_2 = ReadFileToString(dir.file("run_iter_2.caffemodel"));
  const std::string state_at_2 = ReadFileToString(dir.file("run_iter_2.solverstate"));
  solver->Step(2);
  std::fflush(nullptr);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Files may grow to 100 bytes: the write of the model dies with SIGXFSZ.
    struct rlimit no_core = {0, 0};
    struct rlimit small = {100, 100};
    ::setrlimit(RLIMIT_CORE, &no_core);
    ::setrlimit(RLIMIT_FSIZE, &small);
    ::signal(SIGXFSZ, SIG_DFL);
    try {
      solver->Snapshot();
    } catch (...) {
      ::_exit(3);
    }
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status))
      << "the snapshot was not interrupted; exit status " << WEXITSTATUS(status);
  EXPECT_EQ(WTERMSIG(status), SIGXFSZ);
  // Nothing carries the final names of iteration 4; the truncated bytes are
  // in a temporary file.
  EXPECT_FALSE(fs::exists(dir.file("run_iter_4.caffemodel")));
  EXPECT_FALSE(fs::exists(dir.file("run_iter_4.solverstate")));
  int partial = 0;
  for (const auto& entry : fs::directory_iterator(dir.path())) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("run_iter_4.caffemodel.", 0) == 0 && fs::file_size(entry.path()) == 100) {
      ++partial;
    }
  }
  EXPECT_EQ(partial, 1);
  // The previous snapshot is whole and restores.
  EXPECT_EQ(ReadFileToString(dir.file("run_iter_2.caffemodel")), model_at_2);
  EXPECT_EQ(ReadFileToString(dir.file("run_iter_2.solverstate")), state_at_2);
  auto resumed = MakeSolver(text);
  resumed->Restore(dir.file("run_iter_2.solverstate"));
  EXPECT_EQ(resumed->iter(), 2);
  EXPECT_EQ(AllParams(resumed->net()), params_at_2);
}

TEST(SnapshotTest, RestoreFindsTheModelBesideAMovedState) {
  ScratchDir dir;
  const std::string text = RandomSolver("SGD", dir.file("run"), 10);
  auto solver = MakeSolver(text);
  solver->Step(2);
  solver->Snapshot();
  fs::create_directory(dir.file("moved"));
  for (const char* name : {"run_iter_2.caffemodel", "run_iter_2.solverstate"}) {
    fs::rename(dir.file(name), dir.file(StrCat("moved/", name)));
  }
  auto resumed = MakeSolver(text);
  resumed->Restore(dir.file("moved/run_iter_2.solverstate"));
  EXPECT_EQ(AllParams(resumed->net()), AllParams(solver->net()));
  fs::remove(dir.file("moved/run_iter_2.caffemodel"));
  ExpectErrorContaining([&] { resumed->Restore(dir.file("moved/run_iter_2.solverstate")); },
                        {"names the model '" + dir.file("run_iter_2.caffemodel") + "'",
                         dir.file("moved/run_iter_2.caffemodel")});
}

// Unlike fine-tuning, a resume needs every layer's params: a model that
// lacks one is an error naming the model and the layer, not a warning.
TEST(SnapshotTest, RestoreRefusesAModelWithoutALayer) {
  ScratchDir dir;
  const std::string text = RandomSolver("SGD", dir.file("run"), 10);
  auto solver = MakeSolver(text);
  solver->Step(2);
  solver->Snapshot();
  const std::string model = dir.file("run_iter_2.caffemodel");
  NetParameter weights;
  ReadProtoFromBinaryFile(model, &weights);
  NetParameter lacking;
  for (const LayerParameter& layer : weights.layer()) {
    if (layer.name() != "ip1") *lacking.add_layer() = layer;
  }
  WriteProtoToBinaryFile(lacking, model);
  auto resumed = MakeSolver(text);
  ExpectErrorContaining([&] { resumed->Restore(dir.file("run_iter_2.solverstate")); },
                        {"cannot restore the model '" + model + "'",
                         "no weights for layer(s) ip1 of the train net", "--weights"});
}

TEST(SnapshotTest, RestoreRejectsAnotherSolversHistory) {
  ScratchDir dir;
  auto sgd = MakeSolver(RandomSolver("SGD", dir.file("run"), 10));
  sgd->Snapshot();
  auto adam = MakeSolver(RandomSolver("Adam", dir.file("other"), 10));
  ExpectErrorContaining(
      [&] { adam->Restore(dir.file("run_iter_0.solverstate")); },
      {"holds 9 history blobs", "Adam solver keeps 18", "2 for each of 9 learnable params"});
  ExpectErrorContaining([&] { adam->Restore(dir.file("none.solverstate")); }, {"none.solverstate"});
}

// Fine-tuning: a source with layers a (2 -> 3) and b (3 -> 2), and a target
// that also has c, which no file holds.
const char* kSourceNet = R"(
  layer { name: "in" type: "Input" top: "x" input_param { shape { dim: 1 dim: 2 } } }
  layer { name: "a" type: "InnerProduct" bottom: "x" top: "ya"
          inner_product_param { num_output: 3 weight_filler { type: "gaussian" } } }
  layer { name: "b" type: "InnerProduct" bottom: "ya" top: "yb" loss_weight: 1
          inner_product_param { num_output: 2 weight_filler { type: "gaussian" } } }
)";

std::string TargetSolver(int a_outputs, const std::string& extra = "") {
  return StrCat(R"(net_param {
    layer { name: "in" type: "Input" top: "x" input_param { shape { dim: 1 dim: 2 } } }
    layer { name: "a" type: "InnerProduct" bottom: "x" top: "ya"
            inner_product_param { num_output: )",
                a_outputs, R"( weight_filler { type: "constant" value: 7 } } }
    layer { name: "b" type: "InnerProduct" bottom: "ya" top: "yb"
            inner_product_param { num_output: 2 weight_filler { type: "constant" value: 7 } } }
    layer { name: "c" type: "InnerProduct" bottom: "yb" top: "yc" loss_weight: 1
            inner_product_param { num_output: 1 weight_filler { type: "constant" value: 7 } } }
  } lr_policy: "fixed" )",
                extra);
}

TEST(FineTuneTest, CopiesByLayerNameInOrder) {
  ScratchDir dir;
  Net source(ParseText<NetParameter>(kSourceNet));
  NetParameter source_weights;
  source.ToProto(&source_weights);
  WriteProtoToBinaryFile(source_weights, dir.file("source.caffemodel"));
  // A second file with only layer b, whose values win because it comes later.
  NetParameter b_only;
  LayerParameter* b = b_only.add_layer();
  b->set_name("b");
  for (const auto& blob : source.layer_by_name("b")->blobs()) {
    BlobProto* proto = b->add_blobs();
    blob->ToProto(proto);
    for (float& value : *proto->mutable_data()) value = 0.25f;
  }
  WriteProtoToBinaryFile(b_only, dir.file("b.caffemodel"));

  auto solver = MakeSolver(TargetSolver(3));
  solver->CopyWeights(dir.file("source.caffemodel") + "," + dir.file("b.caffemodel"));
  const Net& net = solver->net();
  for (size_t j = 0; j < 2; ++j) {
    EXPECT_EQ(DataOf(*net.layer_by_name("a")->blobs()[j]),
              DataOf(*source.layer_by_name("a")->blobs()[j]));
    for (float value : DataOf(*net.layer_by_name("b")->blobs()[j])) EXPECT_EQ(value, 0.25f);
  }
  // c is in neither file: it keeps its filler's values.
  for (float value : DataOf(*net.layer_by_name("c")->blobs()[0])) EXPECT_EQ(value, 7.0f);

  // The solver's `weights` field does the same at construction.
  auto from_field =
      MakeSolver(TargetSolver(3, StrCat("weights: \"", dir.file("source.caffemodel"), "\"")));
  EXPECT_EQ(DataOf(*from_field->net().layer_by_name("a")->blobs()[0]),
            DataOf(*source.layer_by_name("a")->blobs()[0]));
}

TEST(FineTuneTest, ShapeMismatchNamesTheLayerAndBothShapes) {
  ScratchDir dir;
  Net source(ParseText<NetParameter>(kSourceNet));
  NetParameter weights;
  source.ToProto(&weights);
  WriteProtoToBinaryFile(weights, dir.file("source.caffemodel"));
  auto solver = MakeSolver(TargetSolver(5));
  ExpectErrorContaining([&] { solver->CopyWeights(dir.file("source.caffemodel")); },
                        {dir.file("source.caffemodel"), "layer 'a'", "3 2 (6)", "5 2 (10)"});
  ExpectErrorContaining([&] { solver->CopyWeights(dir.file("missing.caffemodel")); },
                        {dir.file("missing.caffemodel")});
}

}  // namespace
}  // namespace demi
