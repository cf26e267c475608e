// Fuzz target: binary .caffemodel and .solverstate files loaded into a small
// fixed net and its solver. The first byte picks the kind (even: weights,
// odd: solver state); the rest is the file.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "demi/net.hpp"
#include "demi/solver.hpp"
#include "demi/solver_registry.hpp"
#include "demi/util/io.hpp"
#include "fuzz_util.hpp"

namespace demi {
namespace {

// Param layers of each common shape rule: convolution, BatchNorm's
// statistics, an inner product, PReLU, and a shared weight.
const char* kSolver = R"(
  type: "Adam" base_lr: 0.01 lr_policy: "step" gamma: 0.5 stepsize: 3 max_iter: 10
  snapshot_after_train: false random_seed: 3
  net_param {
    name: "fuzz"
    layer { name: "data" type: "DummyData" top: "x" top: "y"
            dummy_data_param { shape { dim: 2 dim: 3 dim: 5 dim: 5 } shape { dim: 2 dim: 4 } } }
    layer { name: "conv" type: "Convolution" bottom: "x" top: "c"
            convolution_param { num_output: 4 kernel_size: 3 weight_filler { type: "xavier" } } }
    layer { name: "bn" type: "BatchNorm" bottom: "c" top: "c" }
    layer { name: "prelu" type: "PReLU" bottom: "c" top: "c" }
    layer { name: "ip" type: "InnerProduct" bottom: "c" top: "h" param { name: "shared" }
            inner_product_param { num_output: 4 weight_filler { type: "xavier" } } }
    layer { name: "ip2" type: "InnerProduct" bottom: "h" top: "p" param { name: "w2" }
            inner_product_param { num_output: 4 bias_term: false } }
    layer { name: "loss" type: "EuclideanLoss" bottom: "p" bottom: "y" top: "loss" }
  })";

struct Fixture {
  std::unique_ptr<Solver> solver;
  fuzz::MemoryFile file;   // the fuzzed file
  fuzz::MemoryFile model;  // a valid .caffemodel of the net, for learned_net
  std::string model_path;

  Fixture() {
    SolverParameter param;
    ParseProtoText(kSolver, "kSolver", &param);
    solver = SolverRegistry::Create(param);
    NetParameter weights;
    solver->net().ToProto(&weights);
    model_path = model.Write(weights.SerializeAsString());
  }
};

Fixture& TheFixture() {
  static Fixture* fixture = new Fixture();
  return *fixture;
}

}  // namespace
}  // namespace demi

extern "C" int LLVMFuzzerInitialize(int*, char*** argv) {
  demi::fuzz::SetUp(*argv);
  demi::TheFixture();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace demi;
  if (size == 0) return 0;
  Fixture& fixture = TheFixture();
  const bool solver_state = data[0] % 2 == 1;
  std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    if (!solver_state) {
      fixture.solver->net().CopyTrainedLayersFrom(fixture.file.Write(bytes));
      return 0;
    }
    // A state's learned_net is a path: point it at our model rather than at
    // whatever file the input names.
    SolverState state;
    if (state.ParseFromString(bytes) && state.has_learned_net()) {
      state.set_learned_net(fixture.model_path);
      bytes = state.SerializeAsString();
    }
    fixture.solver->Restore(fixture.file.Write(bytes));
  } catch (const Error&) {
  }
  return 0;
}
