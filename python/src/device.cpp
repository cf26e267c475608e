// Which device nets and solvers built from Python run on.
#include "demi/util/device.hpp"

#include "bindings.hpp"
#include "demi/util/dnnl.hpp"

namespace demi {
namespace python {

Context MakeContext(bool gpu, int device_id) {
  Context context;
  if (!gpu) return context;
  DEMI_CHECK(kBuiltWithCuda,
             "GPU mode asked for, but this build of Demitasse is CPU_ONLY; rebuild without "
             "CPU_ONLY=1 (with CUDA installed) or call set_mode_cpu()");
  const int count = DeviceCount();
  DEMI_CHECK(device_id >= 0 && device_id < count, "GPU ", device_id,
             " asked for, but this machine has ", count,
             " CUDA device(s); pick another with set_device() or call set_mode_cpu()");
  SetCurrentDevice(device_id);
  context.device = Device::kGPU;
  context.device_id = device_id;
  return context;
}

void DefineDevice(py::module_& module) {
  module.attr("built_with_cuda") = kBuiltWithCuda;
  module.def("device_count", &DeviceCount, "Number of CUDA devices (0 on a CPU_ONLY build).");
  module.def("cpu_computes_bfloat16", &DnnlComputesBfloat16,
             "Whether oneDNN computes in bfloat16 on this CPU (AVX-512); where not, BFLOAT16 is "
             "a storage type: blobs hold 16 bits, layers compute in FLOAT.");
  module.def(
      "check_device", [](int device_id) { MakeContext(true, device_id); },
      "Raises RuntimeError unless GPU `device_id` can be used.");
}

}  // namespace python
}  // namespace demi
