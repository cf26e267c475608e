#ifndef DEMI_TESTS_TOOL_TEST_UTIL_HPP_
#define DEMI_TESTS_TOOL_TEST_UTIL_HPP_

// Running the command-line tools from tests, as users run them.
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <string>

namespace demi {
// Each test file gets its own copy of these helpers.
namespace {

/// build/tools/<name>, found beside this test binary (build/test/...).
inline std::string ToolPath(const std::string& name) {
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe");
  return (exe.parent_path().parent_path() / "tools" / name).string();
}

struct Result {
  int status = -1;
  std::string output;
};

/// Runs a shell command with stderr folded into stdout.
inline Result RunShell(const std::string& command) {
  Result result;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) result.output.append(buffer, n);
  const int status = ::pclose(pipe);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

}  // namespace
}  // namespace demi

#endif  // DEMI_TESTS_TOOL_TEST_UTIL_HPP_
