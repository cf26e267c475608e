// Bit-identical resume with real data: a .solverstate holds every data
// layer's read position (the first record its Forward has not consumed, while
// later batches wait prefetched), so a run stopped and resumed trains on the
// batches an uninterrupted run trains on. Data over an LMDB with a bad
// record, ImageData shuffled, two replica threads; a state written before
// positions were saved; a state of another replica count.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <opencv2/imgcodecs.hpp>
#include <random>

#include "data_test_util.hpp"
#include "demi/parallel/replicas.hpp"
#include "demi/util/io.hpp"
#include "log_capture.hpp"
#include "solver_test_util.hpp"

namespace demi {
namespace {

/// Records each iteration's loss, as the solver displays it unsmoothed.
class LossRecorder : public Solver::Callback {
 public:
  float ReduceLoss(float loss) override {
    losses.push_back(loss);
    return loss;
  }
  std::vector<float> losses;
};

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

SolverState ReadState(const std::string& path) {
  SolverState state;
  ReadProtoFromBinaryFile(path, &state);
  return state;
}

/// `n` 1 x 4 x 4 records of random bytes with label i % 3; record `bad`
/// (unless -1) does not decode.
void WriteRecords(const std::string& path, int n, int bad) {
  std::mt19937 engine(11);
  std::vector<Datum> datums;
  for (int i = 0; i < n; ++i) {
    std::vector<uint8_t> pixels(16);
    for (auto& p : pixels) p = static_cast<uint8_t>(engine());
    datums.push_back(RawDatum(1, 4, 4, pixels, i % 3));
  }
  if (bad >= 0) {
    datums[bad].Clear();
    datums[bad].set_data("garbage");
    datums[bad].set_encoded(true);
  }
  WriteDatumDB(path, datums);
}

/// Data layers for `db`: batches of `batch` in TRAIN, cropped and mirrored
/// (augmentation keyed by epoch and record), bad records skipped; with
/// `test_batch` > 0 a TEST one too.
std::string DataLayers(const std::string& db, int batch, int test_batch = 0) {
  std::string layers =
      StrCat(R"(
    layer { name: "data" type: "Data" top: "data" top: "label" include { phase: TRAIN }
            transform_param { crop_size: 3 mirror: true scale: 0.01 }
            data_param { source: ")",
             db, R"(" batch_size: )", batch, R"( skip_bad_records: true backend: LMDB } })");
  if (test_batch > 0) {
    layers +=
        StrCat(R"(
    layer { name: "data" type: "Data" top: "data" top: "label" include { phase: TEST }
            transform_param { crop_size: 3 scale: 0.01 }
            data_param { source: ")",
               db, R"(" batch_size: )", test_batch, R"( skip_bad_records: true backend: LMDB } })");
  }
  return layers;
}

/// A linear classifier over `data_layers`' tops, SGD with momentum.
std::string ClassifierSolver(const std::string& data_layers, const std::string& prefix,
                             int max_iter, const std::string& extra = "") {
  return StrCat(R"(
    type: "SGD" base_lr: 0.1 momentum: 0.9 lr_policy: "fixed" display: 0 random_seed: 3
    snapshot_prefix: ")",
                prefix, "\" max_iter: ", max_iter, " ", extra, " net_param {", data_layers, R"(
      layer { name: "ip" type: "InnerProduct" bottom: "data" top: "ip"
              inner_product_param { num_output: 3 weight_filler { type: "gaussian" std: 0.1 } } }
      layer { name: "loss" type: "SoftmaxWithLoss" bottom: "ip" bottom: "label" top: "loss" }
    })");
}

/// Trains `text` (resuming from `resume` if given); returns every loss.
std::vector<float> Train(const std::string& text, const std::string& resume = "") {
  auto solver = MakeSolver(text);
  LossRecorder recorder;
  solver->AddCallback(&recorder);
  solver->Solve(resume);
  return recorder.losses;
}

std::vector<float> Tail(const std::vector<float>& values, size_t from) {
  return std::vector<float>(values.begin() + std::min(from, values.size()), values.end());
}

DataReadPosition PositionOf(Solver& solver, const std::string& layer) {
  DataReadPosition position;
  EXPECT_TRUE(solver.net().layer_by_name(layer)->SaveReadPosition(&position)) << layer;
  return position;
}

// 30 records (one bad) in batches of 4: epochs end inside batches, and at
// the snapshot the prefetch thread is batches ahead of the consumer.
TEST(DataResumeTest, DataLayerResumesBitIdentically) {
  ScratchDir dir;
  WriteRecords(dir.file("db"), 30, 5);
  const std::string layers = DataLayers(dir.file("db"), 4, 6);
  const std::string tests = "test_iter: 2 test_interval: 5 snapshot_after_train: true";
  auto straight = MakeSolver(ClassifierSolver(layers, dir.file("straight"), 14, tests));
  LossRecorder straight_losses;
  straight->AddCallback(&straight_losses);
  straight->Solve();
  Train(ClassifierSolver(layers, dir.file("split"), 7, tests));

  // Consumed at iteration 7: 28 good records and the bad one; the test net
  // read 2 tests x 2 batches of 6 good records and the bad one.
  const SolverState state = ReadState(dir.file("split_iter_7.solverstate"));
  ASSERT_EQ(state.data_position_size(), 2);
  const DataReadPosition& train = state.data_position(0);
  EXPECT_EQ(train.layer(), "data");
  EXPECT_EQ(train.type(), "Data");
  EXPECT_EQ(train.net(), 0);
  EXPECT_EQ(train.stream_position(), 29);
  EXPECT_EQ(train.key(), "00000029");
  EXPECT_EQ(train.index(), 29);
  EXPECT_EQ(train.epoch(), 0);
  EXPECT_EQ(train.skipped_records(), 1);
  EXPECT_EQ(train.source_records(), 30);
  const DataReadPosition& test = state.data_position(1);
  EXPECT_EQ(test.net(), 1);
  EXPECT_EQ(test.key(), "00000025");

  auto resumed = MakeSolver(ClassifierSolver(layers, dir.file("resumed"), 14, tests));
  LossRecorder resumed_losses;
  resumed->AddCallback(&resumed_losses);
  resumed->Solve(dir.file("split_iter_7.solverstate"));
  EXPECT_EQ(ReadBytes(dir.file("resumed_iter_14.caffemodel")),
            ReadBytes(dir.file("straight_iter_14.caffemodel")));
  EXPECT_EQ(AllHistory(*resumed), AllHistory(*straight));
  ASSERT_EQ(straight_losses.losses.size(), 14u);
  EXPECT_EQ(resumed_losses.losses, Tail(straight_losses.losses, 7));
  EXPECT_EQ(resumed->TestAll(), straight->TestAll());
}

// A state written before read positions existed still loads: one WARNING,
// and the data layers read from their beginning (so the run differs).
TEST(DataResumeTest, AStateWithoutPositionsRestartsTheStreamsWithAWarning) {
  ScratchDir dir;
  WriteRecords(dir.file("db"), 30, -1);
  const std::string layers = DataLayers(dir.file("db"), 4);
  Train(ClassifierSolver(layers, dir.file("run"), 3, "snapshot_after_train: true"));
  SolverState state = ReadState(dir.file("run_iter_3.solverstate"));
  ASSERT_EQ(state.data_position_size(), 1);
  EXPECT_EQ(state.data_position(0).index(), 12);
  state.clear_data_position();
  WriteProtoToBinaryFile(state, dir.file("old.solverstate"));

  auto resumed = MakeSolver(ClassifierSolver(layers, dir.file("resumed"), 6));
  LogCapture log;
  resumed->Restore(dir.file("old.solverstate"));
  EXPECT_EQ(log.Containing("holds no data read positions").size(), 1u);
  EXPECT_EQ(resumed->iter(), 3);
  const DataReadPosition position = PositionOf(*resumed, "data");
  EXPECT_EQ(position.index(), 0);
  EXPECT_EQ(position.stream_position(), 0);
  EXPECT_EQ(position.key(), "00000000");
}

/// An ImageData layer over 7 random 4 x 4 images written into `dir`,
/// shuffled anew each epoch, in batches of 3, cropped and mirrored.
std::string ShuffledImages(const ScratchDir& dir) {
  std::mt19937 engine(5);
  std::string list;
  for (int i = 0; i < 7; ++i) {
    cv::Mat image(4, 4, CV_8UC3);
    for (auto it = image.begin<uchar>(); it != image.end<uchar>(); ++it) {
      *it = static_cast<uchar>(engine());
    }
    EXPECT_TRUE(cv::imwrite(dir.file(StrCat("img", i, ".png")), image));
    list += StrCat("img", i, ".png ", i % 3, "\n");
  }
  WriteFile(dir.file("list.txt"), list);
  return StrCat(R"(
    layer { name: "images" type: "ImageData" top: "data" top: "label"
            transform_param { crop_size: 3 mirror: true scale: 0.01 }
            image_data_param { source: ")",
                dir.file("list.txt"), R"(" root_folder: ")", dir.path(),
                R"(/" batch_size: 3 shuffle: true } })");
}

TEST(DataResumeTest, ShuffledImageDataResumesBitIdentically) {
  ScratchDir dir;
  const std::string layers = ShuffledImages(dir);
  const std::vector<float> straight =
      Train(ClassifierSolver(layers, dir.file("straight"), 10, "snapshot: 5"));
  // Consumed at iteration 5: 15 images, two epochs and one image of the third.
  const SolverState state = ReadState(dir.file("straight_iter_5.solverstate"));
  ASSERT_EQ(state.data_position_size(), 1);
  EXPECT_EQ(state.data_position(0).type(), "ImageData");
  EXPECT_EQ(state.data_position(0).epoch(), 2);
  EXPECT_EQ(state.data_position(0).index(), 1);
  EXPECT_EQ(state.random_seed(), 3);

  const std::vector<float> resumed =
      Train(ClassifierSolver(layers, dir.file("resumed"), 10, "snapshot: 5"),
            dir.file("straight_iter_5.solverstate"));
  EXPECT_EQ(ReadBytes(dir.file("resumed_iter_10.caffemodel")),
            ReadBytes(dir.file("straight_iter_10.caffemodel")));
  EXPECT_EQ(resumed, Tail(straight, 5));
}

// Without random_seed each run draws its own, which keys the shuffles and
// the crops: the state keeps the run's, and a resume seeded from it
// (SeedFromSolverState, as the train tool does) goes on as the run would
// have; one that is not is warned.
TEST(DataResumeTest, ARunWithoutRandomSeedResumesWithItsOwnSeed) {
  ScratchDir dir;
  const std::string layers = ShuffledImages(dir);
  const auto unseeded = [&](const std::string& prefix) {
    std::string text = ClassifierSolver(layers, dir.file(prefix), 10, "snapshot: 5");
    const size_t seed = text.find("random_seed: 3");
    EXPECT_NE(seed, std::string::npos);
    text.erase(seed, std::string("random_seed: 3").size());
    SolverParameter param = ParseText<SolverParameter>(text);
    param.set_snapshot_after_train(false);
    return param;
  };
  const auto train = [](const SolverParameter& param, const std::string& resume) {
    auto solver = SolverRegistry::Create(param);
    LossRecorder recorder;
    solver->AddCallback(&recorder);
    solver->Solve(resume);
    return recorder.losses;
  };
  const std::vector<float> straight = train(unseeded("straight"), "");
  const std::string state_file = dir.file("straight_iter_5.solverstate");
  ASSERT_TRUE(ReadState(state_file).has_random_seed());

  SolverParameter param = unseeded("resumed");
  ASSERT_TRUE(SeedFromSolverState(state_file, &param));
  EXPECT_EQ(param.random_seed(), ReadState(state_file).random_seed());
  EXPECT_EQ(train(param, state_file), Tail(straight, 5));
  EXPECT_EQ(ReadBytes(dir.file("resumed_iter_10.caffemodel")),
            ReadBytes(dir.file("straight_iter_10.caffemodel")));
  // A seed the solver sets is kept.
  SolverParameter seeded = unseeded("seeded");
  seeded.set_random_seed(11);
  EXPECT_FALSE(SeedFromSolverState(state_file, &seeded));
  EXPECT_EQ(seeded.random_seed(), 11);

  // Without it, the resume reads other crops (and orders): other losses.
  LogCapture log;
  EXPECT_NE(train(unseeded("unseeded"), state_file), Tail(straight, 5));
  EXPECT_EQ(log.Containing("in the solver to resume it exactly").size(), 1u);
}

ReplicationOptions CpuReplicas(int n) {
  ReplicationOptions options;
  options.local_replicas = n;
  options.timeout_seconds = 120;
  return options;
}

/// Trains `text` on 2 replica threads (resuming from `resume` if given);
/// returns the losses replica 0 displays.
std::vector<float> TrainTwoReplicas(const std::string& text, const std::string& resume = "") {
  Replicas group(ParseText<SolverParameter>(text), CpuReplicas(2));
  LossRecorder recorder;
  group.solver(0).AddCallback(&recorder);
  group.Solve(resume);
  EXPECT_EQ(AllParams(group.solver(1).net()), AllParams(group.solver(0).net()));
  return recorder.losses;
}

// Each replica reads its own blocks of the stream: the root gathers every
// replica's position into the state, and each resumes its own.
TEST(DataResumeTest, TwoReplicaThreadsResumeBitIdentically) {
  ScratchDir dir;
  WriteRecords(dir.file("db"), 30, -1);
  const std::string layers = DataLayers(dir.file("db"), 2);
  const std::vector<float> straight =
      TrainTwoReplicas(ClassifierSolver(layers, dir.file("straight"), 8, "snapshot: 4"));
  // After 4 global batches of 2 x 2: replica 0 read blocks 0, 2, 4, 6 and
  // stopped after block 6, replica 1 after block 7.
  const SolverState state = ReadState(dir.file("straight_iter_4.solverstate"));
  ASSERT_EQ(state.data_position_size(), 2);
  EXPECT_EQ(state.data_position(0).replica(), 0);
  EXPECT_EQ(state.data_position(0).stream_position(), 14);
  EXPECT_EQ(state.data_position(1).replica(), 1);
  EXPECT_EQ(state.data_position(1).stream_position(), 16);
  EXPECT_EQ(state.data_position(1).num_replicas(), 2);

  const std::vector<float> resumed =
      TrainTwoReplicas(ClassifierSolver(layers, dir.file("resumed"), 8, "snapshot: 4"),
                       dir.file("straight_iter_4.solverstate"));
  EXPECT_EQ(ReadBytes(dir.file("resumed_iter_8.caffemodel")),
            ReadBytes(dir.file("straight_iter_8.caffemodel")));
  EXPECT_EQ(resumed, Tail(straight, 4));

  // One replica resuming two replicas' state goes on after the furthest
  // stream (approximately: its batches are made up differently), warning.
  auto single = MakeSolver(ClassifierSolver(layers, dir.file("single"), 8));
  LogCapture log;
  single->Restore(dir.file("straight_iter_4.solverstate"));
  EXPECT_EQ(log.Containing("was written by 2 replica(s), this run has 1").size(), 1u);
  const DataReadPosition position = PositionOf(*single, "data");
  EXPECT_EQ(position.stream_position(), 0);
  EXPECT_EQ(position.index(), 16);
  EXPECT_EQ(position.key(), "00000016");
}

}  // namespace
}  // namespace demi
