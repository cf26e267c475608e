#include <gflags/gflags.h>
#include <glog/logging.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "demi/common.hpp"
#include "demi/parallel/launch_env.hpp"
#include "demi/util/device.hpp"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  google::ParseCommandLineFlags(&argc, &argv, true);
  google::InitGoogleLogging(argv[0]);
  // Nets log every layer at INFO; tests show warnings and errors only.
  FLAGS_minloglevel = google::WARNING;
  FLAGS_logtostderr = true;
  // The tools tests start are single processes unless a test says otherwise,
  // also when the suite itself runs inside an mpirun or Slurm job.
  for (const std::string& name : demi::LauncherRankVariables()) unsetenv(name.c_str());
  // GPU suites (Gpu*Test) need a device: without one they are left out with
  // this single line instead of one skip per case.
  if (demi::DeviceCount() == 0) {
    std::string& filter = ::testing::GTEST_FLAG(filter);
    filter += filter.find('-') == std::string::npos ? "-Gpu*:*/Gpu*" : ":Gpu*:*/Gpu*";
    std::printf("GPU tests (Gpu*) skipped: %s\n",
                demi::kBuiltWithCuda ? "no CUDA device is present" : "this build is CPU_ONLY");
  }
  return RUN_ALL_TESTS();
}
