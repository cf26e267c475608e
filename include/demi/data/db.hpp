#ifndef DEMI_DATA_DB_HPP_
#define DEMI_DATA_DB_HPP_

#include <lmdb.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace demi {

/// How LMDB::Open treats the path.
enum class DBMode {
  kRead,   ///< an existing database, read only
  kNew,    ///< a new database; the directory must not exist yet
  kWrite,  ///< an existing database to add to, or a new one
};

class LMDB;

/// @brief A read cursor over an LMDB in key order, inside one read-only
/// transaction (a consistent snapshot). Not thread safe: one thread at a time
/// may use it, any thread (the environment is opened with MDB_NOTLS).
class LMDBCursor {
 public:
  ~LMDBCursor();
  LMDBCursor(const LMDBCursor&) = delete;
  LMDBCursor& operator=(const LMDBCursor&) = delete;

  void SeekToFirst();
  /// Moves to the first record whose key is not below `key` (invalid if
  /// there is none).
  void Seek(std::string_view key);
  void Next();
  bool valid() const { return valid_; }
  /// Key and value of the current record; they stay valid until the cursor
  /// moves or is destroyed.
  std::string_view key() const;
  std::string_view value() const;

 private:
  friend class LMDB;
  LMDBCursor(std::shared_ptr<const LMDB> db, MDB_txn* txn, MDB_cursor* cursor);
  void Get(MDB_cursor_op op);

  std::shared_ptr<const LMDB> db_;
  MDB_txn* txn_;
  MDB_cursor* cursor_;
  MDB_val key_{};
  MDB_val value_{};
  bool valid_ = false;
};

/// @brief A batch of writes: Put buffers records, Commit writes them in one
/// write transaction. When the map is full, Commit doubles the map size and
/// writes the batch again, so a database grows as needed from any start size.
class LMDBTransaction {
 public:
  LMDBTransaction(const LMDBTransaction&) = delete;
  LMDBTransaction& operator=(const LMDBTransaction&) = delete;

  void Put(std::string key, std::string value);
  void Commit();
  /// Records buffered since the last Commit.
  size_t size() const { return records_.size(); }

 private:
  friend class LMDB;
  explicit LMDBTransaction(std::shared_ptr<LMDB> db) : db_(std::move(db)) {}

  std::shared_ptr<LMDB> db_;
  std::vector<std::pair<std::string, std::string>> records_;
};

/// @brief An LMDB environment (a directory holding data.mdb and lock.mdb).
///
/// Every failure throws demi::Error naming the path: a missing database,
/// a directory that holds no data.mdb, kNew on a path that exists. Read-only
/// opens of one path within a process share one environment, as LMDB
/// requires.
class LMDB : public std::enable_shared_from_this<LMDB> {
 public:
  static constexpr size_t kDefaultMapSize = size_t{1} << 24;  ///< 16 MiB, doubled as needed

  /// Opens `path`. `initial_map_size` applies to new or written databases.
  static std::shared_ptr<LMDB> Open(const std::string& path, DBMode mode,
                                    size_t initial_map_size = kDefaultMapSize);
  ~LMDB();
  LMDB(const LMDB&) = delete;
  LMDB& operator=(const LMDB&) = delete;

  /// A cursor positioned at the first record (invalid if the DB is empty).
  std::unique_ptr<LMDBCursor> NewCursor() const;
  std::unique_ptr<LMDBTransaction> NewTransaction();
  /// Number of records.
  int64_t Count() const;
  const std::string& path() const { return path_; }
  size_t map_size() const;
  bool read_only() const { return read_only_; }

 private:
  friend class LMDBTransaction;
  LMDB(const std::string& path, bool read_only) : path_(path), read_only_(read_only) {}
  /// Writes the records in one transaction; false if the map was full.
  bool TryWrite(const std::vector<std::pair<std::string, std::string>>& records);
  void DoubleMapSize();

  std::string path_;
  bool read_only_;
  MDB_env* env_ = nullptr;
  MDB_dbi dbi_ = 0;
};

/// Checks a tool's --backend flag: LMDB is the only database Demitasse
/// writes and reads (Caffe's LevelDB is not supported).
void CheckLmdbBackend(const std::string& backend);

}  // namespace demi

#endif  // DEMI_DATA_DB_HPP_
