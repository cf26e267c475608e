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

/// While it lives, INFO messages reach LogSinks (a LogCapture) and nothing
/// else: the suite logs at WARNING (test_main.cpp), and no log file is made.
class InfoToSinksOnly {
 public:
  InfoToSinksOnly()
      : minloglevel_(FLAGS_minloglevel),
        logtostderr_(FLAGS_logtostderr),
        stderrthreshold_(FLAGS_stderrthreshold) {
    for (int severity = google::GLOG_INFO; severity < google::NUM_SEVERITIES; ++severity) {
      google::SetLogDestination(severity, "");  // "": no file
    }
    FLAGS_logtostderr = false;
    FLAGS_stderrthreshold = google::GLOG_FATAL;
    FLAGS_minloglevel = google::GLOG_INFO;
  }
  ~InfoToSinksOnly() {
    FLAGS_minloglevel = minloglevel_;
    FLAGS_stderrthreshold = stderrthreshold_;
    FLAGS_logtostderr = logtostderr_;
  }
  InfoToSinksOnly(const InfoToSinksOnly&) = delete;
  InfoToSinksOnly& operator=(const InfoToSinksOnly&) = delete;

 private:
  int minloglevel_;
  bool logtostderr_;
  int stderrthreshold_;
};

}  // namespace demi

#endif  // DEMI_TESTS_LOG_CAPTURE_HPP_
