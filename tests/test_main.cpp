#include <gflags/gflags.h>
#include <glog/logging.h>
#include <gtest/gtest.h>

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  google::ParseCommandLineFlags(&argc, &argv, true);
  google::InitGoogleLogging(argv[0]);
  // Nets log every layer at INFO; tests show warnings and errors only.
  FLAGS_minloglevel = google::WARNING;
  FLAGS_logtostderr = true;
  return RUN_ALL_TESTS();
}
