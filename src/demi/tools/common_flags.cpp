#include "demi/tools/common_flags.hpp"

#include <iomanip>

#include "demi/common.hpp"
#include "demi/engine_decision.hpp"
#include "demi/util/batch_size.hpp"
#include "demi/util/byte_size.hpp"
#include "demi/util/cli.hpp"
#include "demi/util/upgrade_proto.hpp"

DEFINE_string(model, "", "The net prototxt.");
DEFINE_string(solver, "", "The solver prototxt.");
DEFINE_string(weights, "",
              "Comma-separated .caffemodel files, copied by layer name in order (train: the "
              "weights to fine-tune from; not with --snapshot).");
DEFINE_string(gpu, "",
              "GPU ids: one (0); train also takes several (0,1: one replica each) or all; "
              "device_query: those to query; memory: also build the net there and report "
              "device bytes after one step. None: the CPU (device_query: every device).");
DEFINE_int32(iterations, 50, "Number of batches to run.");
DEFINE_string(phase, "",
              "Net phase: TRAIN or TEST (time: default TRAIN, forward and backward; memory: "
              "default both).");
DEFINE_int64(batch, 0, "Override the batch size of the net's inputs (0: as written).");
DEFINE_string(
    engine, "",
    "Override the nets' engine for layers without their own: DEFAULT, CAFFE, CUDNN or DNNL.");
DEFINE_string(precision, "",
              "FLOAT, FLOAT16 or BFLOAT16: each layer without types of its own runs the "
              "narrowest types down to this one that an engine offers (in place of the nets' "
              "default_* types); the log and `memory` say which each got.");
DEFINE_bool(deterministic, false,
            "GPU FLOAT math in plain FP32 with deterministic cuDNN algorithms, bit-identical "
            "from run to run (Caffe's). Without it: TF32 tensor cores on Ampere and newer GPUs "
            "and the fastest cuDNN algorithms, measured once per shape.");
DEFINE_int32(threads, 0,
             "CPU threads for OpenMP loops, oneDNN and OpenBLAS (0: OMP_NUM_THREADS, else all "
             "cores).");
DEFINE_int32(level, 0, "Net state level.");
DEFINE_string(stage, "", "Comma-separated net state stages.");
DEFINE_string(memory_budget, "",
              "Bytes the train net's arena (activations, gradients, layer buffers) may take, e.g. "
              "1.5GiB (GiB, MiB, KiB and G, M, K: powers of 1024; GB, MB, KB: of 1000; not 0): "
              "activations are dropped after forward and recomputed in backward to fit. "
              "train also takes 'auto' (the largest batch that fits the machine's free memory, "
              "the global batch kept through iter_size); memory takes 'smallest' (the least "
              "recomputation reaches).");
DEFINE_string(schedule, "",
              "The order layers run in: 'search' (the planner chooses an order with a lower "
              "memory bound and the same results; the default for ARENA plans) or 'prototxt'.");

namespace demi {

bool ParseScheduleFlag(ScheduleOrder* order) {
  if (FLAGS_schedule.empty()) return false;
  DEMI_CHECK(FLAGS_schedule == "search" || FLAGS_schedule == "prototxt",
             "--schedule must be search or prototxt, got '", FLAGS_schedule, "'");
  *order = FLAGS_schedule == "search" ? SEARCH : PROTOTXT;
  return true;
}

Context ToolContext(const std::string& gpu) {
  Context context = ContextForGpuFlag(gpu);
  context.gpu_math = FLAGS_deterministic ? GpuMath::kDeterministic : GpuMath::kTensorOps;
  return context;
}

void ApplyEngineFlags(NetParameter* param) {
  Engine engine;
  if (ParseEngineFlag(FLAGS_engine, &engine)) param->set_engine(engine);
  Type precision;
  if (ParsePrecisionFlag(FLAGS_precision, &precision)) ApplyPrecision(precision, param);
}

void ApplyBatchFlag(NetParameter* param) {
  DEMI_CHECK(FLAGS_batch >= 0, "--batch must be positive (0: the net's own), got ", FLAGS_batch);
  if (FLAGS_batch > 0) SetBatchSize(param, FLAGS_batch);
}

size_t MemoryBudgetBytes() {
  if (FLAGS_memory_budget.empty()) return 0;
  const size_t bytes = ParseByteSize(FLAGS_memory_budget, "--memory_budget");
  DEMI_CHECK(bytes > 0, "--memory_budget=", FLAGS_memory_budget,
             " would leave the train net no memory at all; leave the flag out to plan without a "
             "budget, or give a size such as 1.5GiB");
  LOG(INFO) << "--memory_budget=" << FLAGS_memory_budget << ": " << bytes << " bytes ("
            << std::fixed << std::setprecision(1) << static_cast<double>(bytes) / (1 << 20)
            << " MiB)";
  return bytes;
}

NetParameter ReadTestNetParam(const std::string& model) {
  NetParameter param;
  ReadNetParamsFromTextFile(model, &param);
  param.mutable_state()->set_phase(TEST);
  param.mutable_state()->set_level(FLAGS_level);
  for (const std::string& stage : SplitList(FLAGS_stage)) param.mutable_state()->add_stage(stage);
  ApplyEngineFlags(&param);
  return param;
}

}  // namespace demi
