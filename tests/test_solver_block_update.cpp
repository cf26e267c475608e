// The update on the param block against the per-param update it replaced:
// a reference written param by param here (the rules as Caffe states them,
// each param's data, diff and history a separate array) must give the same
// bits as the solver's one threaded pass, for every rule, L2 and L1, with
// clipping and iter_size, on one thread and on two.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "demi/util/math.hpp"
#include "demi/util/threads.hpp"
#include "solver_test_util.hpp"

namespace demi {
namespace {

// Shared weights (ip1, ip2), lr_mult and decay_mult of every kind, a frozen
// layer and one param big enough (64 x 1100) for two threads to split.
const char* kReferenceNet = R"(
  name: "reference"
  layer { name: "data" type: "DummyData" top: "x" top: "t"
          dummy_data_param { shape { dim: 8 dim: 64 } shape { dim: 8 dim: 5 }
                             data_filler { type: "gaussian" } } }
  layer { name: "ip1" type: "InnerProduct" bottom: "x" top: "h1"
          param { name: "shared" decay_mult: 2 } param { lr_mult: 2 decay_mult: 0 }
          inner_product_param { num_output: 64 weight_filler { type: "gaussian" std: 0.1 } } }
  layer { name: "ip2" type: "InnerProduct" bottom: "h1" top: "h2" param { name: "shared" }
          param { lr_mult: 0.5 } inner_product_param { num_output: 64 } }
  layer { name: "relu" type: "ReLU" bottom: "h2" top: "h2" }
  layer { name: "frozen" type: "InnerProduct" bottom: "h2" top: "h3"
          param { lr_mult: 0 decay_mult: 0 } param { lr_mult: 0 decay_mult: 0 }
          inner_product_param { num_output: 64 weight_filler { type: "xavier" } } }
  layer { name: "big" type: "InnerProduct" bottom: "h3" top: "h4"
          inner_product_param { num_output: 1100 weight_filler { type: "xavier" } } }
  layer { name: "out" type: "InnerProduct" bottom: "h4" top: "y"
          param { decay_mult: 3 } inner_product_param { num_output: 5
          weight_filler { type: "xavier" } } }
  layer { name: "loss" type: "EuclideanLoss" bottom: "y" bottom: "t" top: "loss" }
)";

/// A learnable param as the per-param code held it: its own arrays.
struct ParamCopy {
  std::vector<float> data, diff;
  std::vector<std::vector<float>> history;
};

std::vector<float> Values(const float* begin, int64_t count) {
  return std::vector<float>(begin, begin + count);
}

/// The per-param update, one param after the other, as ApplyUpdate ran it
/// before the param block: average, clip to the global norm, then per param
/// regularize and compute the step, then data -= step for every param.
void ReferenceUpdate(const SolverParameter& sp, const std::string& type, int iter, const Net& net,
                     std::vector<ParamCopy>* params) {
  const float rate = GetLearningRate(sp, iter);
  for (ParamCopy& p : *params) {
    if (sp.iter_size() > 1) {
      for (float& g : p.diff) g = (1.0f / sp.iter_size()) * g;
    }
  }
  if (sp.clip_gradients() >= 0) {
    double sumsq = 0;
    for (const ParamCopy& p : *params) {
      sumsq += p.diff.empty() ? 0.0 : Sumsq(static_cast<int64_t>(p.diff.size()), p.diff.data());
    }
    const double norm = std::sqrt(sumsq);
    if (norm > sp.clip_gradients()) {
      const float scale = static_cast<float>(sp.clip_gradients() / norm);
      for (ParamCopy& p : *params) {
        for (float& g : p.diff) g = scale * g;
      }
    }
  }
  const double t = iter + 1.0;
  const float correction = static_cast<float>(std::sqrt(1.0 - std::pow(sp.momentum2(), t)) /
                                              (1.0 - std::pow(sp.momentum(), t)));
  for (size_t id = 0; id < params->size(); ++id) {
    ParamCopy& p = (*params)[id];
    const float decay = sp.weight_decay() * net.params_weight_decay()[id];
    const float lr = rate * net.params_lr()[id];
    const float mu = sp.momentum(), mu2 = sp.momentum2(), delta = sp.delta();
    const float rms = sp.rms_decay();
    for (size_t i = 0; i < p.diff.size(); ++i) {
      float& g = p.diff[i];
      const float w = p.data[i];
      if (decay != 0) {
        g += sp.regularization_type() == "L2" ? decay * w
                                              : decay * static_cast<float>((w > 0) - (w < 0));
      }
      float* h0 = p.history[0].data() + i;
      if (type == "SGD") {
        *h0 = mu == 0 ? lr * g : lr * g + mu * *h0;
        g = *h0;
      } else if (type == "Nesterov") {
        const float previous = *h0;
        *h0 = mu * *h0 + lr * g;
        g = (1 + mu) * *h0 - mu * previous;
      } else if (type == "AdaGrad") {
        *h0 += g * g;
        g = lr * g / (std::sqrt(*h0) + delta);
      } else if (type == "RMSProp") {
        *h0 = rms * *h0 + (1 - rms) * g * g;
        g = lr * g / (std::sqrt(*h0) + delta);
      } else if (type == "AdaDelta") {
        float* h1 = p.history[1].data() + i;
        *h0 = mu * *h0 + (1 - mu) * g * g;
        const float step = g * std::sqrt((*h1 + delta) / (*h0 + delta));
        *h1 = mu * *h1 + (1 - mu) * step * step;
        g = lr * step;
      } else if (type == "Adam") {
        float* h1 = p.history[1].data() + i;
        *h0 = mu * *h0 + (1 - mu) * g;
        *h1 = mu2 * *h1 + (1 - mu2) * g * g;
        g = lr * correction * *h0 / (std::sqrt(*h1) + delta);
      } else {
        FAIL() << "no reference for " << type;
      }
    }
  }
  for (ParamCopy& p : *params) {
    for (size_t i = 0; i < p.data.size(); ++i) p.data[i] += -1.0f * p.diff[i];
  }
}

/// Copies the solver's params, gradients and history when the gradients are
/// ready and applies the reference update to the copy.
class Reference : public Solver::Callback {
 public:
  explicit Reference(Solver* solver) : solver_(solver) { solver->AddCallback(this); }
  void OnGradientsReady() override {
    const Net& net = solver_->net();
    const auto& learnable = net.learnable_params();
    const size_t n = learnable.size();
    expected_.assign(n, ParamCopy());
    for (size_t p = 0; p < n; ++p) {
      expected_[p].data = Values(learnable[p]->cpu_data(), learnable[p]->count());
      expected_[p].diff = Values(learnable[p]->cpu_diff(), learnable[p]->count());
      for (size_t s = 0; s * n < solver_->history().size(); ++s) {
        const Blob& h = *solver_->history()[s * n + p];
        expected_[p].history.push_back(Values(h.cpu_data(), h.count()));
      }
    }
    ReferenceUpdate(solver_->param(), solver_->type(), solver_->iter(), net, &expected_);
  }
  const std::vector<ParamCopy>& expected() const { return expected_; }

 private:
  Solver* solver_;
  std::vector<ParamCopy> expected_;
};

bool SameBits(const std::vector<float>& a, const float* b) {
  return std::memcmp(a.data(), b, a.size() * sizeof(float)) == 0;
}

void ExpectMatchesReference(const std::string& type, const std::string& extra, int threads) {
  SCOPED_TRACE(StrCat(type, " ", extra, " on ", threads, " thread(s)"));
  const int saved_threads = Threads();
  SetThreads(threads);
  const std::string hyper = type == "AdaGrad" || type == "RMSProp" ? "" : "momentum: 0.9";
  auto solver = MakeSolver(StrCat("net_param {", kReferenceNet, "} type: \"", type, "\" ", hyper,
                                  R"( base_lr: 0.05 lr_policy: "step" gamma: 0.5 stepsize: 2
                                      weight_decay: 0.01 random_seed: 5 max_iter: 10 )",
                                  extra));
  Reference reference(solver.get());
  const auto& learnable = solver->net().learnable_params();
  const size_t n = learnable.size();
  for (int iter = 0; iter < 4; ++iter) {
    solver->Step(1);
    for (size_t p = 0; p < n; ++p) {
      const ParamCopy& expected = reference.expected()[p];
      EXPECT_TRUE(SameBits(expected.data, learnable[p]->cpu_data()))
          << "param " << p << " after iteration " << iter;
      EXPECT_TRUE(SameBits(expected.diff, learnable[p]->cpu_diff()))
          << "step of param " << p << " at iteration " << iter;
      for (size_t s = 0; s < expected.history.size(); ++s) {
        EXPECT_TRUE(SameBits(expected.history[s], solver->history()[s * n + p]->cpu_data()))
            << "history " << s << " of param " << p << " after iteration " << iter;
      }
    }
  }
  // The update moved something: the comparison is not between two no-ops.
  EXPECT_GT(solver->net().layer_by_name("big")->blobs()[0]->asum_diff(), 0.0);
  SetThreads(saved_threads);
}

class BlockUpdateTest : public ::testing::TestWithParam<const char*> {};

TEST_P(BlockUpdateTest, L2MatchesThePerParamUpdate) {
  for (int threads : {1, 2}) ExpectMatchesReference(GetParam(), "", threads);
}

TEST_P(BlockUpdateTest, L1ClippingAndIterSizeMatchThePerParamUpdate) {
  for (int threads : {1, 2}) {
    ExpectMatchesReference(
        GetParam(), R"(regularization_type: "L1" clip_gradients: 0.5 iter_size: 2)", threads);
  }
}

INSTANTIATE_TEST_SUITE_P(EveryRule, BlockUpdateTest,
                         ::testing::Values("SGD", "Nesterov", "AdaGrad", "RMSProp", "AdaDelta",
                                           "Adam"));

}  // namespace
}  // namespace demi
