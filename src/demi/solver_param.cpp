#include "demi/solver_param.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "demi/common.hpp"
#include "demi/engine_decision.hpp"
#include "demi/util/io.hpp"

namespace demi {

namespace {

const char* const kKnownPolicies = "fixed, step, exp, inv, multistep, poly, sigmoid";

}  // namespace

// ---- learning rate policies ----

int CurrentStep(const SolverParameter& param, int iter) {
  const std::string& policy = param.lr_policy();
  if (policy == "step") {
    DEMI_CHECK(param.stepsize() > 0, "lr_policy \"step\" needs stepsize > 0, got ",
               param.stepsize());
    return iter / param.stepsize();
  }
  if (policy == "multistep") {
    int step = 0;
    for (int i = 0; i < param.stepvalue_size(); ++i) {
      DEMI_CHECK(i == 0 || param.stepvalue(i) > param.stepvalue(i - 1),
                 "lr_policy \"multistep\" needs increasing stepvalues, but stepvalue ", i, " (",
                 param.stepvalue(i), ") follows ", param.stepvalue(i - 1));
      if (iter >= param.stepvalue(i)) step = i + 1;
    }
    return step;
  }
  return 0;
}

float GetLearningRate(const SolverParameter& param, int iter) {
  const std::string& policy = param.lr_policy();
  const double base = param.base_lr();
  const double gamma = param.gamma();
  const double power = param.power();
  const double min_lr = param.min_lr();
  DEMI_CHECK(min_lr >= 0, "min_lr must be >= 0, got ", min_lr);
  double rate = 0;
  if (policy == "fixed") {
    rate = base;
  } else if (policy == "step" || policy == "multistep") {
    rate = base * std::pow(gamma, CurrentStep(param, iter));
  } else if (policy == "exp") {
    rate = base * std::pow(gamma, iter);
  } else if (policy == "inv") {
    rate = base * std::pow(1.0 + gamma * iter, -power);
  } else if (policy == "poly") {
    DEMI_CHECK(param.max_iter() > 0, "lr_policy \"poly\" needs max_iter > 0, got ",
               param.max_iter());
    // Past max_iter (a resumed run trained further) the rate stays 0.
    const double remaining = std::max(0.0, 1.0 - static_cast<double>(iter) / param.max_iter());
    rate = (base - min_lr) * std::pow(remaining, power) + min_lr;
  } else if (policy == "sigmoid") {
    rate = base / (1.0 + std::exp(-gamma * (static_cast<double>(iter) - param.stepsize())));
  } else if (policy.empty()) {
    ThrowError(StrCat("the solver has no lr_policy; known policies: ", kKnownPolicies));
  } else {
    ThrowError(StrCat("unknown lr_policy \"", policy, "\"; known policies: ", kKnownPolicies));
  }
  if (iter < param.rampup_interval()) {
    // NVCaffe's warm-up: quadratic from rampup_lr up to base_lr.
    const double alpha = static_cast<double>(iter) / param.rampup_interval();
    rate = param.rampup_lr() + (base - param.rampup_lr()) * alpha * alpha;
  }
  return static_cast<float>(std::max(rate, min_lr));
}

// ---- legacy solver parameters ----

std::string SolverTypeName(SolverParameter::SolverType type) {
  switch (type) {
    case SolverParameter::SGD:
      return "SGD";
    case SolverParameter::NESTEROV:
      return "Nesterov";
    case SolverParameter::ADAGRAD:
      return "AdaGrad";
    case SolverParameter::RMSPROP:
      return "RMSProp";
    case SolverParameter::ADADELTA:
      return "AdaDelta";
    case SolverParameter::ADAM:
      return "Adam";
  }
  ThrowError(StrCat("unknown solver_type value ", static_cast<int>(type)));
}

bool UpgradeSolverAsNeeded(const std::string& source, SolverParameter* param) {
  if (!param->has_solver_type()) return false;
  const std::string type = SolverTypeName(param->solver_type());
  DEMI_CHECK(!param->has_type() || param->type() == type, source, ": legacy solver_type ",
             SolverParameter::SolverType_Name(param->solver_type()), " contradicts type \"",
             param->type(), "\"; give only type");
  LOG(INFO) << source << ": legacy solver_type "
            << SolverParameter::SolverType_Name(param->solver_type()) << " read as type \"" << type
            << "\"";
  param->set_type(type);
  param->clear_solver_type();
  return true;
}

namespace {

/// Checks that the solver's test fields agree: a test_iter per test net
/// (with a generic net, each test_iter beyond the specific test nets is one
/// more instance of it), none or one test_state per test net, positive
/// test_iter values, a test_interval not negative when there are test nets.
void CheckTestFields(const SolverParameter& param, const std::string& source) {
  DEMI_CHECK(!(param.has_net_param() && param.has_net()), source,
             ": the solver gives both net and net_param");
  const bool generic = param.has_net_param() || param.has_net();
  const int num_specific = param.test_net_param_size() + param.test_net_size();
  const int num_instances = param.test_iter_size();
  DEMI_CHECK(generic ? num_instances >= num_specific : num_instances == num_specific, source,
             ": the solver has ", num_specific, " test nets but ", num_instances,
             " test_iter values; give one per test net");
  DEMI_CHECK(param.test_state_size() == 0 || param.test_state_size() == num_instances, source,
             ": the solver has ", num_instances, " test nets but ", param.test_state_size(),
             " test_state values; give none or one per test net");
  DEMI_CHECK(num_instances == 0 || param.test_interval() >= 0, source,
             ": the solver has test nets but test_interval is ", param.test_interval(),
             "; give a positive test_interval (or 0: never test)");
  for (int i = 0; i < num_instances; ++i) {
    DEMI_CHECK(param.test_iter(i) > 0, source, ": test_iter ", i, " must be positive, got ",
               param.test_iter(i));
  }
}

}  // namespace

void CheckSolverValues(const SolverParameter& param, const std::string& source) {
  DEMI_CHECK(param.max_iter() >= 0, source, ": max_iter is ", param.max_iter(),
             "; give the number of iterations to train, 0 or more");
  DEMI_CHECK(std::isfinite(param.base_lr()) && param.base_lr() >= 0, source, ": base_lr is ",
             param.base_lr(), "; give a learning rate of 0 or more (e.g. base_lr: 0.01)");
  DEMI_CHECK(param.iter_size() >= 1, source, ": iter_size must be at least 1, got ",
             param.iter_size());
  DEMI_CHECK(param.average_loss() >= 1, source, ": average_loss must be at least 1, got ",
             param.average_loss());
  DEMI_CHECK(param.regularization_type() == "L2" || param.regularization_type() == "L1", source,
             ": unknown regularization_type \"", param.regularization_type(), "\"; use L1 or L2");
  DEMI_CHECK(param.snapshot() >= 0, source, ": snapshot must not be negative, got ",
             param.snapshot());
  CheckTestFields(param, source);
  // A bad lr policy now, not at the first update (none given: the solver
  // refuses it, as one who reads the file may still give it).
  try {
    if (param.has_lr_policy()) GetLearningRate(param, 0);
  } catch (const Error& error) {
    ThrowError(StrCat(source, ": ", error.what()));
  }
}

void ReadSolverParamsFromTextFile(const std::string& path, SolverParameter* param) {
  ReadProtoFromTextFile(path, param);
  UpgradeSolverAsNeeded(path, param);
  CheckSolverValues(*param, path);
  namespace fs = std::filesystem;
  if (!param->has_snapshot_prefix()) {
    param->set_snapshot_prefix(fs::path(path).replace_extension().string());
    LOG(INFO) << "snapshot_prefix was not given; using " << param->snapshot_prefix();
  } else if (fs::is_directory(param->snapshot_prefix())) {
    param->set_snapshot_prefix(
        (fs::path(param->snapshot_prefix()) / fs::path(path).stem()).string());
    LOG(INFO) << "snapshot_prefix names a directory; using " << param->snapshot_prefix();
  }
}

void ApplySolverOverrides(const SolverParameter& solver, NetParameter* net) {
  if (solver.has_memory_optimization()) net->set_memory_optimization(solver.memory_optimization());
  if (solver.has_cudnn_workspace_mb()) net->set_cudnn_workspace_mb(solver.cudnn_workspace_mb());
  if (solver.has_engine()) net->set_engine(solver.engine());
  if (solver.has_precision()) ApplyPrecision(solver.precision(), net);
  if (solver.has_schedule()) net->set_schedule(solver.schedule());
  for (const std::string& blob : solver.keep_blob()) net->add_keep_blob(blob);
}

}  // namespace demi
