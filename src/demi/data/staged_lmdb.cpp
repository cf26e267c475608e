#include "demi/data/staged_lmdb.hpp"

#include <fcntl.h>
#include <stdio.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "demi/common.hpp"
#include "demi/util/temporary_files.hpp"

namespace demi {

StagedLMDB::StagedLMDB(const std::string& target)
    : target_(target), temporary_(TemporaryPathFor(target)) {
  DEMI_CHECK(!target.empty(), "LMDB: empty database path");
  std::error_code error;
  DEMI_CHECK(!std::filesystem::exists(target, error), "LMDB '", target,
             "' already exists; remove it or choose another path");
  RemoveStaleTemporaries(target + ".tmp.");
  db_ = LMDB::Open(temporary_, DBMode::kNew);
}

StagedLMDB::~StagedLMDB() {
  if (published_) return;
  db_.reset();
  std::error_code ignored;
  std::filesystem::remove_all(temporary_, ignored);
}

void StagedLMDB::Publish() {
  CHECK(!published_) << target_ << " is already published";
  CHECK_EQ(db_.use_count(), 1) << "a transaction or cursor of " << temporary_ << " is still open";
  db_.reset();  // closes the environment: everything committed is on disk
  // RENAME_NOREPLACE: a target made meanwhile (another conversion) is kept.
  int rc = ::renameat2(AT_FDCWD, temporary_.c_str(), AT_FDCWD, target_.c_str(), RENAME_NOREPLACE);
  if (rc != 0 && errno == EINVAL) rc = std::rename(temporary_.c_str(), target_.c_str());  // no flag
  if (rc != 0) {
    const std::string reason = errno == EEXIST ? "it was created meanwhile" : std::strerror(errno);
    ThrowError(StrCat("cannot rename the converted database '", temporary_, "' to '", target_,
                      "': ", reason));
  }
  published_ = true;
}

}  // namespace demi
