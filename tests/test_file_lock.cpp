// FileLock: one process at a time holds a lock file (two trainers on one
// snapshot_prefix); the holder is named to the one refused; within a process
// the lock is shared; releasing it removes the file.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "data_test_util.hpp"
#include "demi/util/file_lock.hpp"
#include "demi/util/io.hpp"
#include "test_util.hpp"
#include "tool_test_util.hpp"

namespace demi {
namespace {

/// Whether another process (util-linux's flock) finds `path` locked.
bool LockedForOthers(const std::string& path) {
  return RunShell(StrCat("flock --nonblock --conflict-exit-code 9 ", path, " true")).status == 9;
}

TEST(FileLockTest, HeldUntilReleasedNamingItsHolder) {
  TempDir dir;
  const std::string path = dir / "run.lock";
  {
    std::shared_ptr<FileLock> lock = FileLock::Acquire(path, "snapshot_prefix 'run'", "fix");
    EXPECT_EQ(ReadFileToString(path).find(StrCat("PID ", getpid(), " on host ")), 0u);
    EXPECT_TRUE(LockedForOthers(path));
    // A second holder in this process shares the lock.
    EXPECT_EQ(FileLock::Acquire(path, "snapshot_prefix 'run'", "fix"), lock);
  }
  EXPECT_FALSE(std::filesystem::exists(path)) << "a released lock removes its file";
  EXPECT_FALSE(LockedForOthers(path));
}

TEST(FileLockTest, AnotherProcessesLockIsRefusedByName) {
  TempDir dir;
  const std::string path = dir / "run.lock";
  // A holder that has written itself into the file, as Acquire does; the
  // shell prints its PID.
  const Result held =
      RunShell(StrCat("(exec 3>", path,
                      "; flock 3; echo 'PID 42 on host elsewhere' >&3; exec sleep 60) "
                      ">/dev/null 2>&1 & echo $!; for i in $(seq 100); do grep -q elsewhere ",
                      path, " && exit 0; sleep 0.05; done; exit 1"));
  const pid_t holder = static_cast<pid_t>(std::atol(held.output.c_str()));
  ASSERT_GT(holder, 0) << held.output;
  EXPECT_EQ(held.status, 0) << held.output;
  ExpectErrorContaining(
      [&] { FileLock::Acquire(path, "snapshot_prefix 'run'", "give another prefix"); },
      {"snapshot_prefix 'run' is in use by another process, PID 42 on host elsewhere, ",
       "which holds '" + path + "'; give another prefix"});
  kill(holder, SIGKILL);
}

TEST(FileLockTest, AMissingDirectoryIsNamed) {
  TempDir dir;
  ExpectErrorContaining([&] { FileLock::Acquire(dir / "missing/run.lock", "snapshot_prefix", ""); },
                        {"cannot create the lock file '", "missing/run.lock"});
}

}  // namespace
}  // namespace demi
