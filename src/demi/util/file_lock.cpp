#include "demi/util/file_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <utility>

#include "demi/common.hpp"

namespace demi {

namespace {

std::mutex& RegistryMutex() {
  static std::mutex mutex;
  return mutex;
}

/// The locks this process holds, by absolute path.
std::map<std::string, std::weak_ptr<FileLock>>& Registry() {
  static std::map<std::string, std::weak_ptr<FileLock>> registry;
  return registry;
}

std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "unknown";
  return name;
}

/// "PID 123 on host a": what the holder wrote, or a note that it has not yet.
std::string Holder(int fd) {
  char text[512] = {};
  const ssize_t n = pread(fd, text, sizeof(text) - 1, 0);
  std::string holder(text, n > 0 ? static_cast<size_t>(n) : 0);
  while (!holder.empty() && holder.back() == '\n') holder.pop_back();
  return holder.empty() ? "a process that has not yet written its PID" : holder;
}

/// Whether `fd` is still the file at `path`: a holder that released the lock
/// removed the file after we opened it, and a new one may be there now.
bool IsFileAt(int fd, const std::string& path) {
  struct stat open_file {};
  struct stat at_path {};
  return fstat(fd, &open_file) == 0 && stat(path.c_str(), &at_path) == 0 &&
         open_file.st_dev == at_path.st_dev && open_file.st_ino == at_path.st_ino;
}

}  // namespace

std::shared_ptr<FileLock> FileLock::Acquire(const std::string& path, const std::string& what,
                                            const std::string& fix) {
  const std::string key = std::filesystem::absolute(path).lexically_normal().string();
  std::lock_guard<std::mutex> guard(RegistryMutex());
  if (std::shared_ptr<FileLock> held = Registry()[key].lock()) return held;
  int fd = -1;
  for (;;) {
    fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    DEMI_CHECK(fd >= 0, what, ": cannot create the lock file '", path, "': ", std::strerror(errno),
               "; make sure the directory exists and is writable");
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int error = errno;
      const std::string holder = error == EWOULDBLOCK ? Holder(fd) : "";
      close(fd);
      DEMI_CHECK(error != EWOULDBLOCK, what, " is in use by another process, ", holder,
                 ", which holds '", path, "'; ", fix);
      ThrowError(StrCat(what, ": cannot lock '", path, "': ", std::strerror(error)));
    }
    if (IsFileAt(fd, path)) break;
    close(fd);
  }
  const std::string holder = StrCat("PID ", getpid(), " on host ", HostName(), "\n");
  if (ftruncate(fd, 0) != 0 || pwrite(fd, holder.data(), holder.size(), 0) < 0) {
    // The lock holds without the note; only a refused process's message is poorer.
    PLOG(WARNING) << "cannot write the holder into the lock file '" << path << "'";
  }
  std::shared_ptr<FileLock> lock(new FileLock(path, fd));
  Registry()[key] = lock;
  return lock;
}

FileLock::~FileLock() {
  std::lock_guard<std::mutex> guard(RegistryMutex());  // no Acquire of this path meanwhile
  // Removed while still locked, so no other process locks the file meanwhile.
  unlink(path_.c_str());
  close(fd_);
}

}  // namespace demi
