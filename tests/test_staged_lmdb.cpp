// A new LMDB written under a temporary name and renamed when complete.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "data_test_util.hpp"
#include "demi/data/staged_lmdb.hpp"
#include "demi/util/temporary_files.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

namespace fs = std::filesystem;

TEST(StagedLMDBTest, PublishRenamesTheTemporaryToTheTarget) {
  TempDir dir;
  {
    StagedLMDB db(dir / "db");
    EXPECT_EQ(db.temporary(), TemporaryPathFor(dir / "db"));
    auto txn = db.db().NewTransaction();
    txn->Put("a", "1");
    txn->Commit();
    txn.reset();
    EXPECT_FALSE(fs::exists(dir / "db"));  // nothing at the target until it is complete
    db.Publish();
  }
  EXPECT_FALSE(fs::exists(TemporaryPathFor(dir / "db")));
  EXPECT_EQ(LMDB::Open(dir / "db", DBMode::kRead)->Count(), 1);
}

TEST(StagedLMDBTest, AnUnpublishedDatabaseLeavesNothing) {
  TempDir dir;
  try {
    StagedLMDB db(dir / "db");
    auto txn = db.db().NewTransaction();
    txn->Put("a", "1");
    txn->Commit();
    throw Error("the conversion failed");
  } catch (const Error&) {
  }
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

TEST(StagedLMDBTest, RefusesAnExistingTargetAndRemovesDeadRunsTemporaries) {
  TempDir dir;
  fs::create_directories(dir / "db");
  ExpectErrorContaining([&] { StagedLMDB db(dir / "db"); },
                        {"LMDB '" + (dir / "db") + "' already exists"});
  fs::remove(dir / "db");
  // A conversion killed midway: its process is gone, its temporary is not.
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  const std::string stale = StrCat(dir / "db", ".tmp.", child);
  fs::create_directories(stale);
  WriteFile(stale + "/data.mdb", "partial");
  const std::string other = StrCat(dir / "db2", ".tmp.", child);  // another target's
  fs::create_directories(other);
  StagedLMDB db(dir / "db");
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(other));
  db.Publish();
  EXPECT_TRUE(fs::exists(dir / "db"));
}

}  // namespace
}  // namespace demi
