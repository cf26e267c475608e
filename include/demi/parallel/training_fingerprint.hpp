#ifndef DEMI_PARALLEL_TRAINING_FINGERPRINT_HPP_
#define DEMI_PARALLEL_TRAINING_FINGERPRINT_HPP_

#include <string>

#include "demi/net.hpp"
#include "demi/parallel/fingerprint.hpp"
#include "demi/proto/demi.pb.h"

namespace demi {

/// @brief What the ranks of one training run must share before they build
/// their nets, in this order:
/// - "build": the compiler and the CPU_ONLY / cuDNN / NCCL configuration
///   (updates are computed by each rank, so all must run the same code);
/// - "replicas per rank": `replicas`, e.g. "2 on the CPU" or "2 GPUs";
/// - "solver.<field>" for every field of the (upgraded) solver, set or not,
///   but those that name files or only shape what rank 0 alone does or what
///   one host holds: net, net_param, train_net, train_net_param (the built
///   train net is compared instead, see NetFingerprint), test_net,
///   test_net_param, test_iter, test_state, test_compute_loss (rank 0
///   alone tests), train_state (again: the filtered net), snapshot_prefix,
///   snapshot_format, snapshot_diff (rank 0 alone writes), weights (rank
///   0's params are broadcast), average_loss and debug_info (display),
///   solver_mode, device_id, memory_optimization, cudnn_workspace_mb and
///   memory_budget (per host; a budget changes no result). Fields that
///   decide when collectives happen (max_iter,
///   display, test_interval, test_initialization, snapshot,
///   snapshot_after_train) are compared, as are those of the update.
Fingerprint RunFingerprint(const SolverParameter& param, const std::string& replicas);

/// @brief What the ranks of one training run must share once their train
/// nets are built (phase, level and stages filtered, splits inserted). Per
/// layer, in net order:
/// - "net layer #i": its name;
/// - "net layer 'n' type", "... bottoms", "... tops";
/// - "net layer 'n' param j shape" for each of its param blobs;
/// - "net layer 'n' <field>" for every other field it sets (its
///   convolution_param, loss_weight, param specs...), one line of text with
///   file paths (source, mean_file, root_folder, file_name) left out, since
///   hosts may hold the same data at different paths;
/// - for a data layer, "net layer 'n' shard layout": the records in its
///   source, its batch size and the shards it is cut into, which together
///   decide which records each replica reads.
Fingerprint NetFingerprint(const Net& train_net);

}  // namespace demi

#endif  // DEMI_PARALLEL_TRAINING_FINGERPRINT_HPP_
