// `device_query` (and `caffe device_query`): reports the CUDA devices this
// build can use:
//   device_query            (every device)
//   device_query --gpu=0    (one device; fails if it does not exist)
#include <string>
#include <vector>

#include "demi/tools/commands.hpp"
#include "demi/tools/common_flags.hpp"
#include "demi/util/cli.hpp"
#include "demi/util/device.hpp"

namespace demi {

namespace {

void QueryDevice(int id) {
  const DeviceInfo info = GetDeviceInfo(id);
  constexpr double kMiB = 1024.0 * 1024.0;
  LOG(INFO) << "Device id:                 " << id;
  LOG(INFO) << "Name:                      " << info.name;
  LOG(INFO) << "Compute capability:        " << info.major << "." << info.minor;
  LOG(INFO) << "Total memory:              " << info.total_bytes / kMiB << " MiB";
  LOG(INFO) << "Free memory:               " << info.free_bytes / kMiB << " MiB";
  LOG(INFO) << "Number of multiprocessors: " << info.multiprocessors;
}

int DeviceQuery() {
  std::vector<int> ids = ParseGpuFlag(FLAGS_gpu);
  if (ids.empty()) {
    const int count = DeviceCount();
    if (count == 0) {
      LOG(INFO) << "No CUDA device is available"
                << (kBuiltWithCuda ? "" : " (this build is CPU_ONLY)")
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

Command DeviceQueryCommand() {
  return MakeCommand("device_query", "show GPU diagnostic information", "[--gpu=0,1|all]", {"gpu"},
                     WithoutArgs(DeviceQuery));
}

}  // namespace demi
