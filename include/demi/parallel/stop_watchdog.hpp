#ifndef DEMI_PARALLEL_STOP_WATCHDOG_HPP_
#define DEMI_PARALLEL_STOP_WATCHDOG_HPP_

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace demi {

/// @brief Ends the process when a stop signal arrives while this rank is in
/// a phase that cannot poll for it: replica set-up, where a collective
/// (Gloo's broadcasts agreeing on the seed and the nets) blocks until every
/// peer takes part, up to --comm_timeout, and a peer may still be building
/// its nets. A thread polls `stop_signal` every 100 ms; on a signal's name it
/// logs one line ("<who>: stopped by SIGTERM during replica set-up (<phase>,
/// 3 s)"), flushes the logs and calls _Exit(1): nothing has trained, so
/// nothing is lost, and the peers see the connection close. The destructor
/// stops the thread. Without a stop_signal function it starts none.
class StopWatchdog {
 public:
  StopWatchdog(std::function<std::string()> stop_signal, std::string who);
  ~StopWatchdog();
  StopWatchdog(const StopWatchdog&) = delete;
  StopWatchdog& operator=(const StopWatchdog&) = delete;

  /// What the rank is doing now, for the line ("agreeing on the nets").
  void set_phase(const std::string& phase);

 private:
  void Loop();

  std::function<std::string()> stop_signal_;
  const std::string who_;
  const std::chrono::steady_clock::time_point start_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::string phase_;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace demi

#endif  // DEMI_PARALLEL_STOP_WATCHDOG_HPP_
