#ifndef DEMI_TOOLS_COMMON_FLAGS_HPP_
#define DEMI_TOOLS_COMMON_FLAGS_HPP_

// The flags several commands read, defined once (src/demi/tools/common_flags.cpp):
// `caffe` links every command into one binary, and gflags allows one
// definition of a name per process. A flag only one command reads is
// defined in that command's file.
#include <gflags/gflags.h>

#include <cstddef>
#include <string>

#include "demi/common.hpp"
#include "demi/proto/demi.pb.h"

DECLARE_string(model);
DECLARE_string(solver);
DECLARE_string(weights);
DECLARE_string(gpu);
DECLARE_int32(iterations);
DECLARE_string(phase);
DECLARE_int64(batch);
DECLARE_string(engine);
DECLARE_string(precision);
DECLARE_bool(deterministic);
DECLARE_int32(threads);
DECLARE_int32(level);
DECLARE_string(stage);
DECLARE_string(memory_budget);
DECLARE_string(schedule);

namespace demi {

/// --schedule into `order`; false when the flag is not given.
bool ParseScheduleFlag(ScheduleOrder* order);

/// The context of a tool running one net: the device of `gpu` (--gpu's
/// syntax; the CPU when empty) and --deterministic's GPU math.
Context ToolContext(const std::string& gpu = FLAGS_gpu);

/// --engine and --precision applied to `param`.
void ApplyEngineFlags(NetParameter* param);

/// --batch applied to `param`'s inputs when given (0: as written); a
/// negative one is refused.
void ApplyBatchFlag(NetParameter* param);

/// --memory_budget in bytes (a command reads 'auto' or 'smallest' itself
/// first); 0 when not given. "0" is refused (no memory at all is no plan;
/// leaving the flag out means no budget), and the bytes read are logged.
size_t MemoryBudgetBytes();

/// The net prototxt `model` as a tool that runs its TEST phase reads it:
/// phase TEST, --level and --stage in its state, --engine and --precision
/// applied.
NetParameter ReadTestNetParam(const std::string& model);

}  // namespace demi

#endif  // DEMI_TOOLS_COMMON_FLAGS_HPP_
