// Whole nets on GPUs: LeNet trained on a GPU against the CPU, two GPU
// replicas (NCCL) against one GPU, and the NCCL communicator itself. They run
// where devices exist (two for the replica cases) and skip elsewhere.
#include <chrono>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "data_test_util.hpp"
#include "demi/parallel/nccl_communicator.hpp"
#include "demi/parallel/replicas.hpp"
#include "demi/step_graph.hpp"
#ifndef CPU_ONLY
#include "demi/util/math_gpu.hpp"
#endif
#include "gpu_test_util.hpp"
#include "replication_test_util.hpp"
#include "solver_test_util.hpp"
#include "storage_compare_util.hpp"

namespace demi {
namespace {

std::unique_ptr<Solver> MakeGpuSolver(const std::string& text) {
  SolverParameter param = ParseText<SolverParameter>(text);
  Context context;
  context.device = Device::kGPU;
  SetCurrentDevice(0);
  return SolverRegistry::Create(param, context);
}

/// Trains the solver `text` on the CPU and on GPU 0: the params stay within
/// 1e-5 of each other (relative) and the smoothed losses within 1e-4.
void ExpectCpuAndGpuTrainAlike(const std::string& text) {
  auto cpu = MakeSolver(text);
  cpu->Solve();
  auto gpu = MakeGpuSolver(text);
  gpu->Solve();
  EXPECT_LT(WorstRelativeDifference(cpu->net(), gpu->net()), 1e-5);
  EXPECT_NEAR(gpu->smoothed_loss(), cpu->smoothed_loss(), 1e-4 * cpu->smoothed_loss());
}

// The reference engine on both devices: im2col and GEMM in the same order of
// terms, so the two stay within rounding over 50 iterations (an H100 gave
// 1.5e-7).
TEST(GpuTrainingTest, LeNetOnAGpuTrainsTheParamsTheCpuTrains) {
  if (!HaveGpu()) GTEST_SKIP() << "no CUDA device";
  ScratchDir dir;
  WriteBandsDB(dir.file("db"), 200);
  ExpectCpuAndGpuTrainAlike(LeNetSolver(dir.file("db"), 64, "engine: CAFFE"));
}

// The default engines: cuDNN on the GPU, oneDNN on the CPU. Their
// convolutions round otherwise than im2col, and the band images hold exact
// ties for max pooling, which other rounding breaks otherwise, sending a
// whole gradient elsewhere. On an H100 both stayed within 1e-6 of the
// reference for 20 iterations and left it by 5e-4 (oneDNN) and 2e-3 (cuDNN)
// by iteration 50, so this compares 20.
TEST(GpuTrainingTest, LeNetWithCudnnTrainsTheParamsOneDnnTrains) {
  if (!HaveGpu()) GTEST_SKIP() << "no CUDA device";
  ScratchDir dir;
  WriteBandsDB(dir.file("db"), 200);
  std::string text = LeNetSolver(dir.file("db"), 64);
  text.replace(text.find("max_iter: 50"), 12, "max_iter: 20");
  ExpectCpuAndGpuTrainAlike(text);
}

// The losses a GPU solver leaves on the device and reads in batches
// (PendingLosses: at displays, and every Solver::kGpuPendingLosses
// iterations) are the ones it reads every iteration, into the same smoothed
// loss; nothing else changes.
TEST(GpuTrainingTest, LossesReadInBatchesTrainWhatLossesReadEachStepTrain) {
  if (!HaveGpu()) GTEST_SKIP() << "no CUDA device";
  ScratchDir dir;
  WriteBandsDB(dir.file("db"), 200);
  const std::string text = LeNetSolver(dir.file("db"), 16, "engine: CAFFE average_loss: 7");
  auto each = MakeGpuSolver(text);
  each->set_pending_losses(1);
  each->Solve();
  auto batched = MakeGpuSolver(text);
  EXPECT_EQ(batched->net().context().device, Device::kGPU);
  batched->Solve();
  EXPECT_EQ(WorstRelativeDifference(each->net(), batched->net()), 0.0);
  EXPECT_EQ(each->smoothed_loss(), batched->smoothed_loss());
}

// A label outside the classes, found on the device while training, stops the
// run when the losses are read, with the CPU's message.
TEST(GpuTrainingTest, ABadLabelFoundOnTheDeviceStopsTheRun) {
  if (!HaveGpu()) GTEST_SKIP() << "no CUDA device";
  auto solver = MakeGpuSolver(R"(
    base_lr: 0.01 lr_policy: "fixed" snapshot_after_train: false
    net_param {
      layer { name: "data" type: "DummyData" top: "x" top: "label"
              dummy_data_param { shape { dim: 4 dim: 3 } shape { dim: 4 }
                                 data_filler { type: "gaussian" }
                                 data_filler { type: "constant" value: 5 } } }
      layer { name: "ip" type: "InnerProduct" bottom: "x" top: "scores"
              inner_product_param { num_output: 3 weight_filler { type: "xavier" } } }
      layer { name: "loss" type: "SoftmaxWithLoss" bottom: "scores" bottom: "label" top: "loss" }
    })");
  ExpectErrorContaining([&] { solver->Step(3); }, {"label 5 at index 0", "outside [0, 3)"});
}

// A ResNet basic block (in-place BatchNorm, Scale and ReLU, a branch, a sum)
// on GPU 0 against the CPU in plain FP32: the BatchNorm and Scale kernels'
// per-channel sums (cut among blocks), the sum's and the branch's one-pass
// kernels, all in a planned net; each BatchNorm + Scale + ReLU fused on the
// GPU (one kernel forward and a sum and a kernel backward, net_fusion.cpp)
// against the same fused and apart on the CPU.
TEST(GpuTrainingTest, ResNetBlockOnAGpuMatchesTheCpu) {
  if (!HaveGpu()) GTEST_SKIP() << "no CUDA device";
  SetCurrentDevice(0);
  auto gpu = BlockNet(FLOAT, ARENA, Device::kGPU);
  for (bool fused_on_cpu : {true, false}) {
    SCOPED_TRACE(fused_on_cpu ? "CPU fused" : "CPU apart");
    auto cpu = BlockNet(FLOAT, ARENA, Device::kCPU, fused_on_cpu);
    ExpectNetsRunNear(cpu.get(), gpu.get(), 1e-4f, 1e-3);
  }
  auto gpu_apart = BlockNet(FLOAT, ARENA, Device::kGPU, false);
  ExpectNetsRunNear(gpu_apart.get(), gpu.get(), 1e-5f, 1e-4);
}

// Frozen BatchNorm (use_global_stats in training, as fine-tuning sets it)
// with its Scale and ReLU fused: the GPU's backward through the stored
// statistics and the ReLU against the CPU's, from running sums that are not
// the identity.
TEST(GpuTrainingTest, FrozenBatchNormBlockOnAGpuMatchesTheCpu) {
  if (!HaveGpu()) GTEST_SKIP() << "no CUDA device";
  SetCurrentDevice(0);
  std::string text = kBlockNet;
  for (size_t at = text.find("type: 'BatchNorm'"); at != std::string::npos;
       at = text.find("type: 'BatchNorm'", at + 1)) {
    text.insert(text.find('}', at), "batch_norm_param { use_global_stats: true } ");
  }
  auto build = [&](Device device) {
    NetParameter param = ParseText<NetParameter>(text);
    param.mutable_state()->set_phase(TRAIN);
    Context context;
    context.device = device;
    return std::make_unique<Net>(param, context);
  };
  auto cpu = build(Device::kCPU);
  auto gpu = build(Device::kGPU);
  for (const char* absorbed : {"scale1", "relu1", "scale2a", "relu2a"}) {
    ASSERT_TRUE(gpu->layer_by_name(absorbed)->absorbed()) << absorbed;
  }
  std::mt19937 random(5);
  std::uniform_real_distribution<float> uniform(0.5f, 2.0f);
  for (const auto& layer : cpu->layers()) {
    if (std::string(layer->type()) != "BatchNorm") continue;
    for (int i = 0; i < 2; ++i) {
      float* sums = layer->blobs()[i]->mutable_cpu_data();
      for (int64_t c = 0; c < layer->blobs()[i]->count(); ++c) sums[c] = uniform(random);
    }
    layer->blobs()[2]->mutable_cpu_data()[0] = 1.5f;
  }
  ExpectNetsRunNear(cpu.get(), gpu.get(), 1e-4f, 1e-3);
}

// The solver's `deterministic: false`: TF32 tensor cores and measured cuDNN
// algorithms. Training follows the CPU's within TF32's rounding (10-bit
// mantissas in each product) over the same 20 iterations as above.
TEST(GpuTrainingTest, LeNetInTensorOpMathTrainsNearTheCpu) {
  if (!HaveGpu()) GTEST_SKIP() << "no CUDA device";
  ScratchDir dir;
  WriteBandsDB(dir.file("db"), 200);
  std::string text = LeNetSolver(dir.file("db"), 64) + " deterministic: false";
  text.replace(text.find("max_iter: 50"), 12, "max_iter: 20");
  auto cpu = MakeSolver(text);
  cpu->Solve();
  auto gpu = MakeGpuSolver(text);
  EXPECT_EQ(gpu->net().context().gpu_math, GpuMath::kTensorOps);
  gpu->Solve();
  EXPECT_LT(WorstRelativeDifference(cpu->net(), gpu->net()), 5e-2);
  EXPECT_NEAR(gpu->smoothed_loss(), cpu->smoothed_loss(), 2e-2 * cpu->smoothed_loss());
}

// One GPU through Replicas: the bucketed all-reduce (each bucket handed to
// the worker at a mark in backward's stream) around a world of one trains
// what a plain GPU solver trains, bit for bit.
TEST(GpuTrainingTest, OneGpuReplicaWithBucketsTrainsWhatOneGpuSolverTrains) {
  if (!HaveGpu()) GTEST_SKIP() << "no CUDA device";
  ScratchDir dir;
  WriteBandsDB(dir.file("db"), 200);
  const std::string text = LeNetSolver(dir.file("db"), 64);
  auto single = MakeGpuSolver(text);
  single->Solve();
  ReplicationOptions options;
  options.gpus = {0};
  options.timeout_seconds = 120;
  options.bucket_bytes = 64 << 10;  // LeNet's 8 params (ip1's weights 1.6 MB) in several buckets
  Replicas group(ParseText<SolverParameter>(text), options);
  group.Solve("");
  EXPECT_EQ(AllParams(group.solver(0).net()), AllParams(single->net()));
  EXPECT_GT(group.sync(0).collectives(), group.sync(0).steps());
}

#ifndef CPU_ONLY
/// The layers the backward hook names, in order, over a run.
class BackwardHookRecorder : public Solver::Callback {
 public:
  void OnLayerBackward(int layer_id) override { layers.push_back(layer_id); }
  std::vector<int> layers;
};

// The same with the passes replayed from CUDA graphs: the backward hook runs
// for the same layers in the same order as when the calls are queued one by
// one, and hands each bucket over every step (a hook lost in the replays
// would leave buckets unreduced: fewer collectives); the params are those of
// the single solver.
TEST(GpuTrainingTest, OneGpuReplicaReplayedFromGraphsHandsEveryBucketOver) {
  if (!HaveGpu()) GTEST_SKIP() << "no CUDA device";
  ScratchDir dir;
  WriteBandsDB(dir.file("db"), 200);
  const std::string text = LeNetSolver(dir.file("db"), 64);
  BackwardHookRecorder queued_hooks, replayed_hooks;  // outlive the solvers
  auto single = MakeGpuSolver(text);
  single->AddCallback(&queued_hooks);
  single->Solve();
  ReplicationOptions options;
  options.gpus = {0};
  options.timeout_seconds = 120;
  options.bucket_bytes = 64 << 10;
  Replicas group(ParseText<SolverParameter>(text + " cuda_graph: true"), options);
  group.solver(0).AddCallback(&replayed_hooks);
  group.Solve("");
  EXPECT_FALSE(queued_hooks.layers.empty());
  EXPECT_EQ(replayed_hooks.layers, queued_hooks.layers);
  EXPECT_EQ(AllParams(group.solver(0).net()), AllParams(single->net()));
  const ReplicaSync& sync = group.sync(0);
  EXPECT_GT(sync.num_buckets(), 1);
  EXPECT_EQ(sync.collectives(), int64_t{sync.steps()} * sync.num_buckets());
  ASSERT_NE(group.solver(0).step_graph(), nullptr);
  EXPECT_GT(group.solver(0).step_graph()->replays(), 40);
}
#endif  // CPU_ONLY

// A GPU replica that throws mid-run wakes the other, which waits in NCCL
// for it: the first error comes back long before --comm_timeout.
TEST(GpuTrainingTest, AGpuReplicaThatFailsStopsTheOthers) {
  if (DeviceCount() < 2) GTEST_SKIP() << "needs 2 CUDA devices";
  ScratchDir dir;
  WriteBandsDB(dir.file("db"), 200);
  ReplicationOptions options;
  options.gpus = {0, 1};
  options.timeout_seconds = 600;
  Replicas group(ParseText<SolverParameter>(LeNetSolver(dir.file("db"), 32)), options);
  const auto start = std::chrono::steady_clock::now();
  ExpectErrorContaining(
      [&] {
        group.Run([&](int i) {
          group.solver(i).Step(3);
          if (i == 1) ThrowError("replica one broke");
          group.solver(i).Step(5);
        });
      },
      {"replica one broke"});
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 120);
  EXPECT_FALSE(group.left_threads_running());
}

// The reference engine, as the CPU replica tests: 1 x 64 and 2 x 32 sum in
// other orders, which other engines' rounding would turn into max-pool tie
// flips (see above).
TEST(GpuTrainingTest, TwoGpuReplicasTrainTheParamsOneGpuTrains) {
  if (DeviceCount() < 2) GTEST_SKIP() << "needs 2 CUDA devices";
  ScratchDir dir;
  WriteBandsDB(dir.file("db"), 200);
  auto single = MakeGpuSolver(LeNetSolver(dir.file("db"), 64, "engine: CAFFE"));
  single->Solve();
  ReplicationOptions options;
  options.gpus = {0, 1};
  options.timeout_seconds = 120;
  Replicas group(ParseText<SolverParameter>(LeNetSolver(dir.file("db"), 32, "engine: CAFFE")),
                 options);
  group.Solve("");
  for (int i = 0; i < 2; ++i) {
    EXPECT_LT(WorstRelativeDifference(single->net(), group.solver(i).net()), 1e-4) << i;
    EXPECT_EQ(AllParams(group.solver(i).net()), AllParams(group.solver(0).net())) << i;
  }
}

#ifndef CPU_ONLY
// Two GPUs replaying their passes from CUDA graphs train what they train
// with the calls queued one by one, bit for bit: each bucket's all-reduce
// reads the gradients the graph before it computed (a world of one, above,
// reduces nothing, so it cannot tell).
TEST(GpuTrainingTest, TwoGpuReplicasReplayedFromGraphsTrainWhatTheyTrainWithout) {
  if (DeviceCount() < 2) GTEST_SKIP() << "needs 2 CUDA devices";
  ScratchDir dir;
  WriteBandsDB(dir.file("db"), 200);
  const std::string text = LeNetSolver(dir.file("db"), 32);
  ReplicationOptions options;
  options.gpus = {0, 1};
  options.timeout_seconds = 120;
  options.bucket_bytes = 64 << 10;
  Replicas queued(ParseText<SolverParameter>(text), options);
  queued.Solve("");
  Replicas replayed(ParseText<SolverParameter>(text + " cuda_graph: true"), options);
  replayed.Solve("");
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(AllParams(replayed.solver(i).net()), AllParams(queued.solver(i).net())) << i;
    ASSERT_NE(replayed.solver(i).step_graph(), nullptr) << i;
    EXPECT_GT(replayed.solver(i).step_graph()->replays(), 40) << i;
  }
}
#endif  // CPU_ONLY

#ifdef USE_NCCL
/// Rank r's values to sum: i * (r + 1) at index i.
std::vector<float> RankValues(int64_t n, int r) {
  std::vector<float> values(n);
  for (int64_t i = 0; i < n; ++i) values[i] = static_cast<float>(i * (r + 1));
  return values;
}

TEST(GpuNcclTest, SumsAndBroadcastsDeviceAndHostBuffers) {
  if (DeviceCount() < 2) GTEST_SKIP() << "needs 2 CUDA devices";
  auto clique = NcclCommunicator::CreateClique({0, 1}, 0, 1, nullptr, std::chrono::seconds(60));
  ASSERT_EQ(clique.size(), 2u);
  const int64_t n = 1001;
  std::vector<std::vector<float>> results(2), host(2, std::vector<float>(n));
  std::vector<std::vector<char>> bytes(2, std::vector<char>(7, 'x'));
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      SetCurrentDevice(r);
      const std::vector<float> values = RankValues(n, r);
      auto* device = static_cast<float*>(DeviceMalloc(n * sizeof(float)));
      CopyHostToDevice(device, values.data(), n * sizeof(float));
      clique[r]->AllReduceSum(device, n);
      results[r].resize(n);
      CopyDeviceToHost(results[r].data(), device, n * sizeof(float));
      DeviceFree(device);
      host[r] = values;
      clique[r]->AllReduceSum(host[r].data(), n);
      if (r == 1) bytes[r].assign(7, 'b');
      clique[r]->Broadcast(bytes[r].data(), 7, 1);
      clique[r]->Barrier();
    });
  }
  for (auto& thread : threads) thread.join();
  NcclCommunicator::FinalizeClique({clique[0].get(), clique[1].get()});
  for (int r = 0; r < 2; ++r) {
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_EQ(results[r][i], static_cast<float>(3 * i)) << r << " " << i;
      ASSERT_EQ(host[r][i], static_cast<float>(3 * i)) << r << " " << i;
    }
    EXPECT_EQ(std::string(bytes[r].begin(), bytes[r].end()), "bbbbbbb");
  }
}

// Queued all-reduces (the gradients' way): each member queues behind its own
// stream and joins; the sums are there once the member's stream has run, and
// the watcher's waits return.
TEST(GpuNcclTest, QueuedAllReducesSumOnTheDevice) {
  if (DeviceCount() < 2) GTEST_SKIP() << "needs 2 CUDA devices";
  auto clique = NcclCommunicator::CreateClique({0, 1}, 0, 1, nullptr, std::chrono::seconds(60));
  const int64_t n = 4099;
  std::vector<std::vector<float>> results(2, std::vector<float>(n));
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      SetCurrentDevice(r);
      const std::vector<float> values = RankValues(n, r);
      auto* device = static_cast<float*>(DeviceMalloc(2 * n * sizeof(float)));
      CopyHostToDevice(device, values.data(), n * sizeof(float));
      CopyHostToDevice(device + n, values.data(), n * sizeof(float));
      clique[r]->QueueAllReduceSum(device, n);
      clique[r]->QueueAllReduceSum(device + n, n);
      clique[r]->JoinQueued();
      clique[r]->WaitQueued();
      clique[r]->WaitQueued();
      GpuAxpy(n, 1.0f, device + n, device);  // on this thread's stream, after the join
      CopyDeviceToHost(results[r].data(), device, n * sizeof(float));
      DeviceFree(device);
    });
  }
  for (auto& thread : threads) thread.join();
  NcclCommunicator::FinalizeClique({clique[0].get(), clique[1].get()});
  for (int r = 0; r < 2; ++r) {
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(results[r][i], 6.0f * i) << r << " " << i;
  }
}

/// Both members of a 2-GPU clique sum 1024 zeros once, so NCCL has
/// connected them (it connects at a comm's first collective); returns the
/// buffers, member r's on GPU r.
std::vector<float*> ConnectMembers(const std::vector<std::unique_ptr<NcclCommunicator>>& clique) {
  std::vector<float*> device(2);
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      SetCurrentDevice(r);
      device[r] = static_cast<float*>(DeviceMalloc(1024 * sizeof(float)));
      DeviceMemset(device[r], 0, 1024 * sizeof(float));
      clique[r]->AllReduceSum(device[r], 1024);
    });
  }
  for (auto& thread : threads) thread.join();
  return device;
}

// A queued all-reduce that a peer never joins: the watcher's wait times out,
// aborts the member, and every later call names that first failure; the
// member's stream and the device are free again.
TEST(GpuNcclTest, AQueuedAllReduceNoPeerJoinsTimesOut) {
  if (DeviceCount() < 2) GTEST_SKIP() << "needs 2 CUDA devices";
  auto clique = NcclCommunicator::CreateClique({0, 1}, 0, 1, nullptr, std::chrono::seconds(60));
  // Then a short timeout, and member 1 is gone.
  const std::vector<float*> device = ConnectMembers(clique);
  clique[0]->set_timeout(std::chrono::seconds(3));
  SetCurrentDevice(0);
  clique[0]->QueueAllReduceSum(device[0], 1024);
  clique[0]->JoinQueued();
  ExpectErrorContaining(
      [&] { clique[0]->WaitQueued(); },
      {"nccl: the gradients' all-reduce on GPU 0 (rank 0 of 2) timed out after 3 s"});
  float loss = 1;
  ExpectErrorContaining([&] { clique[0]->AllReduceSum(&loss, 1); },
                        {"the gradients' all-reduce on GPU 0", "timed out"});
  SynchronizeDevice();
  DeviceFree(device[0]);
  SetCurrentDevice(1);
  DeviceFree(device[1]);
}

// Another thread aborts a member whose all-reduce waits for a peer that
// never comes: the wait throws at once, naming the reason, not at the
// timeout; later calls name it too.
TEST(GpuNcclTest, AnAbortedMemberStopsWaitingForItsPeer) {
  if (DeviceCount() < 2) GTEST_SKIP() << "needs 2 CUDA devices";
  auto clique = NcclCommunicator::CreateClique({0, 1}, 0, 1, nullptr, std::chrono::seconds(600));
  const std::vector<float*> device = ConnectMembers(clique);
  const auto start = std::chrono::steady_clock::now();
  std::thread waiter([&] {
    SetCurrentDevice(0);
    ExpectErrorContaining([&] { clique[0]->AllReduceSum(device[0], 1024); },
                          {"GPU 0 (rank 0 of 2) stopped: replica 1 failed: its data broke"});
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // let it wait
  SetCurrentDevice(1);
  clique[0]->Abort("replica 1 failed: its data broke");
  clique[1]->Abort("replica 1 failed: its data broke");
  int current = -1;  // the caller's device is left alone
  ASSERT_EQ(cudaGetDevice(&current), cudaSuccess);
  EXPECT_EQ(current, 1);
  waiter.join();
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 60);
  float loss = 1;
  ExpectErrorContaining([&] { clique[1]->AllReduceSum(&loss, 1); }, {"its data broke"});
  DeviceFree(device[1]);
  SetCurrentDevice(0);
  SynchronizeDevice();
  DeviceFree(device[0]);
}
#endif

}  // namespace
}  // namespace demi
