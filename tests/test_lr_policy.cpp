// Every learning rate policy at several iterations against its formula,
// evaluated by hand (the literals below), and the errors for bad policies.
#include <gtest/gtest.h>

#include <string>

#include "demi/solver_param.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

SolverParameter Policy(const std::string& text) {
  return ParseText<SolverParameter>("base_lr: 0.01 " + text);
}

// gamma and power are floats in the schema (0.99 is stored as 0.99000001),
// which moves 0.99^250 by 2.4e-6 relative; the tolerance allows for that.
void ExpectRate(const SolverParameter& param, int iter, double expected) {
  EXPECT_NEAR(GetLearningRate(param, iter), expected, 1e-5 * expected + 1e-12)
      << param.lr_policy() << " at iteration " << iter;
}

TEST(LrPolicyTest, Fixed) {
  const SolverParameter param = Policy(R"(lr_policy: "fixed" gamma: 0.5)");
  for (int iter : {0, 1, 1000, 123456}) ExpectRate(param, iter, 0.01);
}

TEST(LrPolicyTest, Step) {
  const SolverParameter param = Policy(R"(lr_policy: "step" gamma: 0.1 stepsize: 100)");
  ExpectRate(param, 0, 0.01);
  ExpectRate(param, 99, 0.01);
  ExpectRate(param, 100, 0.001);
  ExpectRate(param, 199, 0.001);
  ExpectRate(param, 250, 0.0001);
  EXPECT_EQ(CurrentStep(param, 0), 0);
  EXPECT_EQ(CurrentStep(param, 250), 2);
}

TEST(LrPolicyTest, Exp) {
  const SolverParameter param = Policy(R"(lr_policy: "exp" gamma: 0.99)");
  ExpectRate(param, 0, 0.01);
  ExpectRate(param, 1, 0.0099);
  ExpectRate(param, 50, 0.006050060671375364);    // 0.01 * 0.99^50
  ExpectRate(param, 250, 0.0008105851616218128);  // 0.01 * 0.99^250
}

TEST(LrPolicyTest, Inv) {
  const SolverParameter param = Policy(R"(lr_policy: "inv" gamma: 0.0001 power: 0.75)");
  ExpectRate(param, 0, 0.01);
  ExpectRate(param, 1, 0.009999250065618985);    // 0.01 * 1.0001^-0.75
  ExpectRate(param, 100, 0.009925650290240803);  // 0.01 * 1.01^-0.75
  ExpectRate(param, 250, 0.009816509720250109);  // 0.01 * 1.025^-0.75
}

TEST(LrPolicyTest, Multistep) {
  const SolverParameter param =
      Policy(R"(lr_policy: "multistep" gamma: 0.5 stepvalue: 10 stepvalue: 50 stepvalue: 200)");
  ExpectRate(param, 0, 0.01);
  ExpectRate(param, 9, 0.01);
  ExpectRate(param, 10, 0.005);
  ExpectRate(param, 49, 0.005);
  ExpectRate(param, 50, 0.0025);
  ExpectRate(param, 199, 0.0025);
  ExpectRate(param, 200, 0.00125);
  ExpectRate(param, 100000, 0.00125);
  EXPECT_EQ(CurrentStep(param, 60), 2);
}

TEST(LrPolicyTest, Poly) {
  const SolverParameter param = Policy(R"(lr_policy: "poly" power: 2 max_iter: 200)");
  ExpectRate(param, 0, 0.01);
  ExpectRate(param, 50, 0.005625);  // 0.01 * 0.75^2
  ExpectRate(param, 100, 0.0025);   // 0.01 * 0.5^2
  ExpectRate(param, 199, 2.5e-7);   // 0.01 * 0.005^2
  EXPECT_EQ(GetLearningRate(param, 200), 0.0f);
  EXPECT_EQ(GetLearningRate(param, 300), 0.0f);  // past max_iter: stays 0, not NaN
}

// NVCaffe's warm-up and floor (its min_lr, rampup_interval, rampup_lr).
TEST(LrPolicyTest, RampupRisesQuadraticallyThenThePolicyRuns) {
  const SolverParameter param =
      Policy(R"(lr_policy: "step" gamma: 0.1 stepsize: 100 rampup_interval: 10 rampup_lr: 0.002)");
  ExpectRate(param, 0, 0.002);
  ExpectRate(param, 5, 0.004);    // 0.002 + 0.008 * 0.5^2
  ExpectRate(param, 9, 0.00848);  // 0.002 + 0.008 * 0.9^2
  ExpectRate(param, 10, 0.01);
  ExpectRate(param, 150, 0.001);
  // Without rampup_lr the warm-up starts from 0.
  EXPECT_EQ(GetLearningRate(Policy(R"(lr_policy: "fixed" rampup_interval: 4)"), 0), 0.0f);
}

TEST(LrPolicyTest, MinLrFloorsEveryPolicyAndPolyEndsThere) {
  ExpectRate(Policy(R"(lr_policy: "exp" gamma: 0.5 min_lr: 0.001)"), 10, 0.001);
  ExpectRate(Policy(R"(lr_policy: "exp" gamma: 0.5 min_lr: 0.001)"), 1, 0.005);
  const SolverParameter poly = Policy(R"(lr_policy: "poly" power: 2 max_iter: 200 min_lr: 0.002)");
  ExpectRate(poly, 0, 0.01);
  ExpectRate(poly, 100, 0.004);  // 0.008 * 0.5^2 + 0.002
  ExpectRate(poly, 300, 0.002);
  EXPECT_THROW(GetLearningRate(Policy(R"(lr_policy: "fixed" min_lr: -1)"), 0), Error);
}

TEST(LrPolicyTest, Sigmoid) {
  const SolverParameter param = Policy(R"(lr_policy: "sigmoid" gamma: -0.05 stepsize: 100)");
  ExpectRate(param, 0, 0.009933071490757152);     // 0.01 / (1 + e^-5)
  ExpectRate(param, 50, 0.009241418199787564);    // 0.01 / (1 + e^-2.5)
  ExpectRate(param, 100, 0.005);                  // the midpoint
  ExpectRate(param, 150, 0.0007585818002124355);  // 0.01 / (1 + e^2.5)
  ExpectRate(param, 400, 3.059022269256247e-09);  // 0.01 / (1 + e^15)
}

TEST(LrPolicyTest, UnknownPolicyListsKnownOnes) {
  ExpectErrorContaining(
      [] { GetLearningRate(Policy(R"(lr_policy: "cosine")"), 0); },
      {"\"cosine\"", "fixed", "step", "exp", "inv", "multistep", "poly", "sigmoid"});
  ExpectErrorContaining([] { GetLearningRate(Policy(""), 0); }, {"no lr_policy", "fixed"});
}

TEST(LrPolicyTest, BadPolicyParametersFail) {
  ExpectErrorContaining([] { GetLearningRate(Policy(R"(lr_policy: "step" gamma: 0.1)"), 5); },
                        {"step", "stepsize > 0", "got 0"});
  ExpectErrorContaining(
      [] { GetLearningRate(Policy(R"(lr_policy: "multistep" stepvalue: 50 stepvalue: 20)"), 0); },
      {"increasing stepvalues", "stepvalue 1 (20) follows 50"});
  ExpectErrorContaining([] { GetLearningRate(Policy(R"(lr_policy: "poly" power: 1)"), 0); },
                        {"poly", "max_iter > 0"});
}

}  // namespace
}  // namespace demi
