// CUDA twins of RNN and LSTM against their CPU code: sequence restarts, a
// static input, exposed states, odd sizes, and the state carried from one
// batch to the next.
#include <memory>
#include <string>
#include <vector>

#include "gpu_test_util.hpp"

namespace demi {
namespace {

/// The layer's prototxt with small uniform fillers, as the CPU tests use.
std::string RecurrentText(const std::string& type, int num_output, bool expose_hidden) {
  return StrCat("type: '", type, "' recurrent_param { num_output: ", num_output,
                expose_hidden ? " expose_hidden: true" : "",
                " weight_filler { type: 'uniform' min: -0.5 max: 0.5 }"
                " bias_filler { type: 'uniform' min: -0.5 max: 0.5 } }");
}

/// cont (T x N): 0 where stream n starts a sequence, at t = n % T, and for
/// every stream at t = 0 unless `continue_at_start`; 1 elsewhere.
std::vector<float> Restarts(int64_t steps, int64_t streams, bool continue_at_start) {
  std::vector<float> cont(static_cast<size_t>(steps * streams), 1.0f);
  for (int64_t n = 0; n < streams; ++n) {
    cont[static_cast<size_t>(n % steps * streams + n)] = 0.0f;
    if (!continue_at_start) cont[static_cast<size_t>(n)] = 0.0f;
  }
  return cont;
}

/// x (T x N x ...), cont, then optionally x_static (N x S) and, with
/// expose_hidden, the initial states (1 x N x H each); Gaussian but cont.
/// Without exposed states every stream restarts at t = 0, so the gradient
/// check's repeated Forwards do not see the carried state.
GpuCase RecurrentCase(const std::string& type, std::vector<int64_t> x_shape, int num_output,
                      int64_t static_dim, bool expose_hidden) {
  const int64_t steps = x_shape[0], streams = x_shape[1];
  GpuCase c;
  c.layer = RecurrentText(type, num_output, expose_hidden);
  c.bottoms = {x_shape, {steps, streams}};
  if (static_dim > 0) c.bottoms.push_back({streams, static_dim});
  const int states = !expose_hidden ? 0 : type == "LSTM" ? 2 : 1;
  for (int s = 0; s < states; ++s) c.bottoms.push_back({1, streams, num_output});
  const std::vector<float> cont = Restarts(steps, streams, expose_hidden);
  c.fill = [cont](int index, Blob* bottom) {
    if (index == 1) {
      FillValues(bottom, cont);
    } else {
      FillGaussian(bottom, 1000 + static_cast<uint32_t>(index));
    }
  };
  c.propagate_down.assign(c.bottoms.size(), true);
  c.propagate_down[1] = false;  // cont takes no gradient
  c.threshold = 2e-2f;
  return c;
}

void ExpectEveryCaseMatches(const std::string& type) {
  ExpectGpuMatchesCpu(RecurrentCase(type, {5, 2, 3}, 4, 0, false));
  ExpectGpuMatchesCpu(RecurrentCase(type, {4, 3, 2}, 3, 5, false));    // static input
  ExpectGpuMatchesCpu(RecurrentCase(type, {4, 2, 3}, 3, 2, true));     // exposed states
  ExpectGpuMatchesCpu(RecurrentCase(type, {2, 1, 13}, 1, 0, false));   // one stream, one unit
  ExpectGpuMatchesCpu(RecurrentCase(type, {3, 2, 2, 2}, 3, 0, true));  // input of two axes
  GpuCase wide = RecurrentCase(type, {6, 37, 11}, 35, 7, true);        // past a warp
  wide.check_gradient = false;  // the comparison with the CPU covers it
  ExpectGpuMatchesCpu(wide);
}

TEST(GpuRNNLayerTest, MatchesCpu) { ExpectEveryCaseMatches("RNN"); }

TEST(GpuLSTMLayerTest, MatchesCpu) { ExpectEveryCaseMatches("LSTM"); }

/// Two Forwards without exposed states: the second starts where the first
/// ended (cont 1 at t = 0), on the GPU as on the CPU.
void ExpectCarriedStateMatches(const std::string& type) {
  if (!HaveGpu()) GTEST_SKIP() << "no CUDA device";
  const std::string text = RecurrentText(type, 6, false);
  auto cpu_layer = MakeLayerOn(text, Device::kCPU);
  auto gpu_layer = MakeLayerOn(text, Device::kGPU);
  Blob x({3, 4, 5}), cont({3, 4}), cpu_out, gpu_out;
  std::vector<Blob*> bottom{&x, &cont};
  std::vector<Blob*> cpu_top{&cpu_out}, gpu_top{&gpu_out};
  cpu_layer->SetUp(bottom, cpu_top);
  gpu_layer->SetUp(bottom, gpu_top);
  for (size_t p = 0; p < cpu_layer->blobs().size(); ++p) {
    gpu_layer->blobs()[p]->CopyFrom(*cpu_layer->blobs()[p]);
  }
  for (int batch = 0; batch < 2; ++batch) {
    FillGaussian(&x, 50 + static_cast<uint32_t>(batch));
    FillValues(&cont, Restarts(3, 4, batch > 0));
    cpu_layer->Forward(bottom, cpu_top);
    gpu_layer->Forward(bottom, gpu_top);
    ExpectClose(gpu_out, cpu_out, 1e-4f, StrCat(type, " batch ", batch));
  }
}

TEST(GpuRNNLayerTest, CarriesTheStateAcrossBatches) { ExpectCarriedStateMatches("RNN"); }

TEST(GpuLSTMLayerTest, CarriesTheStateAcrossBatches) { ExpectCarriedStateMatches("LSTM"); }

}  // namespace
}  // namespace demi
