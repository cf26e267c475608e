// `device_query` (and `caffe device_query`): reports the CUDA devices this
// build can use:
//   device_query            (every device)
//   device_query --gpu=0    (one device; fails if it does not exist)
//   device_query --gemm     (also cuBLAS's matrix-multiply rate on each device)
#include <gflags/gflags.h>

#include <string>
#include <vector>

#include "demi/tools/commands.hpp"
#include "demi/tools/common_flags.hpp"
#include "demi/util/cli.hpp"
#include "demi/util/device.hpp"
#include "demi/util/dnnl.hpp"
#include "demi/util/gemm_rate.hpp"

DEFINE_bool(gemm, false,
            "Also time cuBLAS's 8192^3 matrix product on each device in FP32, TF32, FLOAT16 and "
            "BFLOAT16 (fp32 sums): the roofline a net's throughput is read against.");

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
  if (!FLAGS_gemm) return;
  SetCurrentDevice(id);
  for (const GemmRate& rate : MeasureGemmRates(8192, 3, 10)) {
    LOG(INFO) << "GEMM " << rate.n << "^3 " << rate.precision << ": " << rate.ms << " ms, "
              << rate.tflops << " TFLOP/s";
  }
}

int DeviceQuery() {
  std::vector<int> ids = ParseGpuFlag(FLAGS_gpu);
  if (ids.empty()) {
    const int count = DeviceCount();
    if (count == 0) {
      LOG(INFO) << "No CUDA device is available"
                << (kBuiltWithCuda ? "" : " (this build is CPU_ONLY)")
                << "; Demitasse trains on the CPU";
      LOG(INFO) << (DnnlComputesBfloat16()
                        ? "This CPU computes in BFLOAT16 (oneDNN's bfloat16 kernels)"
                        : "BFLOAT16 on this CPU is a storage type (oneDNN's bfloat16 kernels "
                          "need AVX-512): blobs hold 16 bits, layers compute in FLOAT");
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
  return MakeCommand("device_query", "show GPU diagnostic information", "[--gpu=0,1|all] [--gemm]",
                     {"gpu", "gemm"}, WithoutArgs(DeviceQuery));
}

}  // namespace demi
