#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "data_test_util.hpp"
#include "demi/data/db.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

std::string KeyOf(int i) {
  char key[32];
  std::snprintf(key, sizeof(key), "%05d", i);
  return key;
}

std::string ValueOf(int i) { return std::string(1000, static_cast<char>('a' + i % 26)) + KeyOf(i); }

TEST(LMDBTest, RoundTripGrowsTheMapAsNeeded) {
  TempDir dir;
  const std::string path = dir / "db";
  {
    // 64 KiB cannot hold 500 values of 1 KB: Commit must double the map.
    std::shared_ptr<LMDB> db = LMDB::Open(path, DBMode::kNew, size_t{64} << 10);
    const size_t initial = db->map_size();
    std::unique_ptr<LMDBTransaction> txn = db->NewTransaction();
    for (int i = 499; i >= 0; --i) txn->Put(KeyOf(i), ValueOf(i));  // any order in
    EXPECT_EQ(txn->size(), 500u);
    txn->Commit();
    EXPECT_EQ(txn->size(), 0u);
    EXPECT_GE(db->map_size(), 8 * initial);
    EXPECT_EQ(db->Count(), 500);
  }
  std::shared_ptr<LMDB> db = LMDB::Open(path, DBMode::kRead);
  EXPECT_TRUE(db->read_only());
  EXPECT_EQ(db->Count(), 500);
  std::unique_ptr<LMDBCursor> cursor = db->NewCursor();
  int i = 0;
  for (; cursor->valid(); cursor->Next(), ++i) {
    ASSERT_EQ(cursor->key(), KeyOf(i));  // key order out
    ASSERT_EQ(cursor->value(), ValueOf(i));
  }
  EXPECT_EQ(i, 500);
  cursor->SeekToFirst();
  ASSERT_TRUE(cursor->valid());
  EXPECT_EQ(cursor->key(), KeyOf(0));
}

TEST(LMDBTest, WriteModeAddsToAnExistingDatabase) {
  TempDir dir;
  const std::string path = dir / "db";
  {
    auto txn = LMDB::Open(path, DBMode::kNew)->NewTransaction();
    txn->Put("b", "2");
    txn->Commit();
  }
  {
    std::shared_ptr<LMDB> db = LMDB::Open(path, DBMode::kWrite);
    auto txn = db->NewTransaction();
    txn->Put("a", "1");
    txn->Put("b", "two");  // replaces
    txn->Commit();
    EXPECT_EQ(db->Count(), 2);
  }
  std::unique_ptr<LMDBCursor> cursor = LMDB::Open(path, DBMode::kRead)->NewCursor();
  EXPECT_EQ(cursor->key(), "a");
  EXPECT_EQ(cursor->value(), "1");
  cursor->Next();
  EXPECT_EQ(cursor->key(), "b");
  EXPECT_EQ(cursor->value(), "two");
  cursor->Next();
  EXPECT_FALSE(cursor->valid());
}

TEST(LMDBTest, ReadersOfOnePathShareOneEnvironment) {
  TempDir dir;
  const std::string path = dir / "db";
  LMDB::Open(path, DBMode::kNew)->NewTransaction()->Commit();
  std::shared_ptr<LMDB> a = LMDB::Open(path, DBMode::kRead);
  std::shared_ptr<LMDB> b = LMDB::Open(dir.path() + "/./db", DBMode::kRead);
  EXPECT_EQ(a.get(), b.get());
  EXPECT_EQ(a->Count(), 0);
  EXPECT_FALSE(a->NewCursor()->valid());
  ExpectErrorContaining([&] { LMDB::Open(path, DBMode::kWrite); },
                        {path, "already open read-only"});
}

TEST(LMDBTest, ErrorsNameThePath) {
  TempDir dir;
  const std::string missing = dir / "missing";
  ExpectErrorContaining([&] { LMDB::Open(missing, DBMode::kRead); },
                        {"LMDB '" + missing + "' does not exist"});
  std::filesystem::create_directory(dir / "plain");
  ExpectErrorContaining([&] { LMDB::Open(dir / "plain", DBMode::kRead); },
                        {dir / "plain", "holds no data.mdb"});
  WriteFile(dir / "file", "x");
  ExpectErrorContaining([&] { LMDB::Open(dir / "file", DBMode::kRead); },
                        {dir / "file", "is not a directory"});
  LMDB::Open(dir / "db", DBMode::kNew)->NewTransaction()->Commit();
  ExpectErrorContaining([&] { LMDB::Open(dir / "db", DBMode::kNew); },
                        {dir / "db", "already exists"});
  ExpectErrorContaining([&] { LMDB::Open(dir / "db", DBMode::kRead)->NewTransaction(); },
                        {dir / "db", "read-only"});
}

// A data.mdb cut short maps its lost pages past the end of the file, where a
// read is SIGBUS: the size is checked against LMDB's page count at open.
TEST(LMDBTest, ATruncatedDataFileIsNamedAtOpen) {
  TempDir dir;
  const std::string path = dir / "db";
  {
    std::shared_ptr<LMDB> db = LMDB::Open(path, DBMode::kNew);
    std::unique_ptr<LMDBTransaction> txn = db->NewTransaction();
    for (int i = 0; i < 100; ++i) txn->Put(KeyOf(i), ValueOf(i));
    txn->Commit();
  }
  const std::string data = path + "/data.mdb";
  const uintmax_t whole = std::filesystem::file_size(data);
  EXPECT_EQ(LMDB::Open(path, DBMode::kRead)->Count(), 100);  // whole, it opens
  std::filesystem::resize_file(data, whole / 2);
  for (DBMode mode : {DBMode::kRead, DBMode::kWrite}) {
    ExpectErrorContaining([&] { LMDB::Open(path, mode); },
                          {"LMDB '" + path + "' is truncated: its data.mdb holds",
                           std::to_string(whole / 2) + " bytes", "need " + std::to_string(whole)});
  }
  // Shorter than its meta pages, LMDB itself cannot read it.
  std::filesystem::resize_file(data, 100);
  ExpectErrorContaining([&] { LMDB::Open(path, DBMode::kRead); },
                        {"LMDB '" + path + "' is truncated: its data.mdb holds only 100 bytes"});
}

}  // namespace
}  // namespace demi
