#ifndef DEMI_UTIL_FILE_LOCK_HPP_
#define DEMI_UTIL_FILE_LOCK_HPP_

#include <memory>
#include <string>
#include <utility>

namespace demi {

/// @brief An exclusive flock(2) on a lock file, which holds the holder's PID
/// and host, so that two processes never write the same files (two trainers
/// with one snapshot_prefix). The kernel drops the lock when the process
/// ends, however it ends; a released lock also removes its file, and a file
/// a killed holder left behind is simply locked again.
///
/// Within one process a path is locked once and shared: a second holder in
/// the same process (a solver built twice in Python) is not refused.
class FileLock {
 public:
  /// Locks `path`, creating it. Throws an Error naming `what` (what the lock
  /// guards) and, when another process holds it, that process's PID and host,
  /// then `fix` (what to do about it).
  static std::shared_ptr<FileLock> Acquire(const std::string& path, const std::string& what,
                                           const std::string& fix);
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

  const std::string& path() const { return path_; }

 private:
  FileLock(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}

  std::string path_;
  int fd_;
};

}  // namespace demi

#endif  // DEMI_UTIL_FILE_LOCK_HPP_
