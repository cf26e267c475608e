#ifndef DEMI_UTIL_INTERVAL_TIMER_HPP_
#define DEMI_UTIL_INTERVAL_TIMER_HPP_
// Timing of numbered intervals ("slots": a layer's forward, a pass, an
// iteration) over repeated iterations, on one of two clocks:
//  - the host's steady clock: the time the host thread spent between Begin
//    and End (for a GPU net, mostly launching work, not running it);
//  - a GPU's, through CUDA events recorded on this thread's stream: the time
//    the device spent on the work queued between Begin and End. The events
//    are read after the iteration, so timing adds no synchronization inside
//    it.
#include <functional>
#include <memory>
#include <vector>

namespace demi {

class IntervalTimer {
 public:
  explicit IntervalTimer(int slots);
  virtual ~IntervalTimer() = default;
  IntervalTimer(const IntervalTimer&) = delete;
  IntervalTimer& operator=(const IntervalTimer&) = delete;

  int slots() const { return static_cast<int>(total_ms_.size()); }
  /// Starts or ends interval `slot` of this iteration (each at most once).
  virtual void Begin(int slot) = 0;
  virtual void End(int slot) = 0;
  /// Adds this iteration's intervals (those begun and ended) to the totals and
  /// starts the next iteration. A device timer first waits for their work.
  virtual void Collect() = 0;
  /// Milliseconds summed over the collected iterations.
  double total_ms(int slot) const;

 protected:
  std::vector<double> total_ms_;
};

/// Milliseconds since some fixed point: the host timer's clock.
using MillisecondClock = std::function<double()>;

/// The host's timer; `now_ms` replaces the steady clock (tests).
std::unique_ptr<IntervalTimer> MakeHostTimer(int slots, MillisecondClock now_ms = nullptr);

/// The current GPU's timer (CUDA events on CudaStream()). A CPU_ONLY build
/// has none and throws demi::Error.
std::unique_ptr<IntervalTimer> MakeDeviceTimer(int slots);

}  // namespace demi

#endif  // DEMI_UTIL_INTERVAL_TIMER_HPP_
