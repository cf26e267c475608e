#ifndef DEMI_COMMON_HPP_
#define DEMI_COMMON_HPP_

#include <glog/logging.h>

#include <cstddef>
#include <cstdint>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace demi {

/// @brief Error for bad user input (prototxt, shapes, files, records).
/// Library code throws it with a message that names the file, line, layer or
/// record at fault; tools catch it at the top and exit non-zero.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

template <typename... Parts>
std::string StrCat(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}

[[noreturn]] void ThrowError(const std::string& message);

/// The random engine every component uses; its state serializes as text, so a
/// snapshot can carry it.
using RandomEngine = std::mt19937;

/// Where a layer runs. CPU is the default and always available.
enum class Device { kCPU, kGPU };

/// Which implementation computes a layer: the values of the proto's Engine
/// enums (the net-wide one and each layer param's own).
enum class EngineKind { kDefault = 0, kCaffe = 1, kCudnn = 2, kDnnl = 5001 };

/// How a GPU computes FLOAT math (convolutions through cuDNN, matrix products
/// through cuBLAS). kDeterministic: plain FP32 FMA math and deterministic cuDNN
/// algorithms chosen by cuDNN's heuristics, bit-identical from run to run and
/// close to the CPU's results. kTensorOps: TF32 tensor cores on Ampere and
/// newer (10-bit mantissa products, FP32 sums; NVIDIA_TF32_OVERRIDE=0 turns
/// them off in the libraries) and the fastest cuDNN algorithms, measured per
/// shape once per process, deterministic or not. The tools and solvers default
/// to kTensorOps (--deterministic or the solver's `deterministic: true` keep
/// kDeterministic); a Context made in code keeps kDeterministic.
enum class GpuMath { kDeterministic, kTensorOps };

/// The explicit execution context a net hands to each of its layers, instead
/// of a global mode read deep inside layer code.
struct Context {
  Device device = Device::kCPU;
  int device_id = 0;
  uint32_t seed = 1701;  ///< base seed; each layer derives its own stream
  /// Data-parallel replication: this replica's index among all replicas of
  /// all processes, and their number. TRAIN data layers read shard `replica`
  /// of `num_replicas`; layers' own random streams differ per replica.
  int replica = 0;
  int num_replicas = 1;
  /// The most workspace one layer's cuDNN algorithms may use
  /// (NetParameter.cudnn_workspace_mb).
  size_t cudnn_workspace_bytes = size_t{256} << 20;
  /// The engine of layers whose own engine is DEFAULT (NetParameter.engine).
  EngineKind engine = EngineKind::kDefault;
  /// FLOAT math on a GPU (see GpuMath); a CPU ignores it.
  GpuMath gpu_math = GpuMath::kDeterministic;
};

/// True when this build has CUDA support compiled in.
constexpr bool kBuiltWithCuda =
#ifdef CPU_ONLY
    false;
#else
    true;
#endif

}  // namespace demi

// The failure rule. Two ways to fail, chosen by who can cause the failure:
//  - DEMI_CHECK (throws demi::Error) for anything a user, a file, a flag, a
//    record or a Python call can cause. Its message names the thing at fault
//    (file and line, layer, field, flag, record) and says how to fix it. Tools
//    catch it and exit 1 with that one line; Python gets a RuntimeError and the
//    session lives on.
//  - glog's CHECK (aborts the process, a Python session included) only for an
//    internal invariant whose failure is a bug of ours, e.g. a planner offset
//    past its arena or a view bound twice: nothing a caller passes can reach it.
// When in doubt, it is DEMI_CHECK: a user must never see an abort.
/// Throws demi::Error with the concatenated message parts when `cond` fails.
#define DEMI_CHECK(cond, ...)                                     \
  do {                                                            \
    if (!(cond)) ::demi::ThrowError(::demi::StrCat(__VA_ARGS__)); \
  } while (0)

#endif  // DEMI_COMMON_HPP_
