#include "demi/parallel/nccl_communicator.hpp"

#ifdef USE_NCCL

#include <string>
#include <thread>
#include <vector>

#include "demi/parallel/gloo_communicator.hpp"
#include "demi/util/cuda.hpp"
#include "demi/util/device.hpp"

namespace demi {

namespace {

constexpr const char* kUniqueIdKey = "nccl_unique_id";

void CheckNccl(ncclResult_t result, const char* what) {
  if (result != ncclSuccess && result != ncclInProgress) {
    throw CommError(StrCat("nccl: ", what, " failed: ", ncclGetErrorString(result)));
  }
}

bool IsDevicePointer(const void* ptr) {
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, ptr) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return attributes.type == cudaMemoryTypeDevice || attributes.type == cudaMemoryTypeManaged;
}

/// Polls `comm`'s state until it leaves ncclInProgress or `deadline` passes;
/// returns the state (ncclInProgress on timeout).
ncclResult_t PollState(ncclComm_t comm, std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    ncclResult_t state = ncclSuccess;
    const ncclResult_t queried = ncclCommGetAsyncError(comm, &state);
    if (queried != ncclSuccess) return queried;
    if (state != ncclInProgress || std::chrono::steady_clock::now() > deadline) return state;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

/// Waits until every communicator finished initializing (non-blocking
/// init); on an error or the timeout all are aborted and CommError thrown.
void WaitForInit(const std::vector<ncclComm_t>& comms, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (ncclComm_t comm : comms) {
    const ncclResult_t state = PollState(comm, deadline);
    if (state == ncclSuccess) continue;
    for (ncclComm_t c : comms) ncclCommAbort(c);
    throw CommError(state == ncclInProgress
                        ? StrCat("nccl: the GPUs did not all join within ", timeout.count() / 1000,
                                 " s (--comm_timeout)")
                        : StrCat("nccl: joining the clique failed: ", ncclGetErrorString(state)));
  }
}

}  // namespace

std::vector<std::unique_ptr<NcclCommunicator>> NcclCommunicator::CreateClique(
    const std::vector<int>& devices, int process_rank, int world_size, GlooCommunicator* store,
    std::chrono::milliseconds timeout) {
  CHECK(!devices.empty());
  CHECK(world_size == 1 || store != nullptr);
  ncclUniqueId id;
  if (process_rank == 0) {
    CheckNccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
    if (store) store->StoreSet(kUniqueIdKey, std::string(id.internal, sizeof(id.internal)));
  } else {
    const std::string bytes = store->StoreGet(kUniqueIdKey);
    DEMI_CHECK(bytes.size() == sizeof(id.internal), "nccl: the unique id in the store has ",
               bytes.size(), " bytes, expected ", sizeof(id.internal));
    std::copy(bytes.begin(), bytes.end(), id.internal);
  }
  const int local = static_cast<int>(devices.size());
  const int total = local * world_size;
  std::vector<ncclComm_t> comms(local);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  CheckNccl(ncclGroupStart(), "ncclGroupStart");
  for (int i = 0; i < local; ++i) {
    SetDevice(devices[i]);
    CheckNccl(ncclCommInitRankConfig(&comms[i], total, id, process_rank * local + i, &config),
              "ncclCommInitRankConfig");
  }
  CheckNccl(ncclGroupEnd(), "ncclGroupEnd");
  WaitForInit(comms, timeout);
  std::vector<std::unique_ptr<NcclCommunicator>> members;
  for (int i = 0; i < local; ++i) {
    members.emplace_back(
        new NcclCommunicator(comms[i], devices[i], process_rank * local + i, total, timeout));
  }
  return members;
}

NcclCommunicator::NcclCommunicator(ncclComm_t comm, int device, int rank, int size,
                                   std::chrono::milliseconds timeout)
    : comm_(comm), device_(device), rank_(rank), size_(size), timeout_(timeout) {
  SetDevice(device_);
  int least = 0, greatest = 0;
  DEMI_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  DEMI_CUDA_CHECK(cudaStreamCreateWithPriority(&stream_, cudaStreamNonBlocking, greatest));
  for (cudaEvent_t* event : {&caller_, &done_, &joined_}) {
    DEMI_CUDA_CHECK(cudaEventCreateWithFlags(event, cudaEventDisableTiming));
  }
}

NcclCommunicator::~NcclCommunicator() {
  SetDevice(device_);
  if (comm_ != nullptr) {
    // After FinalizeClique destroying is local; without it, destroying would
    // wait for the other members (a deadlock when one thread holds them all).
    if (finalized_) {
      ncclCommDestroy(comm_);
    } else {
      ncclCommAbort(comm_);
    }
  }
  // The stream's work has ended or was aborted with the comm; a stream or
  // event destroyed with work queued is released when it is done.
  for (cudaEvent_t event : marks_) cudaEventDestroy(event);
  for (cudaEvent_t event : spare_events_) cudaEventDestroy(event);
  for (cudaEvent_t event : {caller_, done_, joined_}) cudaEventDestroy(event);
  cudaStreamDestroy(stream_);
  if (staging_ != nullptr) DeviceFree(staging_);
}

void NcclCommunicator::FinalizeClique(const std::vector<NcclCommunicator*>& members) {
  for (const NcclCommunicator* member : members) {
    if (member->broken_ || member->comm_ == nullptr) return;  // abort them all instead
  }
  if (members.empty()) return;
  const auto deadline = std::chrono::steady_clock::now() + members.front()->timeout_;
  bool ok = ncclGroupStart() == ncclSuccess;
  for (NcclCommunicator* member : members) {
    SetDevice(member->device_);
    const ncclResult_t result = ncclCommFinalize(member->comm_);
    ok = ok && (result == ncclSuccess || result == ncclInProgress);
  }
  const ncclResult_t group = ncclGroupEnd();
  ok = ok && (group == ncclSuccess || group == ncclInProgress);
  for (NcclCommunicator* member : members) {
    ok = ok && PollState(member->comm_, deadline) == ncclSuccess;
  }
  if (!ok) {
    LOG(WARNING) << "nccl: the clique did not finalize within "
                 << members.front()->timeout_.count() / 1000 << " s; aborting it";
    return;
  }
  for (NcclCommunicator* member : members) member->finalized_ = true;
}

void* NcclCommunicator::Staging(size_t bytes) {
  if (bytes > staging_bytes_) {
    DeviceFree(staging_);
    staging_ = DeviceMalloc(bytes);
    staging_bytes_ = bytes;
  }
  return staging_;
}

ncclResult_t NcclCommunicator::State() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (comm_ == nullptr) return ncclInternalError;
  ncclResult_t state = ncclSuccess;
  const ncclResult_t queried = ncclCommGetAsyncError(comm_, &state);
  return queried == ncclSuccess ? state : queried;
}

void NcclCommunicator::ThrowIfBroken() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (broken_) throw CommError(failure_);
}

void NcclCommunicator::Fail(const char* operation, ncclResult_t state) {
  std::lock_guard<std::mutex> lock(mutex_);
  // The first failure names the cause; a call failing because another
  // thread aborted the comm repeats it.
  if (!broken_) {
    const bool timed_out = state == ncclSuccess || state == ncclInProgress;
    failure_ =
        StrCat("nccl: ", operation, " on GPU ", device_, " (rank ", rank_, " of ", size_, ") ",
               timed_out ? StrCat("timed out after ", timeout_.count() / 1000, " s")
                         : StrCat("failed: ", ncclGetErrorString(state)),
               "; a peer may have exited (--comm_timeout)");
    broken_ = true;
  }
  if (comm_ != nullptr) ncclCommAbort(comm_);
  comm_ = nullptr;
  throw CommError(failure_);
}

void NcclCommunicator::Abort(const std::string& reason) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!broken_) {
    failure_ =
        StrCat("nccl: GPU ", device_, " (rank ", rank_, " of ", size_, ") stopped: ", reason);
    broken_ = true;
  }
  if (comm_ == nullptr) return;
  // Called from another replica's thread, failing already: abort on this
  // member's device, leave the caller's device as it was, throw nothing.
  int caller_device = 0;
  const bool known = cudaGetDevice(&caller_device) == cudaSuccess;
  cudaSetDevice(device_);
  ncclCommAbort(comm_);
  comm_ = nullptr;
  if (known) cudaSetDevice(caller_device);
}

template <typename Call>
void NcclCommunicator::Enqueue(const char* operation, Call collective) {
  ncclResult_t result = ncclSuccess;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (broken_) throw CommError(failure_);
    result = collective();
  }
  // An error of the comm's (a peer gone) breaks it like any other failure.
  if (result != ncclSuccess && result != ncclInProgress) Fail(operation, result);
  // A non-blocking comm may still be queueing the collective (ncclInProgress).
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  for (;;) {
    const ncclResult_t state = State();
    if (state == ncclSuccess) return;
    if (state != ncclInProgress || std::chrono::steady_clock::now() > deadline) {
      Fail(operation, state);
    }
    std::this_thread::yield();
  }
}

void NcclCommunicator::Wait(const char* operation, cudaEvent_t event, bool eager) {
  // A caller waiting spins for the first 200 us (a loss or a vote takes a few), then sleeps
  // between looks; the watching thread only sleeps: nobody waits for it.
  const auto start = std::chrono::steady_clock::now();
  const auto spin_until = start + std::chrono::microseconds(eager ? 200 : 0);
  const auto deadline = start + timeout_;
  for (;;) {
    const cudaError_t done = cudaEventQuery(event);
    if (done != cudaSuccess && done != cudaErrorNotReady) DEMI_CUDA_CHECK(done);
    // Kernels of a failed or aborted comm end too: done is success only
    // with a sound comm.
    const ncclResult_t state = State();
    const bool failed = state != ncclSuccess && state != ncclInProgress;
    if (done == cudaSuccess && !failed) return;
    const auto now = std::chrono::steady_clock::now();
    if (failed || now > deadline) Fail(operation, state);
    if (now < spin_until) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(eager ? 50 : 1000));
    }
  }
}

void NcclCommunicator::FollowCaller() {
  DEMI_CUDA_CHECK(cudaEventRecord(caller_, CudaStream()));
  DEMI_CUDA_CHECK(cudaStreamWaitEvent(stream_, caller_, 0));
}

template <typename Call>
void NcclCommunicator::RunBlocking(const char* operation, void* data, size_t bytes,
                                   Call collective) {
  ThrowIfBroken();
  if (bytes == 0 || size_ == 1) return;
  SetDevice(device_);
  const bool on_device = IsDevicePointer(data);
  void* buffer = on_device ? data : Staging(bytes);
  if (on_device) {
    FollowCaller();  // the caller's stream wrote it
  } else {
    // Host bytes (a loss, a vote) depend on no device work: staged on
    // stream_, they wait for its queued gradients, not for the caller's
    // update.
    DEMI_CUDA_CHECK(cudaMemcpyAsync(buffer, data, bytes, cudaMemcpyHostToDevice, stream_));
  }
  Enqueue(operation, [&] { return collective(buffer); });
  DEMI_CUDA_CHECK(cudaEventRecord(done_, stream_));
  Wait(operation, done_, true);
  // stream_ is drained up to done_: the copy back waits for nothing.
  if (!on_device) {
    DEMI_CUDA_CHECK(cudaMemcpyAsync(data, buffer, bytes, cudaMemcpyDeviceToHost, stream_));
    DEMI_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }
}

void NcclCommunicator::AllReduceSum(float* data, size_t count) {
  RunBlocking("all-reduce", data, count * sizeof(float), [&](void* buffer) {
    return ncclAllReduce(buffer, buffer, count, ncclFloat32, ncclSum, comm_, stream_);
  });
}

void NcclCommunicator::Broadcast(void* data, size_t bytes, int root) {
  RunBlocking("broadcast", data, bytes, [&](void* buffer) {
    return ncclBroadcast(buffer, buffer, bytes, ncclUint8, root, comm_, stream_);
  });
}

void NcclCommunicator::QueueAllReduceSum(float* data, size_t count) {
  ThrowIfBroken();
  SetDevice(device_);
  if (count > 0 && size_ > 1) {
    DEMI_CHECK(IsDevicePointer(data), "nccl: a queued all-reduce takes device memory");
    FollowCaller();
    Enqueue("ncclAllReduce",
            [&] { return ncclAllReduce(data, data, count, ncclFloat32, ncclSum, comm_, stream_); });
  }
  // Its mark, for WaitQueued: from now on a peer that never joins is noticed,
  // whatever this thread waits for meanwhile (a cudaFree waits for the device).
  cudaEvent_t mark = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!spare_events_.empty()) {
      mark = spare_events_.back();
      spare_events_.pop_back();
    }
  }
  if (mark == nullptr) DEMI_CUDA_CHECK(cudaEventCreateWithFlags(&mark, cudaEventDisableTiming));
  DEMI_CUDA_CHECK(cudaEventRecord(mark, stream_));
  std::lock_guard<std::mutex> lock(mutex_);
  marks_.push_back(mark);
}

void NcclCommunicator::JoinQueued() {
  SetDevice(device_);
  // A wait takes the event's state when it is queued: one event serves all.
  DEMI_CUDA_CHECK(cudaEventRecord(joined_, stream_));
  DEMI_CUDA_CHECK(cudaStreamWaitEvent(CudaStream(), joined_, 0));
}

void NcclCommunicator::WaitQueued() {
  SetDevice(device_);
  cudaEvent_t mark = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    DEMI_CHECK(!marks_.empty(), "nccl: WaitQueued without a queued all-reduce to wait for");
    mark = marks_.front();
  }
  Wait("the gradients' all-reduce", mark, false);
  std::lock_guard<std::mutex> lock(mutex_);
  marks_.pop_front();
  spare_events_.push_back(mark);
}

void NcclCommunicator::Barrier() {
  float token = 0;
  AllReduceSum(&token, 1);
}

}  // namespace demi

#endif  // USE_NCCL
