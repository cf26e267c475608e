// StopWatchdog: a stop signal during replica set-up ends the process with one
// line; without one, or once set-up is over, nothing happens.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "demi/parallel/stop_watchdog.hpp"
#include "demi/util/io.hpp"
#include "solver_test_util.hpp"

namespace demi {
namespace {

/// Runs body() in a child with stderr to `log`; returns its exit status
/// (128 + n if signal n ended it).
int RunChild(const std::string& log, void (*body)()) {
  const pid_t pid = fork();
  if (pid == 0) {
    if (std::freopen(log.c_str(), "w", stderr) == nullptr) _exit(90);
    FLAGS_logtostderr = true;
    body();
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST(StopWatchdogTest, AStopSignalEndsTheProcessNamingThePhase) {
  ScratchDir dir;
  const int status = RunChild(dir.file("log"), [] {
    int polls = 0;
    StopWatchdog watchdog([&polls] { return ++polls > 3 ? "SIGTERM" : ""; }, "rank 1 of 2");
    watchdog.set_phase("waiting for the other ranks to build their nets");
    // A blocked collective, as far as the watchdog can tell.
    std::this_thread::sleep_for(std::chrono::seconds(60));
    _exit(0);
  });
  EXPECT_EQ(status, 1);
  const std::string log = ReadFileToString(dir.file("log"));
  EXPECT_NE(log.find("rank 1 of 2: stopped by SIGTERM during replica set-up (waiting for the "
                     "other ranks to build their nets, 0 s)"),
            std::string::npos)
      << log;
}

TEST(StopWatchdogTest, WithoutASignalItEndsWithItsScope) {
  ScratchDir dir;
  const int status = RunChild(dir.file("log"), [] {
    int polls = 0;
    {
      StopWatchdog watchdog(
          [&polls] {
            ++polls;
            return std::string();
          },
          "rank 0 of 2");
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
    }
    if (polls == 0) _exit(2);  // it never polled
    _exit(0);
  });
  EXPECT_EQ(status, 0);
}

}  // namespace
}  // namespace demi
