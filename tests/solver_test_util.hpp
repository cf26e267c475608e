#ifndef DEMI_TESTS_SOLVER_TEST_UTIL_HPP_
#define DEMI_TESTS_SOLVER_TEST_UTIL_HPP_

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "demi/solver.hpp"
#include "demi/solver_registry.hpp"
#include "test_util.hpp"

namespace demi {
// Each test file gets its own copy of these helpers.
namespace {

/// A fresh directory under $TMPDIR (or /tmp), removed with its contents.
class ScratchDir {
 public:
  ScratchDir() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base && *base ? base : "/tmp") + "/demi_test_XXXXXX";
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    CHECK(::mkdtemp(buffer.data()) != nullptr)
        << "mkdtemp " << pattern << ": " << std::strerror(errno);
    path_ = buffer.data();
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

/// Builds the solver that `text` (a SolverParameter prototxt) names; unless
/// `text` says otherwise, it writes no snapshot after training.
inline std::unique_ptr<Solver> MakeSolver(const std::string& text) {
  SolverParameter param = ParseText<SolverParameter>(text);
  if (!param.has_snapshot_after_train()) param.set_snapshot_after_train(false);
  return SolverRegistry::Create(param);
}

/// Every learnable param's data, concatenated.
inline std::vector<float> AllParams(const Net& net) {
  std::vector<float> values;
  for (const Blob* blob : net.learnable_params()) {
    values.insert(values.end(), blob->cpu_data(), blob->cpu_data() + blob->count());
  }
  return values;
}

/// Every history blob's data, concatenated.
inline std::vector<float> AllHistory(const Solver& solver) {
  std::vector<float> values;
  for (const auto& blob : solver.history()) {
    values.insert(values.end(), blob->cpu_data(), blob->cpu_data() + blob->count());
  }
  return values;
}

}  // namespace
}  // namespace demi

#endif  // DEMI_TESTS_SOLVER_TEST_UTIL_HPP_
