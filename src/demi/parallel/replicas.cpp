#include "demi/parallel/replicas.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <iomanip>
#include <mutex>
#include <random>
#include <sstream>
#include <thread>

#include "demi/parallel/gloo_communicator.hpp"
#include "demi/parallel/hierarchical_communicator.hpp"
#include "demi/parallel/nccl_communicator.hpp"
#include "demi/parallel/stop_watchdog.hpp"
#include "demi/parallel/training_fingerprint.hpp"
#include "demi/solver_registry.hpp"
#include "demi/util/device.hpp"
#include "demi/util/math.hpp"
#include "demi/util/threads.hpp"

namespace demi {

namespace {

/// How to fix ranks that disagree when they join.
constexpr const char* kDisagreeHint =
    "start every rank with the same solver, net, replicas per rank, data and build";

/// How long Run waits for the other replicas after one failed.
constexpr auto kFailureGrace = std::chrono::seconds(10);

std::chrono::milliseconds ToMilliseconds(double seconds) {
  return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
}

/// CPU replicas run at once: each gets its share of the threads (OpenMP and
/// OpenBLAS), since every replica threading its loops and GEMMs over all
/// cores oversubscribes them (bench/scaling.sh). OPENBLAS_NUM_THREADS
/// overrides OpenBLAS's share. Returns the OpenMP threads of each replica,
/// which every replica thread sets for itself (OpenMP's setting is per thread).
int ShareCoresAmongReplicas(int replicas) {
  const int threads = Threads();
  const int share = std::max(1, threads / replicas);
  const bool blas_from_env = std::getenv("OPENBLAS_NUM_THREADS") != nullptr;
  SetBlasShare(share);
  LOG(INFO) << replicas << " CPU replicas on " << threads << " threads: " << share
            << " thread(s) each"
            << (blas_from_env ? StrCat(", OpenBLAS ", BlasThreads(), " from OPENBLAS_NUM_THREADS")
                              : std::string());
  return share;
}

}  // namespace

Replicas::Replicas(SolverParameter param, const ReplicationOptions& options) : options_(options) {
  const int local =
      options_.gpus.empty() ? options_.local_replicas : static_cast<int>(options_.gpus.size());
  CheckOptions(local);
  if (options_.world_size > 1) JoinProcesses(param, local);
  // Joined: the collectives below wait for every peer (one may still be
  // building its nets), and only this watchdog can act on a signal there.
  std::unique_ptr<StopWatchdog> watchdog;
  if (options_.world_size > 1) {
    watchdog = std::make_unique<StopWatchdog>(
        options_.stop_signal, StrCat("rank ", options_.rank, " of ", options_.world_size));
    watchdog->set_phase("agreeing on the run with the other ranks");
  }
  AgreeOnRandomSeed(&param);
  if (options_.gpus.empty() && local > 1) {
    blas_threads_before_ = BlasThreads();
    replica_threads_ = ShareCoresAmongReplicas(local);
  }
  // The nets are built on the threads they will run on: oneDNN fits its
  // primitives (and their summation order) to the threads at creation.
  const int threads_before = Threads();
  if (replica_threads_ > 0) omp_set_num_threads(replica_threads_);
  if (watchdog) watchdog->set_phase("building the nets");
  CreateCommunicators(local);
  for (int i = 0; i < local; ++i) CreateReplica(param, i, local);
  if (replica_threads_ > 0) omp_set_num_threads(threads_before);
  // The nets too, now that their shapes are known (sizes that differ would
  // fail inside Gloo; layers that differ would train together silently).
  if (global_) {
    watchdog->set_phase("waiting for the other ranks to build their nets");
    AgreeOnFingerprint(global_.get(), NetFingerprint(solvers_.front()->net()), "rank",
                       kDisagreeHint);
  }
}

void Replicas::CheckOptions(int local) const {
  DEMI_CHECK(local >= 1, "replicas per process must be at least 1, got ", local);
  DEMI_CHECK(options_.world_size >= 1, "world size must be at least 1, got ", options_.world_size);
  DEMI_CHECK(options_.rank >= 0 && options_.rank < options_.world_size, "rank ", options_.rank,
             " is outside [0, ", options_.world_size, ")");
  DEMI_CHECK(options_.timeout_seconds > 0, "the communication timeout must be positive, got ",
             options_.timeout_seconds, " s");
}

void Replicas::JoinProcesses(const SolverParameter& param, int local) {
  GlooOptions gloo;
  gloo.rank = options_.rank;
  gloo.world_size = options_.world_size;
  gloo.rendezvous = options_.rendezvous;
  gloo.host = options_.host;
  gloo.timeout_seconds = options_.timeout_seconds;
  gloo.run_id = options_.run_id;
  gloo.wait_log_seconds = options_.wait_log_seconds;
  gloo.stop_signal = options_.stop_signal;
  auto gloo_comm = std::make_unique<GlooCommunicator>(gloo);
  gloo_ = gloo_comm.get();
  global_ = std::move(gloo_comm);
  // Ranks that disagree on the run would hang or crash in a collective
  // (a different max_iter, replica count or param size): they stop here,
  // each naming what differs, before anything else is exchanged.
  const std::string replicas =
      options_.gpus.empty() ? StrCat(local, " on the CPU") : StrCat(local, " GPU(s)");
  Fingerprint run = RunFingerprint(param, replicas);
  // The bucket size decides which collectives a rank issues: it must agree.
  run.push_back({"all-reduce bucket bytes", StrCat(options_.bucket_bytes)});
  AgreeOnFingerprint(global_.get(), run, "rank", kDisagreeHint);
}

void Replicas::AgreeOnRandomSeed(SolverParameter* param) {
  // One seed for all, so that data augmentation (keyed by the seed and the
  // record) is the same whichever replica reads a record.
  if (param->random_seed() >= 0) return;
  uint32_t seed = std::random_device()();
  if (global_) global_->Broadcast(&seed, sizeof(seed), 0);
  param->set_random_seed(seed);
}

void Replicas::CreateCommunicators(int local) {
  group_ = std::make_shared<ThreadGroup>(local, ToMilliseconds(options_.timeout_seconds));
#ifdef USE_NCCL
  // GPUs reduce in device memory through NCCL, one clique for all of them.
  if (!options_.gpus.empty()) {
    for (auto& member :
         NcclCommunicator::CreateClique(options_.gpus, options_.rank, options_.world_size, gloo_,
                                        ToMilliseconds(options_.timeout_seconds))) {
      comms_.push_back(std::move(member));
    }
  }
#endif
  // Otherwise threads in this process, under Gloo across processes.
  for (int i = static_cast<int>(comms_.size()); i < local; ++i) {
    auto thread_comm = std::make_unique<ThreadCommunicator>(group_, i);
    if (global_) {
      comms_.push_back(
          std::make_unique<HierarchicalCommunicator>(std::move(thread_comm), global_.get()));
    } else {
      comms_.push_back(std::move(thread_comm));
    }
  }
}

void Replicas::CreateReplica(const SolverParameter& param, int i, int local) {
  Context context;
  if (!options_.gpus.empty()) {
    context.device = Device::kGPU;
    context.device_id = options_.gpus[i];
    SetCurrentDevice(context.device_id);
  }
  const int total = local * options_.world_size;
  context.replica = options_.rank * local + i;
  context.num_replicas = total;
  LOG(INFO) << "Creating replica " << context.replica << " of " << total;
  solvers_.push_back(SolverRegistry::Create(param, context));
  syncs_.push_back(
      std::make_unique<ReplicaSync>(solvers_.back().get(), comms_[i].get(), options_.bucket_bytes));
  syncs_.back()->Attach();
}

Replicas::~Replicas() {
  syncs_.clear();
  solvers_.clear();
#ifdef USE_NCCL
  std::vector<NcclCommunicator*> nccl;
  for (auto& comm : comms_) {
    if (auto* member = dynamic_cast<NcclCommunicator*>(comm.get())) nccl.push_back(member);
  }
  NcclCommunicator::FinalizeClique(nccl);
#endif
  if (blas_threads_before_ > 0) SetBlasThreads(blas_threads_before_);
}

void Replicas::CopyWeights(const std::string& paths) { solvers_.front()->CopyWeights(paths); }

void Replicas::Solve(const std::string& resume_file, std::function<SolverAction()> action) {
  if (action) solvers_.front()->SetActionFunction(std::move(action));
  Run([&](int i) {
    if (!resume_file.empty()) solvers_[i]->Restore(resume_file);
    // Ranks resumed from different snapshots would finish at different steps.
    AgreeOnFingerprint(comms_[i].get(), {{"start iteration", StrCat(solvers_[i]->iter())}},
                       "replica", "resume every rank from the same --snapshot");
    syncs_[i]->BroadcastState();
    solvers_[i]->Solve();
  });
  if (options_.rank == 0) LOG(INFO) << WaitSummary();
}

void Replicas::Run(const std::function<void(int replica)>& fn) {
  struct Shared {
    std::mutex mutex;
    std::condition_variable changed;
    int finished = 0;
    std::exception_ptr error;
  };
  auto shared = std::make_shared<Shared>();
  // Each replica thread runs OpenMP on its share of the cores (CPU
  // replicas), else on this thread's setting (--threads).
  std::vector<std::thread> threads;
  for (int i = 0; i < size(); ++i) {
    threads.push_back(StartThread(
        [this, i, &fn, shared] {
          try {
            const Context& context = solvers_[i]->context();
            if (context.device == Device::kGPU) SetCurrentDevice(context.device_id);
            fn(i);
            // This thread's stream dies with it: its queued work must be done.
            if (context.device == Device::kGPU) SynchronizeDevice();
          } catch (const std::exception& e) {
            {
              // The first failure is the one to report: record it before
              // the others wake with errors of their own.
              std::lock_guard<std::mutex> lock(shared->mutex);
              if (!shared->error) shared->error = std::current_exception();
            }
            const std::string reason =
                StrCat("replica ", solvers_[i]->context().replica, " failed: ", e.what());
            group_->Abort(reason);
            // GPU replicas wait in NCCL, which the group cannot wake.
            for (auto& comm : comms_) comm->Abort(reason);
          }
          std::lock_guard<std::mutex> lock(shared->mutex);
          ++shared->finished;
          shared->changed.notify_all();
        },
        replica_threads_));
  }
  std::unique_lock<std::mutex> lock(shared->mutex);
  shared->changed.wait(lock, [&] { return shared->finished == size() || shared->error; });
  if (shared->finished < size()) {
    shared->changed.wait_for(lock, kFailureGrace, [&] { return shared->finished == size(); });
  }
  const bool all_finished = shared->finished == size();
  const std::exception_ptr error = shared->error;
  lock.unlock();
  for (std::thread& thread : threads) {
    if (all_finished) {
      thread.join();
    } else {
      thread.detach();  // stuck in another process's collective; the caller exits
    }
  }
  left_threads_running_ = !all_finished;
  if (!all_finished) {
    LOG(ERROR) << "a replica is still blocked in a collective " << kFailureGrace.count()
               << " s after another failed";
  }
  if (error) std::rethrow_exception(error);
}

std::string Replicas::WaitSummary() const {
  double step = 0, wait = 0;
  int steps = 0;
  int64_t collectives = 0;
  for (const auto& sync : syncs_) {
    step += sync->step_seconds();
    wait += sync->wait_seconds();
    steps += sync->steps();
    collectives += sync->collectives();
  }
  std::ostringstream out;
  out << std::fixed << std::setprecision(1) << "Replication: " << total() << " replicas (" << size()
      << " in this process, " << options_.world_size << " process(es)); "
      << (steps > 0 ? 1000.0 * step / steps : 0.0) << " ms/step, of which ";
  if (!syncs_.empty() && syncs_.front()->queues()) {
    out << "none waiting for all-reduce after backward (queued behind it, waited for on the "
           "device); ";
  } else {
    out << (steps > 0 ? 1000.0 * wait / steps : 0.0) << " ms ("
        << (step > 0 ? 100.0 * wait / step : 0.0) << "%) waiting for all-reduce after backward; ";
  }
  out << (steps > 0 ? static_cast<double>(collectives) / steps : 0.0)
      << " gradient all-reduces per step";
  return out.str();
}

}  // namespace demi
