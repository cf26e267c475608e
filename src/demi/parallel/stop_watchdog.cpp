#include "demi/parallel/stop_watchdog.hpp"

#include <cstdio>
#include <cstdlib>

#include "demi/common.hpp"

namespace demi {

StopWatchdog::StopWatchdog(std::function<std::string()> stop_signal, std::string who)
    : stop_signal_(std::move(stop_signal)),
      who_(std::move(who)),
      start_(std::chrono::steady_clock::now()) {
  if (stop_signal_) thread_ = std::thread([this] { Loop(); });
}

StopWatchdog::~StopWatchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    done_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void StopWatchdog::set_phase(const std::string& phase) {
  std::lock_guard<std::mutex> lock(mutex_);
  phase_ = phase;
}

void StopWatchdog::Loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!changed_.wait_for(lock, std::chrono::milliseconds(100), [this] { return done_; })) {
    const std::string signal = stop_signal_();
    if (signal.empty()) continue;
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    LOG(ERROR) << who_ << ": stopped by " << signal << " during replica set-up (" << phase_ << ", "
               << static_cast<int64_t>(seconds) << " s)";
    google::FlushLogFiles(google::GLOG_INFO);
    std::fflush(nullptr);
    std::_Exit(1);
  }
}

}  // namespace demi
