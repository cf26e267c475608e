#ifndef DEMI_DATA_READER_HPP_
#define DEMI_DATA_READER_HPP_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "demi/data/db.hpp"
#include "demi/proto/demi.pb.h"
#include "demi/syncedmem.hpp"
#include "demi/util/device.hpp"
#include "demi/util/stream_marker.hpp"

namespace demi {

/// One record as read from a database, with where it was in the stream:
/// `index` is its position in the database (0-based, in key order) and
/// `epoch` how many times the reader had rewound when it read it. Key and
/// value are the database's bytes in place (its memory map, in the
/// reader's read transaction): valid as long as the reader.
struct Record {
  std::string_view key;
  std::string_view value;
  int64_t index = 0;
  int64_t epoch = 0;
};

/// @brief Reads an LMDB in key order forever: at the end it rewinds and
/// counts one more epoch. Missing or empty databases throw an Error naming
/// the path. One thread at a time may use a reader.
class DBReader {
 public:
  explicit DBReader(const std::string& source);
  int64_t size() const { return size_; }
  const std::string& source() const { return source_; }
  /// Reads the next record into `record` (its buffers are reused).
  void Next(Record* record);
  /// Skips `count` records (Caffe's rand_skip).
  void Skip(int64_t count);
  /// The next record Next will read: its key, index and epoch.
  std::string_view next_key() const { return cursor_->key(); }
  int64_t index() const { return index_; }
  int64_t epoch() const { return epoch_; }
  /// Moves to the record with `key` (LMDB's set-range), as record `index` of
  /// epoch `epoch`, and returns true when that key is there and the database
  /// has `records` records; otherwise it still goes to the key if present
  /// (counting its index) or else to record index % size(), and returns
  /// false: the database changed since the position was taken.
  bool Seek(std::string_view key, int64_t index, int64_t epoch, int64_t records);

 private:
  void Advance();

  std::string source_;
  std::shared_ptr<LMDB> db_;
  std::unique_ptr<LMDBCursor> cursor_;
  int64_t size_ = 0;
  int64_t index_ = 0;
  int64_t epoch_ = 0;
};

/// @brief A batch the prefetch thread prepares: N x C x H x W examples in
/// `data` (floats) or `bytes`, `label` N values, and row i came from record
/// `indices[i]` of epoch `epochs[i]`. A batch is a list of records, so
/// replicas can shard it.
struct Batch {
  Batch() = default;
  /// Waits for the copies of the batch still in flight (see below).
  ~Batch();
  Batch(const Batch&) = delete;
  Batch& operator=(const Batch&) = delete;

  /// Page-locked where a GPU exists, so copies to it run asynchronously.
  /// A float layer's rows; in a byte layer, the rows float_rows marks (and
  /// empty while there are none).
  std::vector<float, PinnedAllocator<float>> data;
  /// A byte layer's rows (BaseDataLayer's byte batches).
  std::vector<uint8_t, PinnedAllocator<uint8_t>> bytes;
  /// Per row of a byte layer: 1 where the record gave floats, in `data`.
  std::vector<uint8_t> float_rows;
  std::vector<float, PinnedAllocator<float>> label;
  std::vector<int64_t> indices;
  std::vector<int64_t> epochs;
  /// The read position just after this batch: the layer's position once
  /// Forward has consumed it.
  DataReadPosition next;
  /// GPU: marks the end of Forward's copies out of the batch, which run
  /// after Forward returns; the batch is refilled only once they are done.
  std::unique_ptr<StreamMarker> copied;
  /// Records `copied` after the work queued on this thread's stream so far
  /// (a GPU Forward's copies), before the batch goes back to the prefetcher.
  void MarkCopied();

  /// GPU byte batches: `bytes` in device memory. The prefetch thread copies
  /// them there on its own stream as soon as the batch is filled
  /// (UploadBytes; `uploaded` marks the copy's end), so the copy overlaps the
  /// steps before the one that takes the batch, whose stream waits for it on
  /// the device (StreamMarker::MakeStreamWait).
  SyncedMemory device_bytes;
  std::unique_ptr<StreamMarker> uploaded;
  /// Queues that copy on the calling thread's stream and marks its end.
  void UploadBytes();
  /// Returns once the batch's copies in flight (`uploaded`, `copied`) are
  /// done: before it is refilled (the destructor waits too).
  void WaitForCopies() const;
};

/// @brief Runs a function over [0, n) cut into blocks of consecutive items,
/// which the calling thread and persistent helper threads take in turn as
/// each becomes free: a slow item (a large JPEG) holds back only its own
/// thread. Blocks hold about n / (4 threads) items, at least one. Every
/// block runs even when another throws; the exception of the block that
/// starts first is rethrown, so which error surfaces does not depend on
/// timing. With one thread no helper is made.
///
/// Several threads may Run at once (the prefetch threads of data layers that
/// share a pool, SharedWorkerPool): each caller works on its own run, and a
/// free helper takes blocks of the oldest run that has blocks left, so
/// helpers go where batches are being filled.
class WorkerPool {
 public:
  /// fn(begin, end): process items [begin, end).
  using Task = std::function<void(int64_t begin, int64_t end)>;

  explicit WorkerPool(int num_threads);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  void Run(int64_t n, const Task& task);
  /// Helpers plus one: the threads a run gets when it runs alone.
  int num_threads() const { return static_cast<int>(helpers_.size()) + 1; }

 private:
  /// One call of Run: its blocks, and the helpers working on it.
  struct Job;

  void HelperLoop();
  /// Takes blocks of `job` until none is left.
  void TakeBlocks(Job* job);

  std::vector<std::thread> helpers_;
  std::mutex mutex_;
  std::condition_variable work_ready_;
  std::condition_variable work_done_;
  std::deque<Job*> jobs_;  ///< runs that may have blocks left, oldest first
  bool shutdown_ = false;
};

/// The pool of `num_threads` shared by every caller that asks for that many
/// while one is alive: the default-threaded data layers of a process (all
/// replicas' and the test nets') share one set of helpers.
std::shared_ptr<WorkerPool> SharedWorkerPool(int num_threads);

/// Threads of the process's shared decode pool when nobody set a data
/// layer's count (WorkerPool::num_threads: helpers plus one). On a CPU one,
/// no helper, since training takes the cores. On a GPU the `cores` of the
/// process less one per GPU replica it drives (their host threads launch the
/// kernels) are free for decoding; each replica's prefetch thread decodes its
/// own batches, and helpers take the rest, so that with every replica
/// prefetching the decoding threads number the free cores.
int DefaultDecodeThreads(bool gpu, int cores, int replicas);

/// @brief The prefetch thread: keeps up to `depth` batches filled ahead of
/// the consumer, in a bounded ring of free and ready batches.
///
/// `fill(batch, stop)` prepares one batch; it should return early when
/// `stop` becomes true. An exception in `fill` ends the thread and is
/// rethrown by Next (then and on every later call). Stop (and the
/// destructor) wakes and joins the thread; it never waits for more than the
/// batch being filled.
class Prefetcher {
 public:
  using Fill = std::function<void(Batch* batch, const std::atomic<bool>& stop)>;

  Prefetcher(int depth, Fill fill);
  ~Prefetcher();
  Prefetcher(const Prefetcher&) = delete;
  Prefetcher& operator=(const Prefetcher&) = delete;

  void Start();
  void Stop();
  bool running() const { return thread_.joinable(); }
  /// Blocks until a batch is ready and returns it; hand it back with Release
  /// once its contents are copied out.
  Batch* Next();
  void Release(Batch* batch);
  int depth() const { return static_cast<int>(batches_.size()); }
  /// Next calls so far, and how many found no batch ready and had to wait
  /// (with the total time waited): a consumer that never waits is never
  /// slowed by its data.
  int64_t next_calls() const { return next_calls_; }
  int64_t waits() const { return waits_; }
  double waited_seconds() const { return waited_seconds_; }

 private:
  void Loop();

  Fill fill_;
  std::vector<std::unique_ptr<Batch>> batches_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Batch*> free_;
  std::deque<Batch*> ready_;
  std::exception_ptr error_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  int64_t next_calls_ = 0;  ///< consumer-side statistics
  int64_t waits_ = 0;
  double waited_seconds_ = 0;
};

}  // namespace demi

#endif  // DEMI_DATA_READER_HPP_
