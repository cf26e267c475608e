#include "demi/data/reader.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <utility>

#include "demi/common.hpp"
#include "demi/util/threads.hpp"

namespace demi {

// ---- DBReader ----

DBReader::DBReader(const std::string& source) : source_(source) {
  DEMI_CHECK(!source.empty(), "no source database given");
  db_ = LMDB::Open(source, DBMode::kRead);
  size_ = db_->Count();
  DEMI_CHECK(size_ > 0, "LMDB '", source, "' is empty: it holds no records");
  cursor_ = db_->NewCursor();
}

void DBReader::Next(Record* record) {
  CHECK(cursor_->valid());
  record->key = cursor_->key();
  record->value = cursor_->value();
  record->index = index_;
  record->epoch = epoch_;
  Advance();
}

void DBReader::Skip(int64_t count) {
  for (int64_t i = 0; i < count; ++i) Advance();
}

bool DBReader::Seek(std::string_view key, int64_t index, int64_t epoch, int64_t records) {
  epoch_ = epoch;
  cursor_->Seek(key);
  if (!key.empty() && cursor_->valid() && cursor_->key() == key) {
    if (records == size_) {
      index_ = index;
      return true;
    }
    // Records came or went: the key's index is counted afresh.
    index_ = 0;
    for (cursor_->SeekToFirst(); cursor_->key() != key; cursor_->Next()) ++index_;
    return false;
  }
  cursor_->SeekToFirst();
  index_ = 0;
  Skip(index % size_);
  return false;
}

void DBReader::Advance() {
  cursor_->Next();
  ++index_;
  if (!cursor_->valid()) {
    cursor_->SeekToFirst();
    CHECK(cursor_->valid()) << "LMDB '" << source_ << "' became empty while being read";
    index_ = 0;
    ++epoch_;
  }
}

// ---- WorkerPool ----

int DefaultDecodeThreads(bool gpu, int cores, int replicas) {
  if (!gpu) return 1;
  replicas = std::max(1, replicas);
  const int free_cores = std::max(1, cores - replicas);
  // The replicas' prefetch threads decode too: helpers take the rest.
  return std::max(1, free_cores - replicas + 1);
}

std::shared_ptr<WorkerPool> SharedWorkerPool(int num_threads) {
  static std::mutex mutex;
  static std::map<int, std::weak_ptr<WorkerPool>> pools;
  std::lock_guard<std::mutex> lock(mutex);
  std::weak_ptr<WorkerPool>& slot = pools[num_threads];
  std::shared_ptr<WorkerPool> pool = slot.lock();
  if (!pool) {
    pool = std::make_shared<WorkerPool>(num_threads);
    slot = pool;
  }
  return pool;
}

Batch::~Batch() {
  if (uploaded) uploaded->WaitUnlessShutDown();
  if (copied) copied->WaitUnlessShutDown();
}

void Batch::WaitForCopies() const {
  if (uploaded) uploaded->Wait();
  if (copied) copied->Wait();
}

void Batch::UploadBytes() {
  // Capacity-aware: a refill of the same size keeps the device bytes, whose
  // last reader is done (WaitForCopies before a refill).
  device_bytes.Resize(bytes.size());
  CopyHostToDevice(device_bytes.mutable_gpu_data(), bytes.data(), bytes.size());
  if (!uploaded) uploaded = std::make_unique<StreamMarker>();
  uploaded->Record();
}

void Batch::MarkCopied() {
  if (!copied) copied = std::make_unique<StreamMarker>();
  copied->Record();
}

struct WorkerPool::Job {
  Job(const Task& task, int64_t n, int64_t block) : task(task), n(n), block(block) {}
  bool exhausted() const { return next >= n; }

  const Task& task;
  const int64_t n;
  const int64_t block;
  std::atomic<int64_t> next{0};  ///< the first item no thread has taken
  // Guarded by the pool's mutex:
  int helpers = 0;          ///< helpers inside TakeBlocks of this job
  int64_t error_begin = 0;  ///< where the block of `error` starts
  std::exception_ptr error;
};

WorkerPool::WorkerPool(int num_threads) {
  CHECK_GE(num_threads, 1);
  for (int helper = 1; helper < num_threads; ++helper) {
    helpers_.push_back(StartThread([this] { HelperLoop(); }));
  }
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    CHECK(jobs_.empty()) << "a WorkerPool destroyed during a Run";
    shutdown_ = true;
  }
  work_ready_.notify_all();
  for (std::thread& helper : helpers_) helper.join();
}

void WorkerPool::Run(int64_t n, const Task& task) {
  if (helpers_.empty() || n <= 1) {
    if (n > 0) task(0, n);
    return;
  }
  Job job(task, n, std::max<int64_t>(1, n / (4 * num_threads())));
  {
    std::lock_guard<std::mutex> lock(mutex_);
    jobs_.push_back(&job);
  }
  work_ready_.notify_all();
  TakeBlocks(&job);
  {
    // No block is left to take; wait for the helpers still inside one.
    std::unique_lock<std::mutex> lock(mutex_);
    const auto queued = std::find(jobs_.begin(), jobs_.end(), &job);
    if (queued != jobs_.end()) jobs_.erase(queued);
    work_done_.wait(lock, [&job] { return job.helpers == 0; });
  }
  if (job.error) std::rethrow_exception(job.error);
}

void WorkerPool::TakeBlocks(Job* job) {
  for (;;) {
    const int64_t begin = job->next.fetch_add(job->block);
    if (begin >= job->n) return;
    try {
      job->task(begin, std::min(job->n, begin + job->block));
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!job->error || begin < job->error_begin) {
        job->error = std::current_exception();
        job->error_begin = begin;
      }
    }
  }
}

void WorkerPool::HelperLoop() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    work_ready_.wait(lock, [this] { return shutdown_ || !jobs_.empty(); });
    if (shutdown_) return;
    // Runs leave the queue once every block is taken; their callers wait
    // for the helpers still at work on them (job->helpers).
    Job* job = jobs_.front();
    if (job->exhausted()) {
      jobs_.pop_front();
      continue;
    }
    ++job->helpers;
    lock.unlock();
    TakeBlocks(job);
    lock.lock();
    if (--job->helpers == 0) work_done_.notify_all();
  }
}

// ---- Prefetcher ----

Prefetcher::Prefetcher(int depth, Fill fill) : fill_(std::move(fill)) {
  CHECK_GE(depth, 1);
  for (int i = 0; i < depth; ++i) {
    batches_.push_back(std::make_unique<Batch>());
    free_.push_back(batches_.back().get());
  }
}

Prefetcher::~Prefetcher() { Stop(); }

void Prefetcher::Start() {
  CHECK(!thread_.joinable()) << "prefetch thread already running";
  stop_ = false;
  thread_ = StartThread([this] { Loop(); });
}

void Prefetcher::Stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
  // Back to the initial state: every batch free, no error pending.
  std::lock_guard<std::mutex> lock(mutex_);
  free_.clear();
  ready_.clear();
  for (const auto& batch : batches_) free_.push_back(batch.get());
  error_ = nullptr;
}

void Prefetcher::Loop() {
  for (;;) {
    Batch* batch = nullptr;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [this] { return stop_ || !free_.empty(); });
      if (stop_) return;
      batch = free_.front();
      free_.pop_front();
    }
    try {
      batch->WaitForCopies();
      fill_(batch, stop_);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      error_ = std::current_exception();
      changed_.notify_all();
      return;
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stop_) return;
      ready_.push_back(batch);
    }
    changed_.notify_all();
  }
}

Batch* Prefetcher::Next() {
  std::unique_lock<std::mutex> lock(mutex_);
  CHECK(thread_.joinable() || !ready_.empty() || error_) << "Next() on a stopped prefetcher";
  ++next_calls_;
  if (ready_.empty() && !error_) {
    ++waits_;
    const auto start = std::chrono::steady_clock::now();
    changed_.wait(lock, [this] { return !ready_.empty() || error_; });
    waited_seconds_ +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  if (ready_.empty()) std::rethrow_exception(error_);
  Batch* batch = ready_.front();
  ready_.pop_front();
  return batch;
}

void Prefetcher::Release(Batch* batch) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    free_.push_back(batch);
  }
  changed_.notify_all();
}

}  // namespace demi
