// Reports the CUDA devices this build can use:
//   build/tools/device_query            (every device)
//   build/tools/device_query --gpu=0    (one device; fails if it does not exist)
#include <gflags/gflags.h>

#include <vector>

#include "demi/util/cli.hpp"
#include "demi/util/device.hpp"

DEFINE_string(gpu, "", "Device ids to query (none: all).");

namespace {

void QueryDevice(int id) {
  const demi::DeviceInfo info = demi::GetDeviceInfo(id);
  constexpr double kMiB = 1024.0 * 1024.0;
  LOG(INFO) << "Device id:                 " << id;
  LOG(INFO) << "Name:                      " << info.name;
  LOG(INFO) << "Compute capability:        " << info.major << "." << info.minor;
  LOG(INFO) << "Total memory:              " << info.total_bytes / kMiB << " MiB";
  LOG(INFO) << "Free memory:               " << info.free_bytes / kMiB << " MiB";
  LOG(INFO) << "Number of multiprocessors: " << info.multiprocessors;
}

int DeviceQuery() {
  std::vector<int> ids = demi::ParseGpuFlag(FLAGS_gpu);
  if (ids.empty()) {
    const int count = demi::DeviceCount();
    if (count == 0) {
      LOG(INFO) << "No CUDA device is available"
                << (demi::kBuiltWithCuda ? "" : " (this build is CPU_ONLY)")
                << "; Demitasse trains on the CPU";
      return 0;
    }
    for (int id = 0; id < count; ++id) ids.push_back(id);
  }
  LOG(INFO) << ids.size() << " CUDA device(s) queried";
  for (int id : ids) QueryDevice(id);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return demi::RunTool(argc, argv,
                       "Report the CUDA devices available.\n"
                       "Usage: device_query [--gpu=0,1|all]",
                       DeviceQuery);
}
