// Temporaries named PATH.tmp.PID, and removing those of dead processes.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "demi/util/io.hpp"
#include "demi/util/temporary_files.hpp"
#include "solver_test_util.hpp"

namespace demi {
namespace {

namespace fs = std::filesystem;

/// The pid of a child that has exited and been reaped: no process has it
/// (until the kernel hands it out again, which takes a full cycle of pids).
long DeadPid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);
  return child;
}

TEST(TemporaryFilesTest, TemporaryPathCarriesThisProcessesPid) {
  EXPECT_EQ(TemporaryPathFor("a/b.caffemodel"), StrCat("a/b.caffemodel.tmp.", ::getpid()));
  EXPECT_TRUE(ProcessIsAlive(::getpid()));
  EXPECT_FALSE(ProcessIsAlive(DeadPid()));
  EXPECT_FALSE(ProcessIsAlive(0));
}

TEST(TemporaryFilesTest, RemovesOnlyTheDeadWritersTemporariesOfThePrefix) {
  ScratchDir dir;
  const long dead = DeadPid();
  const std::string stale_file = dir.file(StrCat("run_iter_5.caffemodel.tmp.", dead));
  const std::string stale_dir = dir.file(StrCat("run_lmdb.tmp.", dead));
  const std::string ours = TemporaryPathFor(dir.file("run_iter_6.caffemodel"));
  const std::string other_prefix = dir.file(StrCat("other_iter_5.caffemodel.tmp.", dead));
  const std::string not_a_pid = dir.file("run_iter_5.caffemodel.tmp.x1");
  const std::string snapshot = dir.file("run_iter_5.caffemodel");
  for (const std::string& path : {stale_file, ours, other_prefix, not_a_pid, snapshot}) {
    WriteFileAtomically(path, "bytes");
  }
  fs::create_directories(stale_dir);
  WriteFileAtomically(stale_dir + "/data.mdb", "bytes");

  const std::vector<std::string> removed = RemoveStaleTemporaries(dir.file("run"));
  EXPECT_EQ(removed.size(), 2u);
  EXPECT_FALSE(fs::exists(stale_file));
  EXPECT_FALSE(fs::exists(stale_dir));
  for (const std::string& path : {ours, other_prefix, not_a_pid, snapshot}) {
    EXPECT_TRUE(fs::exists(path)) << path;
  }
  EXPECT_TRUE(RemoveStaleTemporaries(dir.file("run")).empty());
  // A prefix that is a directory ("dir/") covers every file in it.
  EXPECT_EQ(RemoveStaleTemporaries(dir.path() + "/"), std::vector<std::string>{other_prefix});
}

TEST(TemporaryFilesTest, AFailedWriteNamesTheFileAndLeavesNoTemporary) {
  ScratchDir dir;
  ExpectErrorContaining(
      [&] { WriteFileAtomically(dir.file("no/such/dir/model.caffemodel"), "bytes"); },
      {"cannot write '" + dir.file("no/such/dir/model.caffemodel") + "': the directory '" +
       dir.file("no/such/dir") + "' does not exist"});
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

}  // namespace
}  // namespace demi
