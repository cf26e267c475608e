#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "demi/net.hpp"
#include "demi/util/device.hpp"
#include "demi/util/host_memory.hpp"
#include "demi/util/io.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

// An overcommitting kernel would grant it and kill the process on first
// touch; HostMalloc refuses it as out of memory before asking.
TEST(HostMemoryTest, OneAllocationBeyondRamAndSwapIsOutOfMemory) {
  struct sysinfo info {};
  ASSERT_EQ(sysinfo(&info), 0);
  const size_t machine = static_cast<size_t>(info.totalram + info.totalswap) * info.mem_unit;
  EXPECT_THROW(HostMalloc(machine + 1), std::bad_alloc);
  void* small = HostMalloc(4096);
  EXPECT_NE(small, nullptr);
  HostFree(small);
}

TEST(HostMemoryTest, ParsesProcFields) {
  const std::string meminfo =
      "MemTotal:       32768000 kB\n"
      "MemFree:         1000000 kB\n"
      "MemAvailable:   23492160 kB\n";
  size_t bytes = 0;
  ASSERT_TRUE(ParseKiBField(meminfo, "MemAvailable", &bytes));
  EXPECT_EQ(bytes, size_t{23492160} * 1024);
  ASSERT_TRUE(ParseKiBField("Name:\ttest\nVmSize:\t    3892 kB\n", "VmSize", &bytes));
  EXPECT_EQ(bytes, size_t{3892} * 1024);
  EXPECT_FALSE(ParseKiBField(meminfo, "SwapTotal", &bytes));
  EXPECT_FALSE(ParseKiBField("MemAvailable: lots\n", "MemAvailable", &bytes));
  // A field whose name merely starts the same is another field.
  EXPECT_FALSE(ParseKiBField("MemAvailableX: 5 kB\n", "MemAvailable", &bytes));
}

TEST(HostMemoryTest, ParsesCgroupLimits) {
  size_t bytes = 0;
  ASSERT_TRUE(ParseCgroupLimit("4294967296\n", &bytes));
  EXPECT_EQ(bytes, size_t{4294967296});
  EXPECT_FALSE(ParseCgroupLimit("max\n", &bytes));  // v2: no limit
  EXPECT_FALSE(ParseCgroupLimit("", &bytes));       // no such file
}

/// In a forked child: lowers RLIMIT_AS to `headroom` bytes above the address
/// space in use (a lowered limit cannot be raised again); exits 2 where
/// VmSize cannot be read, 3 where the limit cannot be set.
void LimitAddressSpaceInChild(size_t headroom) {
  size_t in_use = 0;
  std::ifstream status("/proc/self/status");
  std::stringstream text;
  text << status.rdbuf();
  if (!ParseKiBField(text.str(), "VmSize", &in_use)) _exit(2);
  rlimit lowered{};
  getrlimit(RLIMIT_AS, &lowered);
  lowered.rlim_cur = in_use + headroom;
  if (setrlimit(RLIMIT_AS, &lowered) != 0) _exit(3);
}

TEST(HostMemoryTest, AnAddressSpaceLimitBoundsWhatIsAvailable) {
  const HostMemory unlimited = AvailableHostMemory();
  EXPECT_GT(unlimited.bytes, size_t{1} << 20) << unlimited.limit;
  // A child lowers RLIMIT_AS to 256 MiB above the address space it uses and
  // reports what it finds.
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const size_t headroom = size_t{256} << 20;
    LimitAddressSpaceInChild(headroom);
    const HostMemory limited = AvailableHostMemory();
    if (limited.bytes > headroom) _exit(4);
    // Unless the machine has under 256 MiB available, the ulimit is the tightest.
    if (limited.limit != "ulimit -v (address space left)" && unlimited.bytes > headroom) _exit(5);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "2: no VmSize, 3: setrlimit failed, 4: more than the "
                                       "limit allows, 5: another limit named";
}

/// In a child whose address space may grow by `headroom` bytes more than it
/// uses: builds a net planning 128 MiB and exits 0 where it fits; else writes
/// the error to `message_file` and exits 1 (2, 3: the limit could not be set).
int BuildPlannedNetUnderALimit(size_t headroom, const std::string& message_file) {
  std::remove(message_file.c_str());
  const pid_t child = fork();
  if (child == 0) {
    LimitAddressSpaceInChild(headroom);
    alarm(60);  // a child of a threaded process: never hang the suite
    try {
      Net net(ParseText<NetParameter>(R"(name: "roomy"
        layer { name: "data" type: "DummyData" top: "x"
                dummy_data_param { shape { dim: 16 dim: 1024 dim: 1024 } } }
        layer { name: "relu" type: "ReLU" bottom: "x" top: "y" }
        layer { name: "sum" type: "Reduction" bottom: "y" top: "s" })"));
    } catch (const std::exception& error) {
      std::ofstream(message_file) << error.what();
      _exit(1);
    }
    _exit(0);
  }
  int status = 0;
  if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

TEST(HostMemoryTest, APlanLeavesTheLibrariesRoom) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "the sanitizers' shadow memory needs terabytes of address space";
#endif
  // oneDNN crashes where its own buffers cannot be allocated: a plan that
  // fits the limit with less than 64 MiB to spare is refused, saying so.
  const std::string message_file = StrCat(testing::TempDir(), "plan_room_", getpid(), ".txt");
  ASSERT_EQ(BuildPlannedNetUnderALimit(size_t{8} << 20, message_file), 1);
  const std::string small = ReadFileToString(message_file);
  ASSERT_NE(small.find("its plan needs "), std::string::npos) << small;
  const double needed_mib = std::stod(small.substr(small.find("its plan needs ") + 15));
  EXPECT_GE(needed_mib, 64.0) << small;
  const size_t just_over = static_cast<size_t>((needed_mib + 40) * (1 << 20));
  ASSERT_EQ(BuildPlannedNetUnderALimit(just_over, message_file), 1);
  const std::string refused = ReadFileToString(message_file);
  EXPECT_NE(refused.find("does not fit host memory"), std::string::npos) << refused;
  EXPECT_NE(refused.find("and leaves 64.0 MiB for the libraries' buffers"), std::string::npos)
      << refused;
  // The plan alone fitted: the reserve refused it.
  const size_t but = refused.find("buffers, but ");
  ASSERT_NE(but, std::string::npos) << refused;
  EXPECT_LE(std::stod(refused.substr(refused.find("its plan needs ") + 15)),
            std::stod(refused.substr(but + 13)))
      << refused;
  EXPECT_EQ(BuildPlannedNetUnderALimit(just_over + (size_t{256} << 20), message_file), 0)
      << ReadFileToString(message_file);
  std::remove(message_file.c_str());
}

}  // namespace
}  // namespace demi
