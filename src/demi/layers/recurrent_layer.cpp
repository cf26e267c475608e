#include "demi/layers/recurrent_layer.hpp"

#include "demi/filler.hpp"
#include "demi/util/device_math.hpp"
#include "demi/util/math.hpp"

namespace demi {

void RecurrentLayer::LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const RecurrentParameter& param = layer_param_.recurrent_param();
  const std::string& name = layer_param_.name();
  DEMI_CHECK(param.num_output() > 0, type(), " layer '", name, "' needs num_output > 0");
  DEMI_CHECK(bottom[0]->num_axes() >= 2, type(), " layer '", name,
             "' needs x (bottom 0) of shape T x N x ..., got ", bottom[0]->shape_string());
  hidden_ = param.num_output();
  gates_dim_ = GatesPerUnit() * hidden_;
  input_dim_ = bottom[0]->count(2);
  expose_hidden_ = param.expose_hidden();
  static_input_ = static_cast<int>(bottom.size()) > 2 + NumExposed();
  first_state_bottom_ = static_input_ ? 3 : 2;
  if (static_input_) {
    DEMI_CHECK(bottom[2]->num_axes() >= 1, type(), " layer '", name,
               "' needs x_static (bottom 2) of shape N x ..., got a scalar");
    static_dim_ = bottom[2]->count(1);
  }

  std::vector<std::vector<int64_t>> shapes{{gates_dim_, input_dim_}, {gates_dim_}};
  if (static_input_) shapes.push_back({gates_dim_, static_dim_});
  w_h_param_ = static_cast<int>(shapes.size());
  shapes.push_back({gates_dim_, hidden_});
  for (const auto& shape : ExtraParamShapes()) shapes.push_back(shape);
  if (!blobs_.empty()) {
    DEMI_CHECK(blobs_.size() == shapes.size(), type(), " layer '", name, "' has ", blobs_.size(),
               " preloaded param blobs; expected ", shapes.size());
    for (size_t i = 0; i < shapes.size(); ++i) {
      DEMI_CHECK(blobs_[i]->shape() == shapes[i], type(), " layer '", name, "' expects param ", i,
                 " of shape ", ShapeString(shapes[i]), ", got ", blobs_[i]->shape_string());
    }
    LOG(INFO) << "Skipping parameter initialization of " << name;
  } else {
    for (const auto& shape : shapes) {
      blobs_.push_back(std::make_shared<Blob>(shape));
      const FillerParameter& filler =
          shape.size() == 1 ? param.bias_filler() : param.weight_filler();
      GetFiller(filler)->Fill(blobs_.back().get(), rng());
    }
  }
  param_propagate_down_.assign(blobs_.size(), true);
  RegisterBuffer("gates", &gates_, BufferLifetime::kSavedForBackward);
  RegisterBuffer("gates_diff", &dgates_, BufferLifetime::kScratch);
  RegisterBuffer("step_rows", &step_rows_, BufferLifetime::kScratch);
}

void RecurrentLayer::Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const std::string& name = layer_param_.name();
  const Blob& x = *bottom[0];
  DEMI_CHECK(x.num_axes() >= 2 && x.shape(0) > 0 && x.count(2) == input_dim_, type(), " layer '",
             name, "' was set up for x (bottom 0) of shape T x N x ... with ", input_dim_,
             " values per step and T > 0, got ", x.shape_string());
  steps_ = x.shape(0);
  streams_ = x.shape(1);
  const std::vector<int64_t> cont_shape{steps_, streams_};
  DEMI_CHECK(bottom[1]->shape() == cont_shape, type(), " layer '", name,
             "' needs cont (bottom 1) of shape ", ShapeString(cont_shape), " (T x N of x ",
             x.shape_string(), "), got ", bottom[1]->shape_string());
  if (static_input_) {
    const Blob& xs = *bottom[2];
    DEMI_CHECK(xs.num_axes() >= 1 && xs.shape(0) == streams_ && xs.count(1) == static_dim_, type(),
               " layer '", name, "' needs x_static (bottom 2) of shape N x ... with N = ", streams_,
               " and ", static_dim_, " values per stream, got ", xs.shape_string());
  }
  const std::vector<int64_t> state_shape{1, streams_, hidden_};
  for (int s = 0; s < NumStates(); ++s) {
    if (expose_hidden_) {
      const Blob& state = *bottom[first_state_bottom_ + s];
      DEMI_CHECK(state.shape() == state_shape, type(), " layer '", name,
                 "' needs initial state bottom ", first_state_bottom_ + s, " of shape ",
                 ShapeString(state_shape), ", got ", state.shape_string());
      top[1 + s]->Reshape(state_shape);
    } else if (carried_[s].shape() != std::vector<int64_t>{streams_, hidden_}) {
      carried_[s].Reshape(std::vector<int64_t>{streams_, hidden_});
      Set(carried_[s].count(), 0.0f, carried_[s].mutable_cpu_data());
    }
  }
  top[0]->Reshape(std::vector<int64_t>{steps_, streams_, hidden_});
  gates_.Reshape(std::vector<int64_t>{steps_, streams_, gates_dim_});
  dgates_.ReshapeLike(gates_);
  step_rows_.Reshape(std::vector<int64_t>{streams_, gates_dim_});
}

const float* RecurrentLayer::InitialState(const std::vector<Blob*>& bottom, int s) const {
  const Blob& state = expose_hidden_ ? *bottom[first_state_bottom_ + s] : carried_[s];
  return state.data_on(context_.device);
}

void RecurrentLayer::SaveFinalState(const std::vector<Blob*>& top, int s, const float* state) {
  Blob& out = expose_hidden_ ? *top[1 + s] : carried_[s];
  Copy(context_.device, streams_ * hidden_, state, out.mutable_data_on(context_.device));
}

void RecurrentLayer::ForwardOnDevice(const std::vector<Blob*>& bottom,
                                     const std::vector<Blob*>& top) {
  const Device device = context_.device;
  const int64_t rows = steps_ * streams_;
  float* gates = gates_.mutable_data_on(device);
  // gates = x W_x^T + b (+ x_static W_static^T at every step).
  Gemm(device, false, true, rows, gates_dim_, input_dim_, 1.0f, bottom[0]->data_on(device),
       blobs_[0]->data_on(device), 0.0f, gates);
  AddToRows(device, rows, gates_dim_, blobs_[1]->data_on(device), gates);
  if (static_input_) {
    float* projected = step_rows_.mutable_data_on(device);
    Gemm(device, false, true, streams_, gates_dim_, static_dim_, 1.0f, bottom[2]->data_on(device),
         blobs_[2]->data_on(device), 0.0f, projected);
    AddToRows(device, steps_, streams_ * gates_dim_, projected, gates);
  }
  RecurrentForward(bottom, top);
}

void RecurrentLayer::BackwardOnDevice(const std::vector<Blob*>& top,
                                      const std::vector<bool>& propagate_down,
                                      const std::vector<Blob*>& bottom) {
  RefuseGradient(propagate_down, 1, "the sequence continuation indicators (bottom 1)");
  RecurrentBackward(top, propagate_down, bottom);
  const Device device = context_.device;
  const int64_t rows = steps_ * streams_;
  const float* dgates = dgates_.data_on(device);
  if (param_propagate_down(0)) {
    Gemm(device, true, false, gates_dim_, input_dim_, rows, 1.0f, dgates,
         bottom[0]->data_on(device), 1.0f, blobs_[0]->mutable_diff_on(device));
  }
  if (param_propagate_down(1)) {
    SumRows(device, rows, gates_dim_, dgates, blobs_[1]->mutable_diff_on(device));
  }
  if (propagate_down[0]) {
    Gemm(device, false, false, rows, input_dim_, gates_dim_, 1.0f, dgates,
         blobs_[0]->data_on(device), 0.0f, bottom[0]->mutable_diff_on(device));
  }
  if (static_input_ && (param_propagate_down(2) || propagate_down[2])) {
    // x_static feeds every step: its projection's gradient is the sum over t.
    float* summed = step_rows_.mutable_data_on(device);
    const int64_t step_size = streams_ * gates_dim_;
    Copy(device, step_size, dgates, summed);
    SumRows(device, steps_ - 1, step_size, dgates + step_size, summed);
    if (param_propagate_down(2)) {
      Gemm(device, true, false, gates_dim_, static_dim_, streams_, 1.0f, summed,
           bottom[2]->data_on(device), 1.0f, blobs_[2]->mutable_diff_on(device));
    }
    if (propagate_down[2]) {
      Gemm(device, false, false, streams_, static_dim_, gates_dim_, 1.0f, summed,
           blobs_[2]->data_on(device), 0.0f, bottom[2]->mutable_diff_on(device));
    }
  }
}

}  // namespace demi
