// Data-parallel replication in one process: sharded data, 1 x 64 = 2 x 32 =
// 4 x 16 replicas, BatchNorm statistics averaged into tests and snapshots.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <utility>

#include "data_test_util.hpp"
#include "demi/layer_registry.hpp"
#include "demi/layers/data_layer.hpp"
#include "demi/parallel/replica_sync.hpp"
#include "demi/parallel/replicas.hpp"
#include "demi/util/math.hpp"
#include "demi/util/threads.hpp"
#include "log_capture.hpp"
#include "replication_test_util.hpp"
#include "solver_test_util.hpp"

namespace demi {
namespace {

ReplicationOptions CpuReplicas(int n) {
  ReplicationOptions options;
  options.local_replicas = n;
  options.timeout_seconds = 120;
  return options;
}

TEST(ReplicationTest, DataShardsConcatenateToTheSingleReplicaBatches) {
  ScratchDir dir;
  const int records = 24;
  WriteBandsDB(dir.file("db"), records);
  auto data_layer = [&](int batch, int replica, int replicas) {
    LayerParameter param = ParseText<LayerParameter>(
        StrCat("name: 'd' type: 'Data' top: 'data' top: 'label' data_param { source: '",
               dir.file("db"), "' batch_size: ", batch, " backend: LMDB }"));
    auto layer = std::unique_ptr<BaseDataLayer>(
        static_cast<BaseDataLayer*>(LayerRegistry::Create(param).release()));
    Context context;
    context.replica = replica;
    context.num_replicas = replicas;
    layer->set_context(context);
    return layer;
  };
  // 2 ranks x 2 replicas: shards 0..3, 3 records each per global batch of 12.
  const int shards = 4, batch = 3, batches = 6;  // 6 x 12 records = 3 epochs
  auto single = data_layer(batch * shards, 0, 1);
  Blob single_data, single_label;
  single->SetUp({}, {&single_data, &single_label});
  std::vector<std::unique_ptr<BaseDataLayer>> layers;
  std::vector<Blob> data(shards), label(shards);
  for (int s = 0; s < shards; ++s) {
    layers.push_back(data_layer(batch, s, shards));
    layers.back()->SetUp({}, {&data[s], &label[s]});
  }
  std::map<std::pair<int, int>, int> reads;  // (epoch, label-indexed record) -> times read
  int64_t position = 0;
  for (int b = 0; b < batches; ++b) {
    single->Forward({}, {&single_data, &single_label});
    std::vector<float> concatenated;
    for (int s = 0; s < shards; ++s) {
      layers[s]->Forward({}, {&data[s], &label[s]});
      concatenated.insert(concatenated.end(), data[s].cpu_data(),
                          data[s].cpu_data() + data[s].count());
      for (int i = 0; i < batch; ++i, ++position) {
        // Record (position % records) of epoch (position / records) went to shard s.
        EXPECT_EQ(label[s].cpu_data()[i], static_cast<float>(position % records % 10));
        ++reads[{static_cast<int>(position / records), static_cast<int>(position % records)}];
      }
    }
    ASSERT_EQ(concatenated, DataOf(single_data)) << "global batch " << b;
  }
  ASSERT_EQ(reads.size(), 3u * records);                       // every record of every epoch ...
  for (const auto& [key, times] : reads) EXPECT_EQ(times, 1);  // ... read once
}

/// Trains LeNet (no BatchNorm) on a fixed dataset with a global batch of 64
/// split over 1, 2 and 4 CPU replicas: the same params after 50 iterations
/// (only float summation order differs; see LeNetSolver).
class ReplicaEquivalenceTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // CPU replicas run on one thread each (2 cores; OpenMP and OpenBLAS); so
    // does the reference, so that only the split of the batch differs.
    blas_threads_ = BlasThreads();
    omp_threads_ = Threads();
    SetThreads(1);
    dir_ = new ScratchDir();
    WriteBandsDB(dir_->file("db"), 200);
    reference_ = MakeSolver(LeNetSolver(dir_->file("db"), 64)).release();
    reference_->Solve();
  }
  static void TearDownTestSuite() {
    delete reference_;
    delete dir_;
    omp_set_num_threads(omp_threads_);
    SetBlasThreads(blas_threads_);
  }

  void ExpectReplicasMatchReference(int replicas) {
    Replicas group(ParseText<SolverParameter>(LeNetSolver(dir_->file("db"), 64 / replicas)),
                   CpuReplicas(replicas));
    ASSERT_EQ(group.total(), replicas);
    LogCapture log(google::GLOG_INFO);
    {
      InfoToSinksOnly info;
      group.Solve("");
    }
    for (int i = 0; i < replicas; ++i) {
      EXPECT_EQ(group.solver(i).iter(), 50);
      const double difference = WorstRelativeDifference(reference_->net(), group.solver(i).net());
      EXPECT_LT(difference, 1e-5) << "replica " << i << " of " << replicas;
      RecordProperty(StrCat("worst_relative_difference_", replicas, "_", i), StrCat(difference));
      // Replicas apply identical updates: bit-equal to replica 0.
      EXPECT_EQ(AllParams(group.solver(i).net()), AllParams(group.solver(0).net()));
    }
    // Loss scaling: the displayed loss is the global batch's, not a shard's.
    EXPECT_NEAR(group.solver(0).smoothed_loss(), reference_->smoothed_loss(),
                1e-4 * std::abs(reference_->smoothed_loss()));
    // So are the train net's outputs shown under it (average_loss 1: the same
    // value), not the root replica's own.
    int displays = 0;
    float loss = -1;
    for (const std::string& message : log.messages()) {
      const size_t at = message.find(", loss = ");
      if (message.rfind("Iteration ", 0) == 0 && at != std::string::npos) {
        loss = std::stof(message.substr(at + 9));
      } else if (message.find("Train net output #0: loss = ") != std::string::npos) {
        const float output = std::stof(message.substr(message.find(" = ") + 3));
        EXPECT_NEAR(output, loss, 1e-5 * std::abs(loss)) << message;
        ++displays;
      }
    }
    EXPECT_EQ(displays, 5);
  }

  static ScratchDir* dir_;
  static Solver* reference_;
  static int blas_threads_;
  static int omp_threads_;
};
int ReplicaEquivalenceTest::blas_threads_ = 0;
int ReplicaEquivalenceTest::omp_threads_ = 0;
ScratchDir* ReplicaEquivalenceTest::dir_ = nullptr;
Solver* ReplicaEquivalenceTest::reference_ = nullptr;

TEST_F(ReplicaEquivalenceTest, TrainingMovedTheParams) {
  auto untrained = MakeSolver(LeNetSolver(dir_->file("db"), 64));
  EXPECT_GT(WorstRelativeDifference(untrained->net(), reference_->net()), 1e-2);
  EXPECT_LT(reference_->smoothed_loss(), 2.0f);  // learned something (ln 10 = 2.3)
}

TEST_F(ReplicaEquivalenceTest, TwoReplicasOf32) { ExpectReplicasMatchReference(2); }

TEST_F(ReplicaEquivalenceTest, FourReplicasOf16) { ExpectReplicasMatchReference(4); }

/// LeNet over 2 replicas with all-reduce buckets of `bucket_bytes`.
std::vector<float> TrainTwoReplicas(const std::string& db, size_t bucket_bytes,
                                    double* collectives_per_step, int* buckets) {
  ReplicationOptions options = CpuReplicas(2);
  options.bucket_bytes = bucket_bytes;
  SolverParameter param = ParseText<SolverParameter>(LeNetSolver(db, 32));
  param.set_max_iter(6);
  Replicas group(param, options);
  group.Solve("");
  *collectives_per_step = static_cast<double>(group.sync(0).collectives()) / group.sync(0).steps();
  *buckets = group.sync(0).num_buckets();
  EXPECT_EQ(AllParams(group.solver(1).net()), AllParams(group.solver(0).net()));
  return AllParams(group.solver(0).net());
}

TEST(ReplicationBucketsTest, BucketSizeChangesTheCollectivesNotTheResult) {
  ScratchDir dir;
  WriteBandsDB(dir.file("db"), 100);
  double per_param = 0, small = 0, whole = 0;
  int per_param_buckets = 0, small_buckets = 0, whole_buckets = 0;
  const std::vector<float> reference =
      TrainTwoReplicas(dir.file("db"), 0, &per_param, &per_param_buckets);
  // LeNet: 8 params (conv1, conv2, ip1, ip2: weights and biases), ip1's
  // weights 1.6 MB, the rest under 100 KB.
  EXPECT_EQ(per_param_buckets, 8);
  EXPECT_EQ(per_param, 8.0);
  EXPECT_EQ(TrainTwoReplicas(dir.file("db"), 64 << 10, &small, &small_buckets), reference);
  EXPECT_GT(small_buckets, 1);
  EXPECT_LT(small_buckets, 8);
  EXPECT_EQ(small, small_buckets);
  EXPECT_EQ(TrainTwoReplicas(dir.file("db"), size_t{25} << 20, &whole, &whole_buckets), reference);
  EXPECT_EQ(whole_buckets, 1);
  EXPECT_EQ(whole, 1.0);
}

// Where ReplicaSync says a bucket leaves (HandsOverAfter, where a CUDA graph
// of backward ends) is where its backward hook hands one over: each hook
// called in backward's order, then a wait for what it queued. On LeNet and
// on a net whose BatchNorm absorbs a Scale and a ReLU (their hooks run after
// BatchNorm's), in several buckets and in one per param.
TEST(ReplicationBucketsTest, BucketsLeaveAfterTheLayersHandsOverAfterNames) {
  ScratchDir dir;
  WriteBandsDB(dir.file("db"), 64);
  const std::string fused = R"(
    base_lr: 0.01 lr_policy: "fixed" max_iter: 1 snapshot_after_train: false
    net_param {
      layer { name: "data" type: "DummyData" top: "x" top: "label"
              dummy_data_param { shape { dim: 4 dim: 3 dim: 8 dim: 8 } shape { dim: 4 }
                                 data_filler { type: "gaussian" std: 1 }
                                 data_filler { type: "constant" value: 1 } } }
      layer { name: "conv" type: "Convolution" bottom: "x" top: "conv"
              convolution_param { num_output: 16 kernel_size: 3
                                  weight_filler { type: "xavier" } } }
      layer { name: "bn" type: "BatchNorm" bottom: "conv" top: "conv" }
      layer { name: "scale" type: "Scale" bottom: "conv" top: "conv"
              scale_param { bias_term: true } }
      layer { name: "relu" type: "ReLU" bottom: "conv" top: "conv" }
      layer { name: "ip" type: "InnerProduct" bottom: "conv" top: "scores"
              inner_product_param { num_output: 3 weight_filler { type: "xavier" } } }
      layer { name: "loss" type: "SoftmaxWithLoss" bottom: "scores" bottom: "label" top: "loss" }
    })";
  for (const std::string& text : {LeNetSolver(dir.file("db"), 32), fused}) {
    for (size_t bucket_bytes : {size_t{0}, size_t{4} << 10, size_t{64} << 10}) {
      SCOPED_TRACE(bucket_bytes);
      ReplicationOptions options = CpuReplicas(1);
      options.bucket_bytes = bucket_bytes;
      Replicas group(ParseText<SolverParameter>(text), options);
      ReplicaSync& sync = group.sync(0);
      const Net& net = group.solver(0).net();
      sync.OnStart();
      int64_t handed_over = sync.handed_over();
      int hand_overs = 0;
      for (int step = static_cast<int>(net.layers().size()) - 1; step >= 0; --step) {
        for (int layer_id : net.BackwardHookLayers(step)) {
          sync.OnLayerBackward(layer_id);
          const bool now = sync.handed_over() > handed_over;
          EXPECT_EQ(sync.HandsOverAfter(layer_id), now) << net.layer_names()[layer_id];
          hand_overs += now ? 1 : 0;
          handed_over = sync.handed_over();
        }
      }
      EXPECT_EQ(handed_over, sync.num_buckets());
      EXPECT_GT(hand_overs, bucket_bytes == 0 ? 2 : 0);
      sync.OnGradientsReady();  // waits for the reductions
      EXPECT_EQ(sync.collectives(), sync.num_buckets());
    }
  }
}

// A backward that left a bucket behind (a hook that did not run) stops the
// run at OnGradientsReady, naming the counts, instead of letting the
// replicas' params part ways.
TEST(ReplicationBucketsTest, ABucketLeftBehindIsAnError) {
  ScratchDir dir;
  WriteBandsDB(dir.file("db"), 64);
  ReplicationOptions options = CpuReplicas(1);
  options.bucket_bytes = 64 << 10;
  Replicas group(ParseText<SolverParameter>(LeNetSolver(dir.file("db"), 32)), options);
  ReplicaSync& sync = group.sync(0);
  const Net& net = group.solver(0).net();
  ASSERT_GT(sync.num_buckets(), 1);
  sync.OnStart();
  // Backward's hooks but the last layer's (conv1 finishes the last bucket).
  for (int step = static_cast<int>(net.layers().size()) - 1; step > 0; --step) {
    for (int layer_id : net.BackwardHookLayers(step)) {
      if (net.layer_names()[layer_id] != "conv1") sync.OnLayerBackward(layer_id);
    }
  }
  ExpectErrorContaining([&] { sync.OnGradientsReady(); },
                        {"replica 0", StrCat(sync.num_buckets() - 1, " of ", sync.num_buckets()),
                         "gradient buckets"});
}

/// A world of one that queues its collectives as NCCL does: it records the
/// floats each queued all-reduce covers and the order of queues ("q"),
/// joins ("j") and backward's hooks ("l", from LayerNotes), counts the
/// worker's waits, and fails them on request.
class QueuingCommunicator : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  const char* backend() const override { return "queuing"; }
  void AllReduceSum(float*, size_t) override {}
  void Broadcast(void*, size_t, int) override {}
  void Barrier() override {}
  bool queues_collectives() const override { return true; }
  void QueueAllReduceSum(float*, size_t count) override {
    std::lock_guard<std::mutex> lock(mutex_);
    calls_ += "q";
    queued_floats_ += static_cast<int64_t>(count);
  }
  void JoinQueued() override {
    std::lock_guard<std::mutex> lock(mutex_);
    calls_ += "j";
  }
  void WaitQueued() override {
    std::lock_guard<std::mutex> lock(mutex_);
    ++waits_;
    if (fail_) throw CommError("queuing: the peer died");
  }
  /// Notes a backward hook in the same record.
  void NoteLayerBackward() {
    std::lock_guard<std::mutex> lock(mutex_);
    calls_ += "l";
  }
  void FailWaits() {
    std::lock_guard<std::mutex> lock(mutex_);
    fail_ = true;
  }
  std::string calls() {
    std::lock_guard<std::mutex> lock(mutex_);
    return calls_;
  }
  int64_t queued_floats() {
    std::lock_guard<std::mutex> lock(mutex_);
    return queued_floats_;
  }
  /// The worker's waits, once it has made `at_least` of them (or 10 s).
  int waits(int at_least) {
    for (int i = 0; i < 10000; ++i) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (waits_ >= at_least) return waits_;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    std::lock_guard<std::mutex> lock(mutex_);
    return waits_;
  }

 private:
  std::mutex mutex_;
  std::string calls_;
  int64_t queued_floats_ = 0;
  int waits_ = 0;
  bool fail_ = false;
};

class LayerNotes : public Solver::Callback {
 public:
  explicit LayerNotes(QueuingCommunicator* comm) : comm_(comm) {}
  void OnLayerBackward(int) override { comm_->NoteLayerBackward(); }

 private:
  QueuingCommunicator* comm_;
};

// With a communicator that queues its collectives (NCCL), each bucket is
// queued from backward's hook, every one before the step's join, and the
// host waits for none: the worker waits once for each, and training is
// what it is without replication (a world of one sums nothing).
TEST(ReplicationQueuedTest, BucketsAreQueuedFromBackwardAndJoinedOncePerStep) {
  ScratchDir dir;
  WriteBandsDB(dir.file("db"), 64);
  const std::string text = LeNetSolver(dir.file("db"), 16);
  auto alone = MakeSolver(text);
  alone->Step(4);
  auto solver = MakeSolver(text);
  QueuingCommunicator comm;
  {
    ReplicaSync sync(solver.get(), &comm, 64 << 10);
    ASSERT_TRUE(sync.queues());
    ASSERT_GT(sync.num_buckets(), 1);
    sync.Attach();
    LayerNotes notes(&comm);
    solver->AddCallback(&notes);
    solver->Step(4);
    solver->RemoveCallback(&notes);
    // Each step: its buckets queued among backward's hooks (the first
    // before the last hook), then one join.
    const std::string calls = comm.calls();
    size_t begin = 0;
    for (int step = 0; step < 4; ++step) {
      const size_t join = calls.find('j', begin);
      ASSERT_NE(join, std::string::npos) << step;
      const std::string hooks = calls.substr(begin, join - begin);
      EXPECT_EQ(std::count(hooks.begin(), hooks.end(), 'q'), sync.num_buckets()) << hooks;
      EXPECT_LT(hooks.find('q'), hooks.rfind('l')) << hooks;
      begin = join + 1;
    }
    EXPECT_EQ(begin, calls.size());
    EXPECT_EQ(sync.collectives(), 4 * sync.num_buckets());
    EXPECT_EQ(comm.waits(4 * sync.num_buckets()), 4 * sync.num_buckets());
    EXPECT_EQ(sync.wait_seconds(), 0.0);
  }
  // Every param of LeNet is reduced: each step's buckets cover them all,
  // within the diff block.
  int64_t params = 0;
  for (const Blob* param : solver->net().learnable_params()) params += param->count();
  const auto& segments = solver->net().param_block().segments();
  const int64_t block = segments.back().offset + segments.back().count - segments.front().offset;
  EXPECT_GE(comm.queued_floats(), 4 * params);
  EXPECT_LE(comm.queued_floats(), 4 * block);
  EXPECT_EQ(AllParams(solver->net()), AllParams(alone->net()));
}

// A queued all-reduce that fails or times out is found by the worker's wait
// and thrown at the end of the replica's step or the start of the next,
// naming the failure.
TEST(ReplicationQueuedTest, AFailedWaitStopsTheNextStep) {
  ScratchDir dir;
  WriteBandsDB(dir.file("db"), 64);
  auto solver = MakeSolver(LeNetSolver(dir.file("db"), 16));
  QueuingCommunicator comm;
  ReplicaSync sync(solver.get(), &comm);
  sync.Attach();
  solver->Step(1);
  EXPECT_EQ(comm.waits(1), 1);
  comm.FailWaits();
  // The worker watches the next step's bucket from when it is queued: that
  // step ends with the error, or a later one starts with it.
  ExpectErrorContaining(
      [&] {
        for (int step = 0; step < 5; ++step) {
          solver->Step(1);
          comm.waits(2 + step);
        }
      },
      {"queuing: the peer died"});
}

// A replica thread, and the all-reduce worker beside it, run OpenMP on the
// threads the process was given (here: one more than OpenMP's default for
// new threads, so that inheriting the default would show), not on every core.
TEST(ReplicationThreadsTest, ReplicaThreadsKeepTheThreadsOfTheProcess) {
  ScratchDir dir;
  WriteBandsDB(dir.file("db"), 64);
  const int before = omp_get_max_threads();
  const int wanted = DefaultThreads() + 1;
  omp_set_num_threads(wanted);
  for (int replicas : {1, 2}) {
    Replicas group(ParseText<SolverParameter>(LeNetSolver(dir.file("db"), 16)),
                   CpuReplicas(replicas));
    std::vector<int> seen(replicas, 0);
    group.Run([&](int i) { seen[i] = omp_get_max_threads(); });
    // Several CPU replicas share the threads; one keeps them all.
    const int share = replicas == 1 ? wanted : std::max(1, wanted / replicas);
    EXPECT_EQ(seen, std::vector<int>(replicas, share)) << replicas << " replica(s)";
  }
  omp_set_num_threads(before);
}

std::string BatchNormSolver(const std::string& source, int batch, const std::string& prefix) {
  return StrCat(R"(
    base_lr: 0.05 momentum: 0.9 lr_policy: "fixed" max_iter: 100 display: 0
    random_seed: 5 snapshot_after_train: false test_iter: 5 test_interval: 1000
    test_initialization: false snapshot_prefix: ")",
                prefix, R"("
    net_param {
      layer { name: "d" type: "Data" top: "data" top: "label" include { phase: TRAIN }
              transform_param { scale: 0.00390625 }
              data_param { source: ")",
                source, R"(" batch_size: )", batch, R"( backend: LMDB } }
      layer { name: "d" type: "Data" top: "data" top: "label" include { phase: TEST }
              transform_param { scale: 0.00390625 }
              data_param { source: ")",
                source, R"(" batch_size: 20 backend: LMDB } }
      layer { name: "conv" type: "Convolution" bottom: "data" top: "conv"
              convolution_param { num_output: 4 kernel_size: 4 stride: 3
                                  weight_filler { type: "gaussian" std: 0.1 } } }
      layer { name: "bn" type: "BatchNorm" bottom: "conv" top: "conv" }
      layer { name: "scale" type: "Scale" bottom: "conv" top: "conv" scale_param { bias_term: true } }
      layer { name: "relu" type: "ReLU" bottom: "conv" top: "conv" }
      layer { name: "ip" type: "InnerProduct" bottom: "conv" top: "ip"
              inner_product_param { num_output: 10 weight_filler { type: "gaussian" std: 0.05 } } }
      layer { name: "loss" type: "SoftmaxWithLoss" bottom: "ip" bottom: "label" top: "loss" }
      layer { name: "accuracy" type: "Accuracy" bottom: "ip" bottom: "label" top: "accuracy"
              include { phase: TEST } }
    })");
}

std::vector<std::vector<float>> BatchNormStatistics(Solver& solver) {
  std::vector<std::vector<float>> stats;
  for (const auto& blob : solver.net().layer_by_name("bn")->blobs()) stats.push_back(DataOf(*blob));
  return stats;
}

TEST(ReplicationBatchNormTest, StatisticsAreAveragedIntoTestsAndSnapshots) {
  ScratchDir dir;
  WriteBandsDB(dir.file("db"), 100);
  const std::string text = BatchNormSolver(dir.file("db"), 10, dir.file("bn"));
  Replicas group(ParseText<SolverParameter>(text), CpuReplicas(2));
  EXPECT_EQ(group.solver(0).test_nets().size(), 1u);
  EXPECT_TRUE(group.solver(1).test_nets().empty());  // only the root tests
  group.Run([&](int i) {
    group.sync(i).BroadcastState();
    group.solver(i).Step(20);
  });
  const auto stats0 = BatchNormStatistics(group.solver(0));
  const auto stats1 = BatchNormStatistics(group.solver(1));
  ASSERT_EQ(stats0.size(), 3u);
  ASSERT_NE(stats0[0], stats1[0]) << "replicas saw different data: their means should differ";
  for (const char* layer : {"conv", "scale", "ip"}) {  // learned params stay equal
    for (size_t b = 0; b < 2; ++b) {
      EXPECT_EQ(DataOf(*group.solver(0).net().layer_by_name(layer)->blobs()[b]),
                DataOf(*group.solver(1).net().layer_by_name(layer)->blobs()[b]))
          << layer;
    }
  }

  group.Run([&](int i) { group.sync(i).AverageComputedParams(); });
  for (size_t b = 0; b < stats0.size(); ++b) {
    std::vector<float> average(stats0[b].size());
    for (size_t k = 0; k < average.size(); ++k) {
      average[k] = (stats0[b][k] + stats1[b][k]) * 0.5f;
    }
    ExpectNear(BatchNormStatistics(group.solver(0))[b], average, 1e-6f);
    EXPECT_EQ(BatchNormStatistics(group.solver(0))[b], BatchNormStatistics(group.solver(1))[b]);
  }

  const std::vector<float> scores = group.solver(0).Test(0);
  ASSERT_EQ(scores.size(), 2u);  // accuracy, loss
  group.solver(0).Snapshot();
  group.solver(1).Snapshot();  // not the root: writes nothing
  auto restored = MakeSolver(text);
  restored->Restore(dir.file("bn_iter_20.solverstate"));
  EXPECT_EQ(BatchNormStatistics(*restored), BatchNormStatistics(group.solver(0)));
  EXPECT_EQ(restored->Test(0), scores);
}

/// Replicas drawing random data and Dropout masks, with BatchNorm, SGD with
/// momentum.
std::string RandomStreamsSolver(const std::string& prefix, const std::string& extra) {
  return StrCat(R"(
    base_lr: 0.1 momentum: 0.9 lr_policy: "fixed" max_iter: 8 display: 0 random_seed: 7
    snapshot_prefix: ")",
                prefix, "\" ", extra, R"(
    net_param {
      layer { name: "data" type: "DummyData" top: "data" top: "label"
              dummy_data_param { shape { dim: 3 dim: 6 } shape { dim: 3 }
                                 data_filler { type: "gaussian" }
                                 data_filler { type: "constant" value: 1 } } }
      layer { name: "drop" type: "Dropout" bottom: "data" top: "data" }
      layer { name: "ip" type: "InnerProduct" bottom: "data" top: "ip"
              inner_product_param { num_output: 3 weight_filler { type: "gaussian" std: 0.1 } } }
      layer { name: "bn" type: "BatchNorm" bottom: "ip" top: "ip" }
      layer { name: "loss" type: "SoftmaxWithLoss" bottom: "ip" bottom: "label" top: "loss" }
    })");
}

std::string FileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Each replica draws its own DummyData and Dropout masks and keeps its own
// BatchNorm statistics, averaged only into tests and snapshots: the snapshot
// holds every replica's, each resumes its own, and when snapshots come
// changes nothing.
TEST(ReplicationResumeTest, EveryReplicasOwnStateResumesBitIdentically) {
  ScratchDir dir;
  auto train = [&](const std::string& prefix, const std::string& extra, const std::string& resume) {
    Replicas group(ParseText<SolverParameter>(RandomStreamsSolver(dir.file(prefix), extra)),
                   CpuReplicas(2));
    group.Solve(resume);
    return FileBytes(dir.file(prefix + "_iter_8.caffemodel"));
  };
  const std::string straight = train("straight", "snapshot: 4", "");
  EXPECT_FALSE(straight.empty());
  EXPECT_EQ(train("plain", "", ""), straight);  // the snapshot at 4 changed nothing
  SolverState state;
  ReadProtoFromBinaryFile(dir.file("straight_iter_4.solverstate"), &state);
  ASSERT_EQ(state.replica_state_size(), 2);
  const ReplicaState& root = state.replica_state(0);
  const ReplicaState& other = state.replica_state(1);
  EXPECT_EQ(root.replica(), 0);
  EXPECT_EQ(root.rng_state_size(), 0);  // the root's are rng_state
  EXPECT_EQ(other.replica(), 1);
  ASSERT_EQ(other.rng_state_size(), state.rng_state_size());  // a train net only
  EXPECT_NE(other.rng_state(0), state.rng_state(0));
  ASSERT_EQ(root.computed_param_size(), 3);  // mean, variance, factor
  ASSERT_EQ(other.computed_param_size(), 3);
  EXPECT_NE(root.computed_param(0).data(0), other.computed_param(0).data(0));

  EXPECT_EQ(train("resumed", "", dir.file("straight_iter_4.solverstate")), straight);

  // A state without the replicas' own (an older one): they start their
  // streams afresh and their statistics from the average, saying so once.
  state.clear_replica_state();
  WriteProtoToBinaryFile(state, dir.file("old.solverstate"));
  LogCapture log;
  EXPECT_NE(train("old", "", dir.file("old.solverstate")), straight);
  EXPECT_EQ(log.Containing("holds the own state (random streams, BatchNorm statistics) of 0 "
                           "replica(s), this run has 2")
                .size(),
            1u);
}

// The final test averages the replicas' own statistics after the last
// display pass moved them, whether a snapshot came at the end or not.
TEST(ReplicationBatchNormTest, TheFinalTestIsTheSameWithOrWithoutAFinalSnapshot) {
  ScratchDir dir;
  WriteBandsDB(dir.file("db"), 100);
  auto final_test = [&](bool snapshot) {
    SolverParameter param =
        ParseText<SolverParameter>(BatchNormSolver(dir.file("db"), 10, dir.file("bn")));
    param.set_max_iter(6);
    param.set_display(3);
    param.set_test_interval(6);
    param.set_snapshot_after_train(snapshot);
    Replicas group(param, CpuReplicas(2));
    InfoToSinksOnly info;
    LogCapture log(google::GLOG_INFO);
    group.Solve("");
    return log.Containing("Test net output #");
  };
  const std::vector<std::string> without = final_test(false);
  ASSERT_EQ(without.size(), 2u);  // accuracy and loss, after training
  EXPECT_EQ(final_test(true), without);
}

TEST(ReplicationTest, AReplicaThatFailsStopsTheOthers) {
  ScratchDir dir;
  WriteBandsDB(dir.file("db"), 40);
  Replicas group(ParseText<SolverParameter>(LeNetSolver(dir.file("db"), 4)), CpuReplicas(3));
  ExpectErrorContaining(
      [&] {
        group.Run([&](int i) {
          if (i == 2) ThrowError("replica two broke");
          group.solver(i).Step(5);
        });
      },
      {"replica two broke"});
}

}  // namespace
}  // namespace demi
