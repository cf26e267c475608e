// Trains a net with a solver prototxt, in Caffe's log format:
//   build/tools/train --solver=models/lenet/lenet_dummy_solver.prototxt
//   build/tools/train --solver=... --snapshot=prefix_iter_1000.solverstate   (resume)
//   build/tools/train --solver=... --weights=a.caffemodel,b.caffemodel      (fine-tune)
#include <gflags/gflags.h>

#include <memory>
#include <vector>

#include "demi/solver.hpp"
#include "demi/solver_registry.hpp"
#include "demi/util/cli.hpp"
#include "demi/util/device.hpp"
#include "demi/util/signal.hpp"

DEFINE_string(solver, "", "The solver prototxt.");
DEFINE_string(weights, "",
              "Comma-separated .caffemodel files to fine-tune from, copied by layer name in "
              "order. Cannot be given with --snapshot.");
DEFINE_string(snapshot, "", "A .solverstate to resume training from.");
DEFINE_string(gpu, "", "GPU id to train on (none: CPU).");
DEFINE_int32(level, 0, "State level of the train and test nets.");
DEFINE_string(stage, "", "Comma-separated state stages of the train and test nets.");
DEFINE_string(sigint_effect, "stop",
              "What SIGINT (Ctrl-C) does: snapshot, stop (snapshot if snapshot_after_train, "
              "then exit) or none.");
DEFINE_string(sighup_effect, "snapshot", "What SIGHUP does: snapshot, stop or none.");

namespace {

/// The device to train on: --gpu, else the solver's solver_mode: GPU when a
/// device exists.
demi::Context ChooseContext(const demi::SolverParameter& param) {
  std::vector<int> gpus = demi::ParseGpuFlag(FLAGS_gpu);
  if (gpus.empty() && param.has_solver_mode() &&
      param.solver_mode() == demi::SolverParameter::GPU) {
    if (demi::DeviceCount() > 0) {
      gpus.push_back(param.device_id());
    } else {
      LOG(WARNING) << FLAGS_solver << " asks for solver_mode: GPU, but no CUDA device is "
                   << "available; training on the CPU";
    }
  }
  DEMI_CHECK(gpus.size() <= 1, "--gpu names ", gpus.size(),
             " devices; training on several devices is not available yet, give one");
  demi::Context context;
  if (gpus.empty()) {
    LOG(INFO) << "Training on the CPU";
  } else {
    context.device = demi::Device::kGPU;
    context.device_id = gpus[0];
    LOG(INFO) << "Training on GPU " << gpus[0];
  }
  return context;
}

int Train() {
  DEMI_CHECK(!FLAGS_solver.empty(), "--solver is required: the solver prototxt to train with");
  DEMI_CHECK(FLAGS_snapshot.empty() || FLAGS_weights.empty(),
             "give --snapshot to resume training or --weights to fine-tune, not both");
  const demi::SolverAction sigint_effect = demi::ParseSolverAction(FLAGS_sigint_effect);
  const demi::SolverAction sighup_effect = demi::ParseSolverAction(FLAGS_sighup_effect);
  demi::SolverParameter param;
  demi::ReadSolverParamsFromTextFile(FLAGS_solver, &param);
  // --level and --stage set the state of every net the solver builds (Caffe's
  // train sets the train net's only), so that --stage=dummy runs a model zoo
  // solver, test nets included, without a dataset.
  const std::vector<std::string> stages = demi::SplitList(FLAGS_stage);
  auto apply_flags = [&](demi::NetState* state) {
    state->set_level(FLAGS_level);
    for (const std::string& stage : stages) state->add_stage(stage);
  };
  apply_flags(param.mutable_train_state());
  const int num_test_nets = std::max(param.test_iter_size(), param.test_state_size());
  while (param.test_state_size() < num_test_nets) param.add_test_state()->set_phase(demi::TEST);
  for (demi::NetState& state : *param.mutable_test_state()) apply_flags(&state);
  const demi::Context context = ChooseContext(param);
  std::unique_ptr<demi::Solver> solver = demi::SolverRegistry::Create(param, context);
  demi::SignalHandler signals(sigint_effect, sighup_effect);
  solver->SetActionFunction(signals.GetActionFunction());
  if (!FLAGS_weights.empty()) solver->CopyWeights(FLAGS_weights);
  LOG(INFO) << "Starting Optimization";
  solver->Solve(FLAGS_snapshot);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return demi::RunTool(argc, argv,
                       "Train a net.\n"
                       "Usage: train --solver=solver.prototxt [--snapshot=x.solverstate | "
                       "--weights=a.caffemodel[,b.caffemodel]] [--gpu=0] [--level=N] "
                       "[--stage=a,b]",
                       Train);
}
