#include "demi/data/db.hpp"

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include <cerrno>
#include <filesystem>
#include <map>
#include <mutex>

#include "demi/common.hpp"

namespace demi {

namespace {

void CheckMdb(int rc, const std::string& path, const char* what) {
  DEMI_CHECK(rc == MDB_SUCCESS, "LMDB '", path, "': ", what, " failed: ", mdb_strerror(rc));
}

/// What stopped a write of about `bytes` to the database at `path` that
/// failed with `rc`. LMDB reports a short write, as on a full disk, as EIO:
/// the filesystem's free space and the file size limit tell what it was.
std::string WriteFailure(int rc, const std::string& path, size_t bytes) {
  if (rc == EIO || rc == ENOSPC || rc == EDQUOT || rc == EFBIG) {
    struct statvfs disk {};
    if (statvfs(path.c_str(), &disk) == 0) {
      const uint64_t free = uint64_t{disk.f_bavail} * disk.f_frsize;
      if (free < bytes + (uint64_t{1} << 20)) {
        return StrCat("the filesystem holding it is full (", free >> 10,
                      " KiB free); free some space or write the database elsewhere");
      }
    }
    struct rlimit limit {};
    if (getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
      return StrCat(mdb_strerror(rc), ", perhaps at the file size limit of ", limit.rlim_cur,
                    " bytes (ulimit -f); raise it or write a smaller database");
    }
  }
  return mdb_strerror(rc);
}

bool IsDirectory(const std::string& path) {
  struct stat info {};
  return stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

bool Exists(const std::string& path) {
  struct stat info {};
  return stat(path.c_str(), &info) == 0;
}

/// Bytes of `path`, or -1 when it cannot be read.
int64_t FileSize(const std::string& path) {
  struct stat info {};
  return stat(path.c_str(), &info) == 0 ? static_cast<int64_t>(info.st_size) : -1;
}

/// A data.mdb cut short (a copy that stopped, a full disk) opens fine but
/// its missing pages are mapped past the end of the file: reading them is
/// SIGBUS, or zeros where a read-ahead fills them. Its meta page says how
/// many pages it has, so the file size gives it away at open.
void CheckNotTruncated(MDB_env* env, const std::string& path) {
  MDB_envinfo info{};
  MDB_stat stat{};
  CheckMdb(mdb_env_info(env, &info), path, "info");
  CheckMdb(mdb_env_stat(env, &stat), path, "stat");
  const int64_t pages = static_cast<int64_t>(info.me_last_pgno) + 1;
  const int64_t needed = pages * stat.ms_psize;
  const int64_t size = FileSize(path + "/data.mdb");
  DEMI_CHECK(size < 0 || size >= needed, "LMDB '", path, "' is truncated: its data.mdb holds ",
             size, " bytes, but its ", pages, " pages of ", stat.ms_psize, " bytes need ", needed,
             "; copy or convert it again");
}

/// Environments open in this process, by absolute path: LMDB must not open
/// one file twice in a process. Recursive: a failed Open destroys its
/// half-made environment while holding the lock.
std::recursive_mutex& RegistryMutex() {
  static std::recursive_mutex mutex;
  return mutex;
}

std::map<std::string, std::weak_ptr<LMDB>>& Registry() {
  static std::map<std::string, std::weak_ptr<LMDB>> registry;
  return registry;
}

}  // namespace

std::shared_ptr<LMDB> LMDB::Open(const std::string& path, DBMode mode, size_t initial_map_size) {
  DEMI_CHECK(!path.empty(), "LMDB: empty database path");
  if (mode == DBMode::kRead) {
    DEMI_CHECK(Exists(path), "LMDB '", path, "' does not exist");
    DEMI_CHECK(IsDirectory(path), "LMDB '", path, "' is not a directory");
    DEMI_CHECK(Exists(path + "/data.mdb"), "LMDB '", path,
               "' holds no data.mdb: not an LMDB database");
  } else if (mode == DBMode::kNew) {
    DEMI_CHECK(!Exists(path), "LMDB '", path, "' already exists; remove it or choose another path");
  }
  if (mode != DBMode::kRead && !Exists(path)) {
    std::error_code error;
    std::filesystem::create_directories(path, error);
    DEMI_CHECK(!error, "LMDB '", path, "': cannot create the directory: ", error.message());
  }
  const std::string key = std::filesystem::absolute(path).lexically_normal().string();
  const bool read_only = mode == DBMode::kRead;

  std::lock_guard<std::recursive_mutex> lock(RegistryMutex());
  if (std::shared_ptr<LMDB> open = Registry()[key].lock()) {
    DEMI_CHECK(read_only || !open->read_only(), "LMDB '", path,
               "' is already open read-only in this process; close its readers before writing");
    return open;
  }
  std::shared_ptr<LMDB> db(new LMDB(path, read_only));
  CheckMdb(mdb_env_create(&db->env_), path, "mdb_env_create");
  if (!read_only) CheckMdb(mdb_env_set_mapsize(db->env_, initial_map_size), path, "set map size");
  unsigned int flags = read_only ? MDB_RDONLY | MDB_NOTLS : MDB_NOTLS;
  int rc = mdb_env_open(db->env_, path.c_str(), flags, 0664);
  if (rc == EACCES && read_only) {
    // A database in a read-only directory: no lock file can be made there.
    rc = mdb_env_open(db->env_, path.c_str(), flags | MDB_NOLOCK, 0664);
  }
  // Shorter than LMDB's two meta pages (of at least 4 KiB), it is not read at all.
  const int64_t size = FileSize(path + "/data.mdb");
  DEMI_CHECK(rc != MDB_INVALID || size < 0 || size >= 8192, "LMDB '", path,
             "' is truncated: its data.mdb holds only ", size,
             " bytes, less than LMDB's two meta pages; copy or convert it again");
  CheckMdb(rc, path, "open");
  CheckNotTruncated(db->env_, path);
  MDB_txn* txn = nullptr;
  CheckMdb(mdb_txn_begin(db->env_, nullptr, read_only ? MDB_RDONLY : 0, &txn), path,
           "begin transaction");
  rc = mdb_dbi_open(txn, nullptr, 0, &db->dbi_);
  if (rc != MDB_SUCCESS) mdb_txn_abort(txn);
  CheckMdb(rc, path, "open the database");
  CheckMdb(mdb_txn_commit(txn), path, "commit");
  Registry()[key] = db;
  return db;
}

LMDB::~LMDB() {
  std::lock_guard<std::recursive_mutex> lock(RegistryMutex());
  if (env_ != nullptr) {
    mdb_dbi_close(env_, dbi_);
    mdb_env_close(env_);
  }
}

std::unique_ptr<LMDBCursor> LMDB::NewCursor() const {
  MDB_txn* txn = nullptr;
  CheckMdb(mdb_txn_begin(env_, nullptr, MDB_RDONLY, &txn), path_, "begin read transaction");
  MDB_cursor* cursor = nullptr;
  const int rc = mdb_cursor_open(txn, dbi_, &cursor);
  if (rc != MDB_SUCCESS) mdb_txn_abort(txn);
  CheckMdb(rc, path_, "open cursor");
  std::unique_ptr<LMDBCursor> result(new LMDBCursor(shared_from_this(), txn, cursor));
  result->SeekToFirst();
  return result;
}

std::unique_ptr<LMDBTransaction> LMDB::NewTransaction() {
  DEMI_CHECK(!read_only_, "LMDB '", path_, "' is open read-only; it cannot be written");
  return std::unique_ptr<LMDBTransaction>(new LMDBTransaction(shared_from_this()));
}

int64_t LMDB::Count() const {
  MDB_stat stat{};
  CheckMdb(mdb_env_stat(env_, &stat), path_, "stat");
  return static_cast<int64_t>(stat.ms_entries);
}

size_t LMDB::map_size() const {
  MDB_envinfo info{};
  CheckMdb(mdb_env_info(env_, &info), path_, "info");
  return info.me_mapsize;
}

bool LMDB::TryWrite(const std::vector<std::pair<std::string, std::string>>& records) {
  size_t bytes = 0;
  for (const auto& [key, value] : records) bytes += key.size() + value.size();
  MDB_txn* txn = nullptr;
  CheckMdb(mdb_txn_begin(env_, nullptr, 0, &txn), path_, "begin write transaction");
  for (const auto& [key, value] : records) {
    MDB_val mdb_key{key.size(), const_cast<char*>(key.data())};
    MDB_val mdb_value{value.size(), const_cast<char*>(value.data())};
    const int rc = mdb_put(txn, dbi_, &mdb_key, &mdb_value, 0);
    if (rc == MDB_MAP_FULL) {
      mdb_txn_abort(txn);
      return false;
    }
    if (rc != MDB_SUCCESS) {  // a put writes when a large transaction spills pages
      mdb_txn_abort(txn);
      ThrowError(StrCat("LMDB '", path_, "': put of key '", key,
                        "' failed: ", WriteFailure(rc, path_, bytes)));
    }
  }
  const int rc = mdb_txn_commit(txn);  // frees the transaction either way
  if (rc == MDB_MAP_FULL) return false;
  DEMI_CHECK(rc == MDB_SUCCESS, "LMDB '", path_,
             "': commit failed: ", WriteFailure(rc, path_, bytes));
  return true;
}

void LMDB::DoubleMapSize() {
  const size_t size = map_size();
  CheckMdb(mdb_env_set_mapsize(env_, size * 2), path_, "grow map size");
  VLOG(1) << "LMDB '" << path_ << "': map size doubled to " << size * 2 << " bytes";
}

void LMDBTransaction::Put(std::string key, std::string value) {
  records_.emplace_back(std::move(key), std::move(value));
}

void LMDBTransaction::Commit() {
  while (!db_->TryWrite(records_)) db_->DoubleMapSize();
  records_.clear();
}

LMDBCursor::LMDBCursor(std::shared_ptr<const LMDB> db, MDB_txn* txn, MDB_cursor* cursor)
    : db_(std::move(db)), txn_(txn), cursor_(cursor) {}

LMDBCursor::~LMDBCursor() {
  mdb_cursor_close(cursor_);
  mdb_txn_abort(txn_);
}

void LMDBCursor::Get(MDB_cursor_op op) {
  const int rc = mdb_cursor_get(cursor_, &key_, &value_, op);
  if (rc == MDB_NOTFOUND) {
    valid_ = false;
    return;
  }
  CheckMdb(rc, db_->path(), "cursor read");
  valid_ = true;
}

void LMDBCursor::SeekToFirst() { Get(MDB_FIRST); }

void LMDBCursor::Seek(std::string_view key) {
  // LMDB takes no empty key; every key is at least the empty one.
  if (key.empty()) return SeekToFirst();
  key_.mv_data = const_cast<char*>(key.data());
  key_.mv_size = key.size();
  Get(MDB_SET_RANGE);
}

void LMDBCursor::Next() { Get(MDB_NEXT); }

std::string_view LMDBCursor::key() const {
  return std::string_view(static_cast<const char*>(key_.mv_data), key_.mv_size);
}

std::string_view LMDBCursor::value() const {
  return std::string_view(static_cast<const char*>(value_.mv_data), value_.mv_size);
}

void CheckLmdbBackend(const std::string& backend) {
  DEMI_CHECK(backend == "lmdb", "--backend=", backend,
             " is not supported; LMDB is the only backend (--backend=lmdb)");
}

}  // namespace demi
