// How busy the cores are (util/cpu_load), and the waiting policy the tools
// choose from it at start (util/cli: PrepareThreadingEnvironment).
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "demi/util/cpu_load.hpp"
#include "demi/util/io.hpp"
#include "solver_test_util.hpp"
#include "tool_test_util.hpp"

namespace demi {
namespace {

// Two cores of four, as the kernel writes them (ticks: user nice system idle
// iowait irq softirq steal guest guest_nice).
const char* kStat =
    "cpu  400 0 40 4000 4 0 0 0 0 0\n"
    "cpu0 100 0 10 1000 1 0 0 0 0 0\n"
    "cpu1 50 5 5 900 0 2 3 1 0 0\n"
    "cpu2 250 0 25 2100 3 0 0 0 0 0\n"
    "intr 12345 0 0\n"
    "ctxt 999\n";

TEST(CpuLoadTest, SumsTheNamedCoresOnly) {
  const CoreTimes first = ParseCoreTimes(kStat, {0, 1});
  EXPECT_EQ(first.busy, 100 + 10 + 50 + 5 + 5 + 2 + 3 + 1);
  EXPECT_EQ(first.idle, 1000 + 1 + 900);
  const CoreTimes third = ParseCoreTimes(kStat, {2, 7});  // cpu7 is not in the text
  EXPECT_EQ(third.busy, 275);
  EXPECT_EQ(third.idle, 2103);
  EXPECT_EQ(ParseCoreTimes(kStat, {}).busy, 0);
}

TEST(CpuLoadTest, BusyCoresIsTheBusyShareOfTheCores) {
  // 2 cores over 100 ticks each: 150 busy ticks are 1.5 cores.
  EXPECT_DOUBLE_EQ(BusyCores({1000, 5000}, {1150, 5050}, 2), 1.5);
  EXPECT_DOUBLE_EQ(BusyCores({0, 0}, {0, 200}, 2), 0.0);
  EXPECT_DOUBLE_EQ(BusyCores({0, 0}, {200, 0}, 2), 2.0);
  EXPECT_EQ(BusyCores({7, 7}, {7, 7}, 2), -1);  // no tick passed: unknown
}

/// Keeps every core this process may run on busy while it lives, with a
/// spinning child process per core (other processes: a process's own
/// threads are not counted).
class BusyCoresHere {
 public:
  BusyCoresHere() {
    cpu_set_t mask;
    CPU_ZERO(&mask);
    const int cores = sched_getaffinity(0, sizeof(mask), &mask) == 0 ? CPU_COUNT(&mask) : 1;
    for (int i = 0; i < cores; ++i) {
      const pid_t pid = fork();
      if (pid == 0) {
        alarm(60);  // ends the child even if this process dies without killing it
        for (volatile uint64_t n = 0;; n = n + 1) {
        }
      }
      if (pid > 0) children_.push_back(pid);
    }
  }
  ~BusyCoresHere() {
    for (pid_t pid : children_) kill(pid, SIGKILL);
    for (pid_t pid : children_) waitpid(pid, nullptr, 0);
  }
  BusyCoresHere(const BusyCoresHere&) = delete;
  BusyCoresHere& operator=(const BusyCoresHere&) = delete;

 private:
  std::vector<pid_t> children_;
};

TEST(CpuLoadTest, MeasuresCoresOtherProcessesKeepBusy) {
  BusyCoresHere busy;
  EXPECT_GE(MeasureBusyCores(0.1), 0.5) << "every core spun for the whole measurement";
}

TEST(CpuLoadTest, ThisProcesssOwnThreadsDoNotCount) {
  std::atomic<bool> stop{false};
  std::thread spinner([&stop] {
    while (!stop.load(std::memory_order_relaxed)) {
    }
  });
  const double busy = MeasureBusyCores(0.1);
  stop = true;
  spinner.join();
  // The other processes of the machine may keep a core busy; this one's
  // spinning thread, a whole core for the whole measurement, is not seen.
  EXPECT_LT(busy, MeasureBusyCores(0.1) + 0.5);
}

const char* kTinyNet = R"(
  name: "tiny"
  layer { name: "data" type: "DummyData" top: "x"
          dummy_data_param { shape { dim: 2 dim: 3 } } }
  layer { name: "ip" type: "InnerProduct" bottom: "x" top: "y"
          inner_product_param { num_output: 2 } }
)";

/// `time` on the tiny net with the environment's waiting settings cleared
/// and `environment` (assignments) added; its output.
std::string TimeTinyNet(const ScratchDir& dir, const std::string& environment) {
  WriteFileAtomically(dir.file("net.prototxt"), kTinyNet);
  const Result result = RunShell(
      StrCat("env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT ", environment, " timeout 120 ",
             ToolPath("time"), " --logtostderr --iterations=1 --model=", dir.file("net.prototxt")));
  EXPECT_EQ(result.status, 0) << result.output;
  return result.output;
}

TEST(WaitPolicyTest, ToolsOnBusyCoresWaitPassivelyAndSaySo) {
  ScratchDir dir;
  std::string output;
  {
    BusyCoresHere busy;
    output = TimeTinyNet(dir, "");
  }
  EXPECT_NE(output.find("idle threads waiting passively"), std::string::npos) << output;
}

TEST(WaitPolicyTest, TheEnvironmentsChoiceIsKept) {
  ScratchDir dir;
  BusyCoresHere busy;
  for (const char* setting : {"OMP_WAIT_POLICY=ACTIVE", "GOMP_SPINCOUNT=1000"}) {
    const std::string output = TimeTinyNet(dir, setting);
    EXPECT_EQ(output.find("waiting passively"), std::string::npos) << setting << "\n" << output;
  }
}

}  // namespace
}  // namespace demi
