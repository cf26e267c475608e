#ifndef DEMI_TESTS_SOLVER_TEST_UTIL_HPP_
#define DEMI_TESTS_SOLVER_TEST_UTIL_HPP_

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>
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

/// The solver text for a snapshot prefix, a max_iter and extra fields.
using SolverText =
    std::function<std::string(const std::string& prefix, int max_iter, const std::string& extra)>;
using SolverMaker = std::function<std::unique_ptr<Solver>(const std::string& text)>;

/// Three runs of `text` in `dir`: `iterations` straight, the first half
/// ending in a snapshot, and the second half resumed from that snapshot.
struct ResumeRuns {
  std::unique_ptr<Solver> straight, first_half, second_half;
};

inline ResumeRuns RunStraightAndResumed(const ScratchDir& dir, const SolverText& text,
                                        int iterations, const SolverMaker& make = MakeSolver) {
  ResumeRuns runs;
  runs.straight = make(text(dir.file("straight"), iterations, ""));
  runs.straight->Solve();
  const int half = iterations / 2;
  runs.first_half = make(text(dir.file("split"), half, "snapshot_after_train: true"));
  runs.first_half->Solve();
  runs.second_half = make(text(dir.file("split"), iterations, ""));
  runs.second_half->Solve(dir.file(StrCat("split_iter_", half, ".solverstate")));
  EXPECT_EQ(runs.second_half->iter(), iterations);
  // Resumed, the params, history and iteration are the straight run's, bit
  // for bit; the first half's differ (it stopped early).
  EXPECT_EQ(AllParams(runs.second_half->net()), AllParams(runs.straight->net()));
  EXPECT_EQ(AllHistory(*runs.second_half), AllHistory(*runs.straight));
  EXPECT_NE(AllParams(runs.first_half->net()), AllParams(runs.straight->net()));
  return runs;
}

}  // namespace
}  // namespace demi

#endif  // DEMI_TESTS_SOLVER_TEST_UTIL_HPP_
