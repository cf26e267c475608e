#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "data_test_util.hpp"
#include "demi/data/reader.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// Polls `done` every millisecond for up to 10 s; returns its last value.
template <typename Done>
bool WaitFor(Done done) {
  const auto give_up = Clock::now() + std::chrono::seconds(10);
  while (!done() && Clock::now() < give_up)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return done();
}

TEST(DBReaderTest, ReadsInKeyOrderAndRewindsCountingEpochs) {
  TempDir dir;
  std::vector<Datum> datums;
  for (int i = 0; i < 3; ++i) datums.push_back(RawDatum(1, 1, 1, {static_cast<uint8_t>(i)}, i));
  WriteDatumDB(dir / "db", datums);
  DBReader reader(dir / "db");
  EXPECT_EQ(reader.size(), 3);
  Record record;
  const std::vector<int64_t> indices = {0, 1, 2, 0, 1, 2, 0};
  const std::vector<int64_t> epochs = {0, 0, 0, 1, 1, 1, 2};
  for (size_t i = 0; i < indices.size(); ++i) {
    reader.Next(&record);
    EXPECT_EQ(record.index, indices[i]);
    EXPECT_EQ(record.epoch, epochs[i]);
    EXPECT_EQ(record.key, StrCat("0000000", indices[i]));
    Datum datum;
    ASSERT_TRUE(datum.ParseFromArray(record.value.data(), static_cast<int>(record.value.size())));
    EXPECT_EQ(datum.label(), indices[i]);
  }
  reader.Skip(4);  // past 1 and 2 of epoch 2, then 0 and 1 of epoch 3
  reader.Next(&record);
  EXPECT_EQ(record.index, 2);
  EXPECT_EQ(record.epoch, 3);
}

TEST(DBReaderTest, MissingOrEmptySourceIsAnError) {
  TempDir dir;
  ExpectErrorContaining([&] { DBReader reader(dir / "nope"); }, {dir / "nope", "does not exist"});
  ExpectErrorContaining([&] { DBReader reader(""); }, {"no source"});
  LMDB::Open(dir / "empty", DBMode::kNew)->NewTransaction()->Commit();
  ExpectErrorContaining([&] { DBReader reader(dir / "empty"); }, {dir / "empty", "is empty"});
}

TEST(WorkerPoolTest, RunsEveryItemExactlyOnce) {
  for (int threads : {1, 2, 3, 5}) {
    WorkerPool pool(threads);
    EXPECT_EQ(pool.num_threads(), threads);
    for (int64_t n : {0, 1, 2, 7, 100}) {
      for (int repeat = 0; repeat < 3; ++repeat) {
        std::vector<std::atomic<int>> seen(n);
        pool.Run(n, [&](int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i) ++seen[i];
        });
        for (int64_t i = 0; i < n; ++i) ASSERT_EQ(seen[i], 1) << threads << " " << n << " " << i;
      }
    }
  }
}

TEST(WorkerPoolTest, RethrowsTheFirstChunksErrorWhateverTheTiming) {
  WorkerPool pool(3);
  for (int repeat = 0; repeat < 20; ++repeat) {
    ExpectErrorContaining(
        [&] {
          pool.Run(9, [](int64_t begin, int64_t end) {
            if (begin == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
            if (begin >= 3) ThrowError(StrCat("chunk from ", begin));
          });
        },
        {"chunk from 3"});
  }
  // The pool still works after an error.
  std::atomic<int64_t> sum{0};
  pool.Run(10, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) sum += i;
  });
  EXPECT_EQ(sum, 45);
}

TEST(WorkerPoolTest, ASlowItemHoldsBackOnlyItsOwnThread) {
  WorkerPool pool(2);
  // Blocks of one item (8 / (4 x 2)). Item 0 waits until the seven others are
  // done: the other thread must take them all. With a fixed share each, the
  // thread of item 0 would own items 1 to 3, and item 0 would give up after
  // 10 s without seeing them.
  std::vector<std::thread::id> ran_on(8);
  std::atomic<int> others_done{0};
  bool saw_all = false;
  pool.Run(8, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      if (i == 0) {
        saw_all = WaitFor([&] { return others_done == 7; });
      } else {
        ++others_done;
      }
      ran_on[i] = std::this_thread::get_id();
    }
  });
  EXPECT_TRUE(saw_all);
  EXPECT_EQ(std::count(ran_on.begin(), ran_on.end(), ran_on[0]), 1);
}

TEST(WorkerPoolTest, EveryBlockRunsWhenOneThrows) {
  WorkerPool pool(3);
  std::vector<std::atomic<int>> seen(30);
  ExpectErrorContaining(
      [&] {
        pool.Run(30, [&](int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i) ++seen[i];
          if (begin == 2 || begin == 20) ThrowError(StrCat("block from ", begin));
        });
      },
      {"block from 2"});
  for (const auto& count : seen) EXPECT_EQ(count, 1);
}

TEST(WorkerPoolTest, ConcurrentRunsEachRunEveryItemOnceAndGetTheirOwnErrors) {
  WorkerPool pool(3);
  constexpr int kCallers = 4;
  std::vector<std::thread> callers;
  std::vector<int> failures(kCallers, 0);
  for (int caller = 0; caller < kCallers; ++caller) {
    callers.emplace_back([&, caller] {
      for (int repeat = 0; repeat < 50; ++repeat) {
        const int64_t n = 1 + (caller * 7 + repeat) % 40;
        std::vector<std::atomic<int>> seen(n);
        const bool fail = repeat % 5 == caller % 5;
        try {
          pool.Run(n, [&](int64_t begin, int64_t end) {
            for (int64_t i = begin; i < end; ++i) ++seen[i];
            if (fail && begin == 0) ThrowError(StrCat("caller ", caller, " run ", repeat));
          });
          if (fail) ++failures[caller];  // the error went missing
        } catch (const Error& error) {
          if (!fail || std::string(error.what()).find(StrCat("caller ", caller, " run ", repeat)) ==
                           std::string::npos) {
            ++failures[caller];  // another run's error, or one where none was thrown
          }
        }
        for (const auto& count : seen) failures[caller] += count != 1;
      }
    });
  }
  for (std::thread& caller : callers) caller.join();
  EXPECT_EQ(failures, std::vector<int>(kCallers, 0));
}

TEST(WorkerPoolTest, AHelperServesAnotherCallerWhileTheFirstIsBusy) {
  WorkerPool pool(2);  // one helper
  // Caller A blocks in its own block until B's run is over. B's caller
  // blocks in its block until another thread has run one of B's: only the
  // helper can, once A has no block left. If helpers served only the run
  // they started on, both callers would give up after 10 s.
  std::atomic<bool> a_blocked{false}, b_helped{false}, b_done{false};
  std::thread a([&] {
    const std::thread::id a_caller = std::this_thread::get_id();
    pool.Run(2, [&](int64_t, int64_t) {
      if (std::this_thread::get_id() == a_caller) {
        a_blocked = true;
        WaitFor([&] { return b_done.load(); });
      } else {
        WaitFor([&] { return a_blocked.load(); });  // leaves A's caller a block
      }
    });
  });
  EXPECT_TRUE(WaitFor([&] { return a_blocked.load(); }));
  const std::thread::id b_caller = std::this_thread::get_id();
  pool.Run(2, [&](int64_t, int64_t) {
    if (std::this_thread::get_id() == b_caller) {
      WaitFor([&] { return b_helped.load(); });
    } else {
      b_helped = true;
    }
  });
  b_done = true;
  a.join();
  EXPECT_TRUE(b_helped);
}

TEST(WorkerPoolTest, CallersAskingForTheSameCountShareOnePool) {
  std::shared_ptr<WorkerPool> first = SharedWorkerPool(3);
  EXPECT_EQ(SharedWorkerPool(3), first);
  EXPECT_EQ(first->num_threads(), 3);
  EXPECT_NE(SharedWorkerPool(2), first);
  // Once the last owner lets go, the pool's threads end; the next caller
  // gets a new pool.
  std::weak_ptr<WorkerPool> gone = first;
  first.reset();
  EXPECT_TRUE(gone.expired());
  EXPECT_EQ(SharedWorkerPool(3)->num_threads(), 3);
}

TEST(DefaultDecodeThreadsTest, CpusKeepOneGpusTakeTheFreeCores) {
  EXPECT_EQ(DefaultDecodeThreads(false, 16, 1), 1);
  EXPECT_EQ(DefaultDecodeThreads(true, 16, 1), 15);  // 15 free: 14 helpers and the prefetcher
  EXPECT_EQ(DefaultDecodeThreads(true, 16, 2), 13);  // 14 free: 12 helpers and 2 prefetchers
  EXPECT_EQ(DefaultDecodeThreads(true, 64, 8), 49);  // 56 free: 48 helpers and 8 prefetchers
  EXPECT_EQ(DefaultDecodeThreads(true, 16, 8), 1);   // 8 free: the 8 prefetchers, no helper
  EXPECT_EQ(DefaultDecodeThreads(true, 2, 2), 1);    // never fewer than one
  EXPECT_EQ(DefaultDecodeThreads(true, 1, 1), 1);
}

TEST(PrefetcherTest, DeliversBatchesInFillOrder) {
  int counter = 0;
  Prefetcher prefetcher(3, [&](Batch* batch, const std::atomic<bool>&) {
    batch->label.assign(1, static_cast<float>(counter++));
  });
  prefetcher.Start();
  for (int i = 0; i < 20; ++i) {
    Batch* batch = prefetcher.Next();
    EXPECT_EQ(batch->label[0], i);
    prefetcher.Release(batch);
  }
}

TEST(PrefetcherTest, KeepsAtMostDepthBatchesReady) {
  std::atomic<int> fills{0};
  Prefetcher prefetcher(3, [&](Batch*, const std::atomic<bool>&) { ++fills; });
  prefetcher.Start();
  const auto start = Clock::now();
  while (fills < 3 && SecondsSince(start) < 10)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(fills, 3);
  prefetcher.Release(prefetcher.Next());
  EXPECT_EQ(prefetcher.next_calls(), 1);
  EXPECT_EQ(prefetcher.waits(), 0) << "a batch was ready";
  while (fills < 4 && SecondsSince(start) < 10)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(fills, 4);
}

TEST(PrefetcherTest, CountsTheTimesTheConsumerWaited) {
  Prefetcher prefetcher(1, [](Batch*, const std::atomic<bool>&) {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
  });
  prefetcher.Start();
  prefetcher.Release(prefetcher.Next());
  EXPECT_EQ(prefetcher.next_calls(), 1);
  EXPECT_EQ(prefetcher.waits(), 1);
  EXPECT_GT(prefetcher.waited_seconds(), 0.01);
}

TEST(PrefetcherTest, StartsAndStopsRepeatedlyWithoutHanging) {
  const auto start = Clock::now();
  for (int i = 0; i < 100; ++i) {
    // A fill that would take 10 s unless told to stop.
    Prefetcher prefetcher(1 + i % 4, [](Batch*, const std::atomic<bool>& stop) {
      const auto begin = Clock::now();
      while (!stop && SecondsSince(begin) < 10)
        std::this_thread::sleep_for(std::chrono::microseconds(100));
    });
    if (i % 2 == 0) prefetcher.Start();
    if (i % 3 == 0) {
      prefetcher.Stop();
      prefetcher.Start();  // restartable
    }
  }
  EXPECT_LT(SecondsSince(start), 5.0);
  // A fast fill stopped while its consumer has batches out and others ready.
  Prefetcher prefetcher(2, [](Batch*, const std::atomic<bool>&) {});
  prefetcher.Start();
  Batch* held = prefetcher.Next();
  EXPECT_NE(held, nullptr);
  prefetcher.Stop();
  EXPECT_FALSE(prefetcher.running());
}

TEST(PrefetcherTest, AnErrorInFillIsRethrownByNextAfterTheGoodBatches) {
  int counter = 0;
  Prefetcher prefetcher(4, [&](Batch* batch, const std::atomic<bool>&) {
    if (counter == 2) ThrowError("record 'k2' is bad");
    batch->label.assign(1, static_cast<float>(counter++));
  });
  prefetcher.Start();
  for (int i = 0; i < 2; ++i) {
    Batch* batch = prefetcher.Next();
    EXPECT_EQ(batch->label[0], i);
    prefetcher.Release(batch);
  }
  ExpectErrorContaining([&] { prefetcher.Next(); }, {"record 'k2' is bad"});
  ExpectErrorContaining([&] { prefetcher.Next(); }, {"record 'k2' is bad"});
}

}  // namespace
}  // namespace demi
