// The test nets of a Solver: building them from the solver's fields
// (InitTestNets) and running them (TestAll, Test).
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "demi/output_means.hpp"
#include "demi/solver.hpp"
#include "demi/test_net_sources.hpp"

namespace demi {

namespace {

/// A seed for test net `index`, distinct from the train net's, so that a
/// test net's data layers do not replay the train net's random draws.
uint32_t TestNetSeed(uint32_t seed, int index) {
  std::seed_seq seq{seed, static_cast<uint32_t>(index) + 1u, 0x74657374u};
  uint32_t derived = 0;
  seq.generate(&derived, &derived + 1);
  return derived;
}

/// How many test nets the solver's fields give (CheckTestFields checked
/// that they agree): one per test_iter.
int CountTestNets(const SolverParameter& param) {
  const int num_instances = param.test_iter_size();
  // As in Caffe: built (pycaffe may run solver.test_nets itself), never run
  // by the solver.
  LOG_IF(INFO, num_instances > 0 && param.test_interval() == 0)
      << "test_interval is 0: the solver builds its " << num_instances
      << " test net(s) and never runs them";
  return num_instances;
}

}  // namespace

void Solver::InitTestNets() {
  const int num_instances = CountTestNets(param_);
  const std::vector<TestNetSource> sources = SolverTestNets(param_);
  for (int i = 0; i < num_instances; ++i) {
    const NetParameter& net_param = sources[i].param;
    LOG(INFO) << "Creating test net (#" << i << ") specified by " << sources[i].source;
    Context test_context = context_;
    test_context.seed = TestNetSeed(context_.seed, i);
    // Test nets never run while the train net does: they share its arena.
    test_nets_.push_back(
        std::make_unique<Net>(net_param, test_context, net_->arena(), sources[i].path));
    test_nets_.back()->ShareTrainedLayersWith(*net_);
  }
}

std::vector<std::vector<float>> Solver::TestAll() {
  // A snapshot taken during the tests, or after a stop cut them short, holds
  // the test nets' read positions and random streams from before them: a
  // resume runs these tests again, on the same batches.
  test_start_positions_ = TestReadPositions();
  test_start_engines_.clear();
  for (const auto& test_net : test_nets_) {
    for (const auto& layer : test_net->layers()) test_start_engines_.push_back(*layer->rng());
  }
  testing_ = true;
  std::vector<std::vector<float>> results;
  try {
    for (size_t i = 0; i < test_nets_.size() && !requested_early_exit_; ++i) {
      results.push_back(Test(static_cast<int>(i)));
    }
  } catch (...) {
    testing_ = false;
    throw;
  }
  testing_ = false;
  if (requested_early_exit_) {
    size_t engine = 0;
    for (size_t i = 0; i < test_nets_.size(); ++i) {
      test_nets_[i]->RestoreReadPositions(test_start_positions_, static_cast<int>(i) + 1, 0,
                                          "the start of the stopped tests");
      for (const auto& layer : test_nets_[i]->layers()) {
        *layer->rng() = test_start_engines_[engine++];
      }
    }
  }
  return results;
}

std::vector<float> Solver::Test(int test_net_id) {
  CHECK(test_net_id >= 0 && test_net_id < static_cast<int>(test_nets_.size()));
  LOG(INFO) << "Iteration " << iter_ << ", Testing net (#" << test_net_id << ")";
  Net& test_net = *test_nets_[test_net_id];
  const int test_iter = param_.test_iter(test_net_id);
  OutputMeans outputs;
  double loss = 0;
  for (int i = 0; i < test_iter; ++i) {
    for (SolverAction request = RequestedAction(); request != SolverAction::kNone;
         request = RequestedAction()) {
      if (ActionSnapshots(request)) Snapshot();
      if (ActionStops(request)) requested_early_exit_ = true;
    }
    if (requested_early_exit_) break;
    const float iter_loss = test_net.Forward();
    if (param_.test_compute_loss()) loss += iter_loss;
    outputs.Add(test_net);
  }
  if (requested_early_exit_) {
    LOG(INFO) << "Test interrupted.";
    return {};
  }
  if (param_.test_compute_loss()) LOG(INFO) << "Test loss: " << loss / test_iter;
  std::vector<float> means;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const int blob_id = outputs.blob_id(i);
    const float weight = test_net.blob_loss_weights()[blob_id];
    const float mean = static_cast<float>(outputs.mean(i));
    LOG(INFO) << "    Test net output #" << i << ": " << test_net.blob_names()[blob_id] << " = "
              << mean
              << (weight != 0 ? StrCat(" (* ", weight, " = ", weight * mean, " loss)")
                              : std::string());
    means.push_back(mean);
  }
  return means;
}

}  // namespace demi
