// Solver update time per step on ResNet-50's params (build/bench/solver_update):
// a net of Parameter layers shaped like ResNet-50's learnable params (with
// their lr_mult and decay_mult) trains with no loss, so a step is clearing
// the diffs, the Parameter layers' forward copies and the update. The
// forward alone is timed too and subtracted, leaving clear + update. Uses
// only Solver/Net API that predates the param block, so the same source
// builds against an older library for a side-by-side comparison.
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <functional>
#include <string>
#include <vector>

#include "demi/net.hpp"
#include "demi/solver.hpp"
#include "demi/solver_registry.hpp"
#include "demi/util/io.hpp"
#include "demi/util/threads.hpp"

DEFINE_string(params_of, "models/resnet50/deploy.prototxt", "Net whose params to mirror.");
DEFINE_string(rules, "SGD,Adam", "Update rules to time, comma-separated.");
DEFINE_string(thread_counts, "1,2", "Thread counts to time, comma-separated.");
DEFINE_int32(steps, 20, "Timed steps per configuration (the fastest run of 3 is kept).");

namespace {

using Clock = std::chrono::steady_clock;

std::vector<std::string> Split(const std::string& text) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    if (comma > start) parts.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return parts;
}

/// A net of one Parameter layer per learnable param of `model` (built at
/// batch 1 to read its shapes), carrying the param's multipliers.
demi::NetParameter MirrorParams(const std::string& model, int64_t* floats) {
  demi::NetParameter source;
  demi::ReadProtoFromTextFile(model, &source);
  for (auto& layer : *source.mutable_layer()) {
    if (layer.type() == "Input") layer.mutable_input_param()->mutable_shape(0)->set_dim(0, 1);
  }
  source.mutable_state()->set_phase(demi::TEST);
  demi::Net net(source);
  demi::NetParameter mirror;
  mirror.set_name("params_of_" + net.name());
  *floats = 0;
  for (size_t p = 0; p < net.learnable_params().size(); ++p) {
    const demi::Blob& blob = *net.learnable_params()[p];
    demi::LayerParameter* layer = mirror.add_layer();
    layer->set_name("p" + std::to_string(p));
    layer->set_type("Parameter");
    layer->add_top(layer->name());
    for (int64_t dim : blob.shape())
      layer->mutable_parameter_param()->mutable_shape()->add_dim(dim);
    demi::ParamSpec* spec = layer->add_param();
    spec->set_lr_mult(net.params_lr()[p]);
    spec->set_decay_mult(net.params_weight_decay()[p]);
    *floats += blob.count();
  }
  return mirror;
}

/// The process's CPU time (all threads) in ms: on a shared machine it
/// shows the work done where wall time also shows the waiting.
double CpuMilliseconds() {
  timespec now;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return now.tv_sec * 1e3 + now.tv_nsec / 1e6;
}

struct Timing {
  double wall_ms = 1e30;
  double cpu_ms = 1e30;
};

/// Per run of `run`, the best of 3 trials of `iters` runs each.
Timing TimePer(int iters, const std::function<void()>& run) {
  Timing best;
  for (int trial = 0; trial < 3; ++trial) {
    const auto start = Clock::now();
    const double cpu_start = CpuMilliseconds();
    for (int i = 0; i < iters; ++i) run();
    const double cpu = CpuMilliseconds() - cpu_start;
    const double wall = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    best.wall_ms = std::min(best.wall_ms, wall / iters);
    best.cpu_ms = std::min(best.cpu_ms, cpu / iters);
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  google::InitGoogleLogging(argv[0]);
  FLAGS_minloglevel = 2;
  int64_t floats = 0;
  const demi::NetParameter mirror = MirrorParams(FLAGS_params_of, &floats);
  std::printf("%s: %d params, %.1f M floats\n", FLAGS_params_of.c_str(), mirror.layer_size(),
              floats / 1e6);
  std::printf("%-8s %7s %10s %10s %10s %12s %12s\n", "solver", "threads", "step_ms", "forward_ms",
              "update_ms", "step_cpu_ms", "update_cpu_ms");
  for (const std::string& type : Split(FLAGS_rules)) {
    for (const std::string& threads : Split(FLAGS_thread_counts)) {
      demi::SetThreads(std::stoi(threads));
      demi::SolverParameter param;
      *param.mutable_net_param() = mirror;
      param.set_type(type);
      param.set_base_lr(0.01f);
      param.set_lr_policy("fixed");
      param.set_weight_decay(1e-4f);
      if (type != "AdaGrad" && type != "RMSProp") param.set_momentum(0.9f);
      param.set_max_iter(1 << 30);
      param.set_snapshot_after_train(false);
      param.set_random_seed(1);
      auto solver = demi::SolverRegistry::Create(param);
      solver->Step(2);  // warm: history and diffs touched
      const Timing step = TimePer(FLAGS_steps, [&] { solver->Step(1); });
      const Timing forward = TimePer(FLAGS_steps, [&] { solver->net().Forward(); });
      std::printf("%-8s %7s %10.2f %10.2f %10.2f %12.2f %12.2f\n", type.c_str(), threads.c_str(),
                  step.wall_ms, forward.wall_ms, step.wall_ms - forward.wall_ms, step.cpu_ms,
                  step.cpu_ms - forward.cpu_ms);
      std::fflush(stdout);
    }
  }
  return 0;
}
