#include "demi/util/temporary_files.hpp"

#include <glog/logging.h>
#include <signal.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <filesystem>
#include <utility>

namespace demi {

namespace {

constexpr char kTemporaryMarker[] = ".tmp.";

/// The PID of a name ending in ".tmp.<digits>", else -1.
long WriterPid(const std::string& name) {
  const size_t marker = name.rfind(kTemporaryMarker);
  if (marker == std::string::npos) return -1;
  const std::string digits = name.substr(marker + sizeof(kTemporaryMarker) - 1);
  if (digits.empty() || digits.size() > 9) return -1;
  for (char c : digits) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return -1;
  }
  return std::stol(digits);
}

}  // namespace

std::string TemporaryPathFor(const std::string& path) {
  return path + kTemporaryMarker + std::to_string(::getpid());
}

bool ProcessIsAlive(long pid) {
  if (pid <= 0) return false;
  return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH;
}

std::vector<std::string> RemoveStaleTemporaries(const std::string& prefix) {
  namespace fs = std::filesystem;
  const fs::path prefix_path(prefix);
  // "dir/run" covers dir/run*; "dir/" (a prefix naming a directory) all of dir.
  const fs::path dir = prefix_path.has_parent_path() ? prefix_path.parent_path() : fs::path(".");
  const std::string stem = prefix_path.filename().string();
  std::vector<std::pair<fs::path, long>> stale;  // gathered first: removing while listing is unsafe
  std::error_code error;
  for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (name.compare(0, stem.size(), stem) != 0) continue;
    const long pid = WriterPid(name);
    if (pid >= 0 && !ProcessIsAlive(pid)) stale.emplace_back(it->path(), pid);
  }
  std::vector<std::string> removed;
  for (const auto& [path, pid] : stale) {
    std::error_code remove_error;
    fs::remove_all(path, remove_error);
    if (remove_error) {
      LOG(WARNING) << "Cannot remove the stale temporary " << path.string() << " of dead process "
                   << pid << ": " << remove_error.message();
      continue;
    }
    LOG(INFO) << "Removed " << path.string() << ", left by process " << pid
              << ", which died while writing it";
    removed.push_back(path.string());
  }
  return removed;
}

}  // namespace demi
