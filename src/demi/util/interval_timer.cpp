#include "demi/util/interval_timer.hpp"

#include <glog/logging.h>

#include <chrono>

#include "demi/common.hpp"

#ifndef CPU_ONLY
#include "demi/util/cuda.hpp"
#endif

namespace demi {

IntervalTimer::IntervalTimer(int slots) : total_ms_(slots, 0.0) { CHECK_GE(slots, 0); }

double IntervalTimer::total_ms(int slot) const { return total_ms_.at(slot); }

namespace {

/// The begin and end marks of each slot, and which were set this iteration.
template <typename Mark>
struct Marks {
  explicit Marks(int slots) : begin(slots), end(slots), begun(slots, false), ended(slots, false) {}
  std::vector<Mark> begin, end;
  std::vector<bool> begun, ended;
  bool Complete(int slot) const { return begun[slot] && ended[slot]; }
  void Clear() {
    begun.assign(begun.size(), false);
    ended.assign(ended.size(), false);
  }
};

class HostTimer : public IntervalTimer {
 public:
  HostTimer(int slots, MillisecondClock now_ms)
      : IntervalTimer(slots), now_ms_(std::move(now_ms)), marks_(slots) {}
  void Begin(int slot) override {
    marks_.begin.at(slot) = now_ms_();
    marks_.begun[slot] = true;
  }
  void End(int slot) override {
    marks_.end.at(slot) = now_ms_();
    marks_.ended[slot] = true;
  }
  void Collect() override {
    for (int slot = 0; slot < slots(); ++slot) {
      if (marks_.Complete(slot)) total_ms_[slot] += marks_.end[slot] - marks_.begin[slot];
    }
    marks_.Clear();
  }

 private:
  MillisecondClock now_ms_;
  Marks<double> marks_;
};

#ifndef CPU_ONLY
class DeviceTimer : public IntervalTimer {
 public:
  explicit DeviceTimer(int slots) : IntervalTimer(slots), marks_(slots) {
    for (int slot = 0; slot < slots; ++slot) {
      DEMI_CUDA_CHECK(cudaEventCreate(&marks_.begin[slot]));
      DEMI_CUDA_CHECK(cudaEventCreate(&marks_.end[slot]));
    }
  }
  ~DeviceTimer() override {
    for (int slot = 0; slot < slots(); ++slot) {
      cudaEventDestroy(marks_.begin[slot]);
      cudaEventDestroy(marks_.end[slot]);
    }
  }
  void Begin(int slot) override {
    DEMI_CUDA_CHECK(cudaEventRecord(marks_.begin.at(slot), CudaStream()));
    marks_.begun[slot] = true;
  }
  void End(int slot) override {
    DEMI_CUDA_CHECK(cudaEventRecord(marks_.end.at(slot), CudaStream()));
    marks_.ended[slot] = true;
  }
  void Collect() override {
    for (int slot = 0; slot < slots(); ++slot) {
      if (!marks_.Complete(slot)) continue;
      DEMI_CUDA_CHECK(cudaEventSynchronize(marks_.end[slot]));
      float ms = 0;
      DEMI_CUDA_CHECK(cudaEventElapsedTime(&ms, marks_.begin[slot], marks_.end[slot]));
      total_ms_[slot] += ms;
    }
    marks_.Clear();
  }

 private:
  Marks<cudaEvent_t> marks_;
};
#endif

}  // namespace

std::unique_ptr<IntervalTimer> MakeHostTimer(int slots, MillisecondClock now_ms) {
  if (!now_ms) {
    now_ms = [] {
      const auto since_epoch = std::chrono::steady_clock::now().time_since_epoch();
      return std::chrono::duration<double, std::milli>(since_epoch).count();
    };
  }
  return std::make_unique<HostTimer>(slots, std::move(now_ms));
}

std::unique_ptr<IntervalTimer> MakeDeviceTimer(int slots) {
#ifdef CPU_ONLY
  (void)slots;
  ThrowError("device timing needs a CUDA build (this one is CPU_ONLY)");
#else
  return std::make_unique<DeviceTimer>(slots);
#endif
}

}  // namespace demi
