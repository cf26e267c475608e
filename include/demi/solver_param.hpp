#ifndef DEMI_SOLVER_PARAM_HPP_
#define DEMI_SOLVER_PARAM_HPP_

#include <string>

#include "demi/proto/demi.pb.h"

namespace demi {

// What a SolverParameter means outside the loop: learning rate policies and
// the legacy fields of solver prototxts.

/// @brief The learning rate at iteration `iter` under `param.lr_policy()`,
/// with base_lr = b, gamma = g, power = p, as in Caffe:
///   fixed:     b
///   step:      b * g^floor(iter / stepsize)
///   exp:       b * g^iter
///   inv:       b * (1 + g * iter)^(-p)
///   multistep: b * g^k, k = number of stepvalues <= iter
///   poly:      (b - min_lr) * (1 - iter / max_iter)^p + min_lr
///   sigmoid:   b / (1 + exp(-g * (iter - stepsize)))
/// NVCaffe's warm-up and floor: below rampup_interval the rate is
/// rampup_lr + (b - rampup_lr) (iter / rampup_interval)^2 whatever the
/// policy, and no rate is below min_lr (default 0).
/// A pure function of its arguments. An unknown policy or a missing or bad
/// policy parameter throws an Error.
float GetLearningRate(const SolverParameter& param, int iter);

/// The step count the policies keep (Caffe's current_step): floor(iter /
/// stepsize) for "step", the number of stepvalues <= iter for "multistep",
/// 0 for the others.
int CurrentStep(const SolverParameter& param, int iter);

/// The `type` string of a legacy solver_type enum value ("Nesterov" for
/// NESTEROV); the one place that mapping lives.
std::string SolverTypeName(SolverParameter::SolverType type);

/// Moves a legacy `solver_type` into `type` (logging it with `source`); a
/// solver_type that contradicts an explicit `type` throws an Error. Returns
/// true if anything changed.
bool UpgradeSolverAsNeeded(const std::string& source, SolverParameter* param);

/// Throws an Error naming `source` (the solver file, or what else gave
/// `param`) and the field when a value no run can mean: a negative max_iter
/// (which would report "Optimization Done." having trained nothing), a
/// base_lr that is negative or not finite (which would only show later as a
/// NaN loss).
void CheckSolverValues(const SolverParameter& param, const std::string& source);

/// Reads a solver prototxt, upgrades it and checks it (CheckSolverValues). As Caffe's tool does, an
/// absent snapshot_prefix becomes the file's path without its extension, and a snapshot_prefix
/// naming a directory gets the file's stem appended.
void ReadSolverParamsFromTextFile(const std::string& path, SolverParameter* param);

/// The net-wide settings a solver gives every net it builds: memory
/// optimization, cuDNN workspace and engine when set, and more kept blobs.
void ApplySolverOverrides(const SolverParameter& solver, NetParameter* net);

}  // namespace demi

#endif  // DEMI_SOLVER_PARAM_HPP_
