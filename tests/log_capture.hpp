#ifndef DEMI_TESTS_LOG_CAPTURE_HPP_
#define DEMI_TESTS_LOG_CAPTURE_HPP_

#include <glog/logging.h>

#include <mutex>
#include <string>
#include <vector>

namespace demi {

/// Collects the messages glog logs at `severity` or above (WARNING by
/// default) while it lives, from any thread.
class LogCapture : public google::LogSink {
 public:
  explicit LogCapture(google::LogSeverity severity = google::GLOG_WARNING) : severity_(severity) {
    google::AddLogSink(this);
  }
  ~LogCapture() override { google::RemoveLogSink(this); }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;

  void send(google::LogSeverity severity, const char*, const char*, int, const struct ::tm*,
            const char* message, size_t length) override {
    if (severity < severity_) return;
    std::lock_guard<std::mutex> lock(mutex_);
    messages_.emplace_back(message, length);
  }
  std::vector<std::string> messages() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return messages_;
  }
  /// The messages that contain `part`.
  std::vector<std::string> Containing(const std::string& part) const {
    std::vector<std::string> found;
    for (const std::string& message : messages()) {
      if (message.find(part) != std::string::npos) found.push_back(message);
    }
    return found;
  }

 private:
  google::LogSeverity severity_;
  mutable std::mutex mutex_;
  std::vector<std::string> messages_;
};

}  // namespace demi

#endif  // DEMI_TESTS_LOG_CAPTURE_HPP_
