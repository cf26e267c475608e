#include "demi/layer.hpp"

#include <mutex>
#include <set>

#include "demi/util/gpu_math.hpp"
#include "demi/util/math.hpp"
#ifndef CPU_ONLY
#include "demi/util/math_gpu.hpp"
#endif

namespace demi {

Layer::Layer(const LayerParameter& param) : layer_param_(param), phase_(param.phase()) {
  // Blobs stored in the parameter (a net built from a .caffemodel-carrying
  // proto) become the layer's initial parameters.
  for (const BlobProto& proto : layer_param_.blobs()) {
    auto blob = std::make_shared<Blob>();
    blob->FromProto(proto);
    blobs_.push_back(blob);
  }
}

void Layer::set_engine(const EngineDecision& decision) {
  engine_ = decision;
  engine_decided_ = true;
}

namespace {

/// `param` with a name for every bottom and top it is given, where a layer
/// built alone leaves them unnamed: the decision sees how the layer is wired
/// (a top that is its bottom in place gets the bottom's name).
LayerParameter WiredParam(const LayerParameter& param, const std::vector<Blob*>& bottom,
                          const std::vector<Blob*>& top) {
  LayerParameter wired(param);
  for (size_t i = wired.bottom_size(); i < bottom.size(); ++i)
    wired.add_bottom(StrCat("bottom", i));
  for (size_t i = wired.top_size(); i < top.size(); ++i) {
    const bool in_place = i < bottom.size() && top[i] == bottom[i];
    wired.add_top(in_place ? wired.bottom(static_cast<int>(i)) : StrCat("top", i));
  }
  return wired;
}

}  // namespace

void Layer::SetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  if (!engine_decided_) {
    set_engine(DecideEngine(WiredParam(layer_param_, bottom, top), {context_.engine, LayerTypes{}},
                            context_.device));
  }
  CheckBlobCounts(bottom, top);
  LayerSetUp(bottom, top);
  Reshape(bottom, top);
  SetLossWeights(top);
}

void Layer::CheckBlobCounts(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) const {
  const int nb = static_cast<int>(bottom.size());
  const int nt = static_cast<int>(top.size());
  auto fail_bottom = [&](const char* what, int expected) {
    ThrowError(StrCat(type(), " layer '", layer_param_.name(), "' takes ", what, " ", expected,
                      " bottom blob(s), got ", nb));
  };
  auto fail_top = [&](const char* what, int expected) {
    ThrowError(StrCat(type(), " layer '", layer_param_.name(), "' takes ", what, " ", expected,
                      " top blob(s), got ", nt));
  };
  if (ExactNumBottomBlobs() >= 0 && nb != ExactNumBottomBlobs())
    fail_bottom("exactly", ExactNumBottomBlobs());
  if (MinBottomBlobs() >= 0 && nb < MinBottomBlobs()) fail_bottom("at least", MinBottomBlobs());
  if (MaxBottomBlobs() >= 0 && nb > MaxBottomBlobs()) fail_bottom("at most", MaxBottomBlobs());
  if (ExactNumTopBlobs() >= 0 && nt != ExactNumTopBlobs()) fail_top("exactly", ExactNumTopBlobs());
  if (MinTopBlobs() >= 0 && nt < MinTopBlobs()) fail_top("at least", MinTopBlobs());
  if (MaxTopBlobs() >= 0 && nt > MaxTopBlobs()) fail_top("at most", MaxTopBlobs());
  DEMI_CHECK(!EqualNumBottomTopBlobs() || nb == nt, type(), " layer '", layer_param_.name(),
             "' needs as many tops as bottoms, got ", nb, " bottoms and ", nt, " tops");
}

void Layer::SetLossWeights(const std::vector<Blob*>& top) {
  const int num_weights = layer_param_.loss_weight_size();
  DEMI_CHECK(num_weights == 0 || num_weights == static_cast<int>(top.size()), "layer '",
             layer_param_.name(), "' has ", num_weights, " loss_weight values for ", top.size(),
             " tops");
  loss_.assign(top.size(), 0.0f);
  for (int i = 0; i < num_weights; ++i) {
    const float weight = layer_param_.loss_weight(i);
    loss_[i] = weight;
    if (weight == 0.0f) continue;
    Set(top[i]->count(), weight, top[i]->mutable_cpu_diff());
  }
}

float Layer::loss(int top_index) const {
  return static_cast<size_t>(top_index) < loss_.size() ? loss_[top_index] : 0.0f;
}

void Layer::set_loss(int top_index, float value) {
  if (loss_.size() <= static_cast<size_t>(top_index)) loss_.resize(top_index + 1, 0.0f);
  loss_[top_index] = value;
}

void Layer::set_absorbed_by(const std::string& absorber) {
  DEMI_CHECK(!absorber.empty(), "layer '", layer_param_.name(), "': absorbed by an unnamed layer");
  absorbed_by_ = absorber;
  buffers_.clear();  // the absorber keeps what it needs
}

void Layer::RunForward(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  if (context_.device == Device::kGPU) {
    GpuMathScope math(context_.gpu_math);
    Forward_gpu(bottom, top);
  } else {
    Forward_cpu(bottom, top);
  }
}

float Layer::Forward(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  if (absorbed()) return 0.0f;  // the absorber wrote the tops (it takes no loss layer)
  RunForward(bottom, top);
  CheckDeferredErrors();
  return static_cast<float>(HostLoss(top));
}

double Layer::HostLoss(const std::vector<Blob*>& top) const {
  double total = 0;
  for (size_t i = 0; i < top.size(); ++i) {
    if (loss(static_cast<int>(i)) == 0.0f) continue;
    total += Dot(top[i]->count(), top[i]->cpu_data(), top[i]->cpu_diff());
  }
  return total;
}

void Layer::ForwardAddingLoss(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top,
                              float* loss_sum, float divisor) {
  if (absorbed()) return;
  RunForward(bottom, top);
#ifndef CPU_ONLY
  if (context_.device == Device::kGPU) {
    for (size_t i = 0; i < top.size(); ++i) {
      if (loss(static_cast<int>(i)) == 0.0f) continue;
      GpuAddDot(top[i]->count(), top[i]->gpu_data(), top[i]->gpu_diff(), divisor, loss_sum);
    }
    return;
  }
#endif
  // Divided in double: a loss times a large loss scale may pass a float.
  *loss_sum += static_cast<float>(HostLoss(top) / divisor);  // + 0 for a layer without loss
}

void Layer::Replay(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  DEMI_CHECK(CanReplay(), "layer '", layer_param_.name(), "' (", type(),
             ") cannot run its forward again");
  if (absorbed()) return;  // the absorber's replay writes the tops
  RunForward(bottom, top);
}

void Layer::Backward(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                     const std::vector<Blob*>& bottom) {
  if (absorbed()) return;  // the absorber's Backward computes this layer's gradients
  if (context_.device == Device::kGPU) {
    GpuMathScope math(context_.gpu_math);
    Backward_gpu(top, propagate_down, bottom);
  } else {
    Backward_cpu(top, propagate_down, bottom);
  }
}

void Layer::LogCpuFallback() const {
  static std::mutex mutex;
  static std::set<std::string> logged;
  std::lock_guard<std::mutex> lock(mutex);
  if (logged.insert(type()).second) {
    LOG(INFO) << type() << " layers have no CUDA twin; running their CPU code";
  }
}

void Layer::Forward_gpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  LogCpuFallback();
  Forward_cpu(bottom, top);
}

void Layer::Backward_gpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                         const std::vector<Blob*>& bottom) {
  LogCpuFallback();
  Backward_cpu(top, propagate_down, bottom);
}

bool Layer::param_propagate_down(int param_id) const {
  return static_cast<size_t>(param_id) < param_propagate_down_.size() &&
         param_propagate_down_[param_id];
}

void Layer::set_param_propagate_down(int param_id, bool value) {
  if (param_propagate_down_.size() <= static_cast<size_t>(param_id)) {
    param_propagate_down_.resize(param_id + 1, true);
  }
  param_propagate_down_[param_id] = value;
}

void Layer::RegisterBuffer(const std::string& name, Blob* blob, BufferLifetime lifetime) {
  for (const LayerBuffer& buffer : buffers_) {
    if (buffer.blob == blob) return;  // LayerSetUp may run again after a reshape
  }
  buffers_.push_back({name, blob, lifetime});
}

void Layer::RefuseGradient(const std::vector<bool>& propagate_down, int bottom_index,
                           const char* what) const {
  DEMI_CHECK(!propagate_down[bottom_index], type(), " layer '", layer_param_.name(),
             "' cannot backpropagate to ", what);
}

void Layer::ToProto(LayerParameter* param, bool write_diff) const {
  param->Clear();
  param->CopyFrom(layer_param_);
  param->clear_blobs();
  for (const auto& blob : blobs_) blob->ToProto(param->add_blobs(), write_diff);
}

}  // namespace demi
