// Reports the CUDA devices this build can use:
//   build/tools/device_query            (every device)
//   build/tools/device_query --gpu=0    (one device; fails if it does not exist)
#include <gflags/gflags.h>

#include <vector>

#include "demi/util/cli.hpp"
#include "demi/util/device.hpp"

#ifndef CPU_ONLY
#include <cuda_runtime.h>
#endif

DEFINE_string(gpu, "", "Device ids to query (none: all).");

namespace {

void QueryDevice(int id) {
#ifdef CPU_ONLY
  LOG(INFO) << "Device id: " << id;
#else
  cudaDeviceProp prop;
  const cudaError_t status = cudaGetDeviceProperties(&prop, id);
  DEMI_CHECK(status == cudaSuccess, "cannot query device ", id, ": ", cudaGetErrorString(status));
  LOG(INFO) << "Device id:                     " << id;
  LOG(INFO) << "Name:                          " << prop.name;
  LOG(INFO) << "Compute capability:            " << prop.major << "." << prop.minor;
  LOG(INFO) << "Total global memory:           " << prop.totalGlobalMem;
  LOG(INFO) << "Number of multiprocessors:     " << prop.multiProcessorCount;
  LOG(INFO) << "Total shared memory per block: " << prop.sharedMemPerBlock;
  LOG(INFO) << "Warp size:                     " << prop.warpSize;
  LOG(INFO) << "Maximum threads per block:     " << prop.maxThreadsPerBlock;
#endif
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
