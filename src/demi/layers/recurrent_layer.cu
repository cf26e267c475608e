#include "demi/layers/recurrent_layer.hpp"
#include "demi/util/math_gpu.hpp"

namespace demi {

// launchers (the row kernels are util/math_gpu.cu's)

const float* RecurrentLayer::InitialState_gpu(const std::vector<Blob*>& bottom, int s) const {
  return expose_hidden_ ? bottom[first_state_bottom_ + s]->gpu_data() : carried_[s].gpu_data();
}

void RecurrentLayer::SaveFinalState_gpu(const std::vector<Blob*>& top, int s, const float* state) {
  float* out = expose_hidden_ ? top[1 + s]->mutable_gpu_data() : carried_[s].mutable_gpu_data();
  GpuCopy(streams_ * hidden_, state, out);
}

void RecurrentLayer::Forward_gpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const int64_t rows = steps_ * streams_;
  float* gates = gates_.mutable_gpu_data();
  // gates = x W_x^T + b (+ x_static W_static^T at every step).
  GpuGemm(false, true, rows, gates_dim_, input_dim_, 1.0f, bottom[0]->gpu_data(),
          blobs_[0]->gpu_data(), 0.0f, gates);
  GpuAddToRows(rows, gates_dim_, blobs_[1]->gpu_data(), gates);
  if (static_input_) {
    float* projected = step_rows_.mutable_gpu_data();
    GpuGemm(false, true, streams_, gates_dim_, static_dim_, 1.0f, bottom[2]->gpu_data(),
            blobs_[2]->gpu_data(), 0.0f, projected);
    GpuAddToRows(steps_, streams_ * gates_dim_, projected, gates);
  }
  RecurrentForward_gpu(bottom, top);
}

void RecurrentLayer::Backward_gpu(const std::vector<Blob*>& top,
                                  const std::vector<bool>& propagate_down,
                                  const std::vector<Blob*>& bottom) {
  DEMI_CHECK(!propagate_down[1], type(), " layer '", layer_param_.name(),
             "' cannot backpropagate to the sequence continuation indicators (bottom 1)");
  RecurrentBackward_gpu(top, propagate_down, bottom);
  const int64_t rows = steps_ * streams_;
  const float* dgates = dgates_.gpu_data();
  if (param_propagate_down(0)) {
    GpuGemm(true, false, gates_dim_, input_dim_, rows, 1.0f, dgates, bottom[0]->gpu_data(), 1.0f,
            blobs_[0]->mutable_gpu_diff());
  }
  if (param_propagate_down(1)) GpuSumRows(rows, gates_dim_, dgates, blobs_[1]->mutable_gpu_diff());
  if (propagate_down[0]) {
    GpuGemm(false, false, rows, input_dim_, gates_dim_, 1.0f, dgates, blobs_[0]->gpu_data(), 0.0f,
            bottom[0]->mutable_gpu_diff());
  }
  if (static_input_ && (param_propagate_down(2) || propagate_down[2])) {
    // x_static feeds every step: its projection's gradient is the sum over t.
    float* summed = step_rows_.mutable_gpu_data();
    const int64_t step_size = streams_ * gates_dim_;
    GpuCopy(step_size, dgates, summed);
    GpuSumRows(steps_ - 1, step_size, dgates + step_size, summed);
    if (param_propagate_down(2)) {
      GpuGemm(true, false, gates_dim_, static_dim_, streams_, 1.0f, summed, bottom[2]->gpu_data(),
              1.0f, blobs_[2]->mutable_gpu_diff());
    }
    if (propagate_down[2]) {
      GpuGemm(false, false, streams_, static_dim_, gates_dim_, 1.0f, summed, blobs_[2]->gpu_data(),
              0.0f, bottom[2]->mutable_gpu_diff());
    }
  }
}

}  // namespace demi
