// util/interval_timer: the host timer on a fake clock, the device timer where
// a GPU exists (CUDA events around queued work), and the solver field and
// tool flag that choose a GPU's math.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "data_test_util.hpp"
#include "demi/util/interval_timer.hpp"
#include "gpu_test_util.hpp"
#include "replication_test_util.hpp"
#include "solver_test_util.hpp"

#ifndef CPU_ONLY
#include "demi/util/math_gpu.hpp"
#endif

namespace demi {
namespace {

/// A clock that reads the next of `readings` each time.
MillisecondClock Readings(std::vector<double> readings) {
  auto next = std::make_shared<size_t>(0);
  return [readings, next] { return readings.at((*next)++); };
}

TEST(IntervalTimerTest, SumsEachSlotOverIterations) {
  auto timer = MakeHostTimer(2, Readings({0, 3, 5, 6, 10, 12}));
  timer->Begin(0);
  timer->End(0);  // 3
  timer->Begin(1);
  timer->End(1);  // 1
  timer->Collect();
  timer->Begin(0);
  timer->End(0);  // 2
  timer->Collect();
  EXPECT_DOUBLE_EQ(timer->total_ms(0), 5);
  EXPECT_DOUBLE_EQ(timer->total_ms(1), 1);
}

TEST(IntervalTimerTest, NestedSlotsAndUnfinishedOnesAddNothingExtra) {
  // Slot 0 holds slot 1; slot 2 begins but never ends before Collect.
  auto timer = MakeHostTimer(3, Readings({0, 1, 4, 9, 20, 30, 31}));
  timer->Begin(0);
  timer->Begin(1);
  timer->End(1);  // 3
  timer->End(0);  // 9
  timer->Begin(2);
  timer->Collect();
  EXPECT_DOUBLE_EQ(timer->total_ms(0), 9);
  EXPECT_DOUBLE_EQ(timer->total_ms(1), 3);
  EXPECT_DOUBLE_EQ(timer->total_ms(2), 0);
  // The begin of the last iteration does not carry into the next one.
  timer->End(2);
  timer->Collect();
  EXPECT_DOUBLE_EQ(timer->total_ms(2), 0);
}

TEST(IntervalTimerTest, TheSteadyClockMovesForward) {
  auto timer = MakeHostTimer(1);
  timer->Begin(0);
  volatile double sink = 0;
  for (int i = 0; i < 100000; ++i) sink = sink + i;
  timer->End(0);
  timer->Collect();
  EXPECT_GE(timer->total_ms(0), 0);
}

TEST(IntervalTimerTest, ASlotOutOfRangeIsRefused) {
  auto timer = MakeHostTimer(1);
  EXPECT_THROW(timer->Begin(1), std::out_of_range);
}

#ifdef CPU_ONLY
TEST(IntervalTimerTest, ACpuOnlyBuildHasNoDeviceTimer) { EXPECT_THROW(MakeDeviceTimer(1), Error); }
#else
// Device time is the queued work's: a slot around 20 passes over 64 MiB
// takes longer than an empty slot, and the host returns before the work ends.
TEST(GpuIntervalTimerTest, TimesTheWorkQueuedBetweenItsEvents) {
  if (!HaveGpu()) GTEST_SKIP() << "no CUDA device";
  SetCurrentDevice(0);
  Blob blob(std::vector<int64_t>{16 << 20});
  float* data = blob.mutable_gpu_data();
  auto device = MakeDeviceTimer(2);
  device->Begin(0);
  for (int i = 0; i < 20; ++i) GpuScal(blob.count(), 1.0f, data);
  device->End(0);
  device->Begin(1);
  device->End(1);
  device->Collect();
  EXPECT_GT(device->total_ms(0), 0);
  EXPECT_GT(device->total_ms(0), device->total_ms(1));
}
#endif

// ---- which math a GPU net runs ----

TEST(DeterministicFieldTest, TheSolverFieldSetsItsNetsGpuMath) {
  ScratchDir dir;
  WriteBandsDB(dir.file("db"), 8);
  const std::string text = LeNetSolver(dir.file("db"), 4);
  EXPECT_EQ(MakeSolver(text)->net().context().gpu_math, GpuMath::kDeterministic);
  EXPECT_EQ(MakeSolver(text + " deterministic: false")->net().context().gpu_math,
            GpuMath::kTensorOps);
  EXPECT_EQ(MakeSolver(text + " deterministic: true")->net().context().gpu_math,
            GpuMath::kDeterministic);
}

}  // namespace
}  // namespace demi
