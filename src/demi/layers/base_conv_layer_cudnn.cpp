// The CUDNN engine of Convolution and Deconvolution (see base_conv_layer.hpp).
#include "demi/layers/base_conv_layer.hpp"

#ifdef USE_CUDNN

#include <algorithm>
#include <map>
#include <mutex>
#include <string>

#include "demi/layers/cudnn_ops.hpp"
#include "demi/layers/narrow_staging.hpp"
#include "demi/util/convert_gpu.hpp"
#include "demi/util/cuda.hpp"
#include "demi/util/cudnn.hpp"

namespace demi {

namespace {

/// The three passes' algorithms, and the math each runs in: FMA (plain FP32)
/// unless measured under GpuMath::kTensorOps.
struct ConvAlgorithms {
  cudnnConvolutionFwdAlgo_t forward{};
  cudnnConvolutionBwdDataAlgo_t backward_data{};
  cudnnConvolutionBwdFilterAlgo_t backward_filter{};
  cudnnMathType_t forward_math = CUDNN_FMA_MATH;
  cudnnMathType_t backward_data_math = CUDNN_FMA_MATH;
  cudnnMathType_t backward_filter_math = CUDNN_FMA_MATH;
};

}  // namespace

struct BaseConvolutionLayer::CudnnState {
  CudnnTensor image, output, bias;
  CudnnFilter filter;
  CudnnConvolution conv;
  ConvAlgorithms algos;
  bool ready = false;  ///< algorithms were found for the current shape
  Blob workspace;      ///< scratch, bytes as floats
  /// What the convolution reads and writes in (staging.type()): FLOAT, or
  /// the 16-bit type the layer stores where its bottom or top is stored in
  /// it (tensor-op products summed in FLOAT), a FLOAT side staged; and the
  /// layout (channels last where a side is, the other side staged).
  NarrowStaging staging;
  /// A bottom shape at which cuDNN found no algorithm, or empty; and
  /// whether that was in a trial reshape (Layer::settling), whose heuristic
  /// choice the measured reshape after it may beat.
  struct Refusal {
    std::vector<int64_t> shape;
    bool in_trial = false;
    /// Forgets a refusal at another shape, or one made in a trial once the
    /// net measures.
    void ClearUnless(const std::vector<int64_t>& bottom_shape, bool settling) {
      if (shape != bottom_shape || (in_trial && !settling)) shape.clear();
    }
  };
  /// Channels last, and in 16 bits (in Caffe's layout): remembered so that
  /// the net gives the blobs the other format instead of offering the
  /// refused one again each time the layer runs in the other.
  Refusal refused_channels_last, refused_narrow;
  /// In a 16-bit type: the weights rounded to it at each Forward (the FLOAT
  /// weights stay the master copy the solver updates), and the weight
  /// gradient, in scratch, before it is added to the FLOAT one; channels
  /// last (KRSC), as cuDNN's tensor-core kernels read them, where the
  /// images are.
  Blob narrow_weights, narrow_weight_diff;
};

namespace {

// The first of cuDNN's ranked candidates that runs, is deterministic (this
// drops BWD_DATA_ALGO_0 and BWD_FILTER_ALGO_0/3, which use atomics), keeps
// FP32 math for FLOAT tensors (no tensor-op TF32; 16-bit tensors take
// tensor ops, whose products of 16-bit numbers are exact) and fits the
// budget.
template <typename Perf, typename Algo>
bool PickAlgorithm(const Perf* candidates, int count, size_t budget, bool tensor_ops, Algo* algo,
                   cudnnMathType_t* math) {
  for (int i = 0; i < count; ++i) {
    const Perf& c = candidates[i];
    const bool fp32 = c.mathType == CUDNN_FMA_MATH || c.mathType == CUDNN_DEFAULT_MATH;
    if (c.status == CUDNN_STATUS_SUCCESS && c.determinism == CUDNN_DETERMINISTIC &&
        (fp32 || tensor_ops) && c.memory <= budget) {
      *algo = c.algo;
      // FMA for FLOAT: cuDNN's default math may run TF32 on Ampere and later.
      *math = tensor_ops ? c.mathType : CUDNN_FMA_MATH;
      return true;
    }
  }
  return false;
}

float* WorkspacePointer(Blob* workspace) {
  return workspace->count() > 0 ? workspace->mutable_gpu_data() : nullptr;
}

/// The fastest of cuDNN's measured candidates (cudnnFind ranks them by time)
/// that ran and fits the budget, deterministic or not, and its math.
template <typename Perf, typename Algo>
bool PickFastest(const Perf* candidates, int count, size_t budget, Algo* algo,
                 cudnnMathType_t* math) {
  for (int i = 0; i < count; ++i) {
    const Perf& c = candidates[i];
    if (c.status == CUDNN_STATUS_SUCCESS && c.memory <= budget) {
      *algo = c.algo;
      *math = c.mathType;
      return true;
    }
  }
  return false;
}

/// The algorithms cudnnFind measured for one convolution problem; shared by
/// every layer and thread of the process, as the measurement takes
/// milliseconds per shape and a net repeats its shapes.
struct MeasuredAlgorithms {
  bool found = false;
  ConvAlgorithms algos;
};

std::mutex measured_mutex;
std::map<std::string, MeasuredAlgorithms>& Measured() {
  static std::map<std::string, MeasuredAlgorithms> measured;
  return measured;
}

}  // namespace

void BaseConvolutionLayer::CudnnSetUp() {
  if (engine_.engine != EngineKind::kCudnn) return;
  cudnn_ = std::make_shared<CudnnState>();
  const ConvGeometry& g = geometry_;
  cudnn_->conv.Set({static_cast<int>(g.pad_h), static_cast<int>(g.pad_w)},
                   {static_cast<int>(g.stride_h), static_cast<int>(g.stride_w)},
                   {static_cast<int>(g.dilation_h), static_cast<int>(g.dilation_w)},
                   static_cast<int>(group_));
  // Plain FP32: with the default math, Ampere and later may run TF32. Each
  // call sets its pass's math first (FMA unless measured under kTensorOps).
  DEMI_CUDNN_CHECK(cudnnSetConvolutionMathType(cudnn_->conv.get(), CUDNN_FMA_MATH));
  cudnn_->bias.Set({1, num_output_, 1, 1});
  RegisterBuffer("cudnn_workspace", &cudnn_->workspace, BufferLifetime::kScratch);
  cudnn_->staging.ForEachBuffer([this](const char* name, Blob* blob) {
    RegisterBuffer(name, blob, BufferLifetime::kScratch);
  });
  // The rounded weights: written by Forward, read by Backward; placed by the
  // planner like any saved buffer (empty in FLOAT).
  RegisterBuffer("narrow_weights", &cudnn_->narrow_weights, BufferLifetime::kSavedForBackward);
  RegisterBuffer("narrow_weight_diff", &cudnn_->narrow_weight_diff, BufferLifetime::kScratch);
}

void BaseConvolutionLayer::CudnnReshape(const Blob& bottom, const Blob& top) {
  CudnnState& s = *cudnn_;
  s.staging.Reshape(engine_.types, bottom, top, MayRunChannelsLast());
  const Type stored = s.staging.type();
  const bool last = s.staging.channels_last();
  const bool narrow_weights = stored != FLOAT && bottom.count() > 0;
  for (Blob* copy : {&s.narrow_weights, &s.narrow_weight_diff}) {
    copy->set_storage_type(stored);
    copy->Reshape(narrow_weights ? blobs_[0]->shape() : std::vector<int64_t>{0});
  }
  s.filter.Set(blobs_[0]->shape(), stored, last);
  const std::vector<int64_t> top_shape{num_, num_output_, top_h_, top_w_};
  s.image.SetImages(reverse_dimensions() ? top_shape : bottom.shape(), stored, last);
  s.output.SetImages(reverse_dimensions() ? bottom.shape() : top_shape, stored, last);

  s.ready = false;
  s.workspace.Reshape(std::vector<int64_t>{0});
  s.refused_channels_last.ClearUnless(bottom.shape(), settling());
  s.refused_narrow.ClearUnless(bottom.shape(), settling());
  if (bottom.count() == 0) return;  // cuDNN takes no empty tensors; CAFFE handles them
  auto use_caffe_engine = [&](size_t needed) {
    if (stored != FLOAT) {
      // Refused channels last, the blobs keep Caffe's layout next; refused
      // in 16 bits there too, they are stored in FLOAT.
      (last ? s.refused_channels_last : s.refused_narrow) = {bottom.shape(), settling()};
      VLOG(1) << type() << " layer '" << layer_param_.name() << "': no cuDNN algorithm "
              << (last ? "channels last" : StrCat("in ", Type_Name(stored))) << " for bottom shape "
              << bottom.shape_string() << (settling() ? " by heuristics" : "") << "; its blobs "
              << (last ? "keep Caffe's layout" : "stay FLOAT");
    }
    if (settling()) return;  // a trial: the measured reshape says it if it holds
    LOG(WARNING) << type() << " layer '" << layer_param_.name() << "': no "
                 << (context_.gpu_math == GpuMath::kDeterministic ? "" : "measured or ")
                 << "deterministic FP32 cuDNN algorithm within "
                 << (context_.cudnn_workspace_bytes >> 20) << " MiB of workspace for bottom shape "
                 << bottom.shape_string()
                 << (needed > 0 ? StrCat(" (needs ", needed >> 20, " MiB)") : std::string())
                 << "; using the CAFFE engine";
  };
  cudnnHandle_t handle = CudnnHandle();
  const size_t budget = context_.cudnn_workspace_bytes;
  // Not while the net settles its blobs' formats: those reshapes are trials.
  if (context_.gpu_math == GpuMath::kTensorOps && !settling()) {
    CudnnMeasureAlgorithms(bottom);
  }
  // Where no measured algorithm fits the budget (an H100 found none for
  // ResNet-50's 56x56 3x3 convolutions within 64 MiB), cuDNN's deterministic
  // FP32 choice, before the CAFFE engine.
  if (!s.ready) CudnnChooseDeterministicAlgorithms();
  if (!s.ready) {
    use_caffe_engine(0);
    return;
  }

  // The exact workspace of each chosen algorithm, the largest of the three.
  size_t bytes = 0, needed = 0;
  DEMI_CUDNN_CHECK(cudnnSetConvolutionMathType(s.conv.get(), s.algos.forward_math));
  DEMI_CUDNN_CHECK(cudnnGetConvolutionForwardWorkspaceSize(handle, s.image.get(), s.filter.get(),
                                                           s.conv.get(), s.output.get(),
                                                           s.algos.forward, &needed));
  bytes = std::max(bytes, needed);
  DEMI_CUDNN_CHECK(cudnnSetConvolutionMathType(s.conv.get(), s.algos.backward_data_math));
  DEMI_CUDNN_CHECK(cudnnGetConvolutionBackwardDataWorkspaceSize(
      handle, s.filter.get(), s.output.get(), s.conv.get(), s.image.get(), s.algos.backward_data,
      &needed));
  bytes = std::max(bytes, needed);
  DEMI_CUDNN_CHECK(cudnnSetConvolutionMathType(s.conv.get(), s.algos.backward_filter_math));
  DEMI_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterWorkspaceSize(
      handle, s.image.get(), s.output.get(), s.conv.get(), s.filter.get(), s.algos.backward_filter,
      &needed));
  bytes = std::max(bytes, needed);
  // Each candidate fit, but the sizes asked under the chosen math can be larger.
  if (bytes > budget) {
    s.ready = false;
    use_caffe_engine(bytes);
    return;
  }
  s.workspace.Reshape(
      std::vector<int64_t>{static_cast<int64_t>((bytes + sizeof(float) - 1) / sizeof(float))});
  columns_.Reshape(std::vector<int64_t>{0});  // cuDNN unfolds nothing
}

// kDeterministic (and kTensorOps's fallback): cuDNN's heuristic ranking,
// filtered (PickAlgorithm). No measurement, so the choice is the same in every
// process.
void BaseConvolutionLayer::CudnnChooseDeterministicAlgorithms() {
  CudnnState& s = *cudnn_;
  s.algos = ConvAlgorithms{};
  const bool tensor_ops = s.staging.type() != FLOAT;
  DEMI_CUDNN_CHECK(cudnnSetConvolutionMathType(s.conv.get(),
                                               tensor_ops ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH));
  cudnnHandle_t handle = CudnnHandle();
  const size_t budget = context_.cudnn_workspace_bytes;
  int count = 0;
  cudnnConvolutionFwdAlgoPerf_t forward[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  DEMI_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(
      handle, s.image.get(), s.filter.get(), s.conv.get(), s.output.get(),
      CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &count, forward));
  s.ready =
      PickAlgorithm(forward, count, budget, tensor_ops, &s.algos.forward, &s.algos.forward_math);
  cudnnConvolutionBwdDataAlgoPerf_t backward_data[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
  DEMI_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(
      handle, s.filter.get(), s.output.get(), s.conv.get(), s.image.get(),
      CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &count, backward_data));
  s.ready = s.ready && PickAlgorithm(backward_data, count, budget, tensor_ops,
                                     &s.algos.backward_data, &s.algos.backward_data_math);
  cudnnConvolutionBwdFilterAlgoPerf_t backward_filter[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
  DEMI_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(
      handle, s.image.get(), s.output.get(), s.conv.get(), s.filter.get(),
      CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &count, backward_filter));
  s.ready = s.ready && PickAlgorithm(backward_filter, count, budget, tensor_ops,
                                     &s.algos.backward_filter, &s.algos.backward_filter_math);
}

// kTensorOps: each pass's algorithms timed by cudnnFind under tensor-op math
// (TF32 on Ampere and newer), once per problem and process.
void BaseConvolutionLayer::CudnnMeasureAlgorithms(const Blob& bottom) {
  CudnnState& s = *cudnn_;
  const size_t budget = context_.cudnn_workspace_bytes;
  int device = 0;
  DEMI_CUDA_CHECK(cudaGetDevice(&device));
  const std::string key = StrCat(
      device, " ", type(), " bottom ", bottom.shape_string(), " filter ", blobs_[0]->shape_string(),
      " top ", top_h_, "x", top_w_, " pad ", geometry_.pad_h, ",", geometry_.pad_w, " stride ",
      geometry_.stride_h, ",", geometry_.stride_w, " dilation ", geometry_.dilation_h, ",",
      geometry_.dilation_w, " group ", group_, " budget ", budget, " type ",
      Type_Name(s.staging.type()), s.staging.channels_last() ? " channels last" : "");
  std::lock_guard<std::mutex> lock(measured_mutex);
  auto cached = Measured().find(key);
  if (cached == Measured().end()) {
    cudnnHandle_t handle = CudnnHandle();
    MeasuredAlgorithms m;
    DEMI_CUDNN_CHECK(cudnnSetConvolutionMathType(s.conv.get(), CUDNN_TENSOR_OP_MATH));
    int count = 0;
    cudnnConvolutionFwdAlgoPerf_t forward[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    DEMI_CUDNN_CHECK(cudnnFindConvolutionForwardAlgorithm(
        handle, s.image.get(), s.filter.get(), s.conv.get(), s.output.get(),
        CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &count, forward));
    m.found = PickFastest(forward, count, budget, &m.algos.forward, &m.algos.forward_math);
    cudnnConvolutionBwdDataAlgoPerf_t backward_data[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
    DEMI_CUDNN_CHECK(cudnnFindConvolutionBackwardDataAlgorithm(
        handle, s.filter.get(), s.output.get(), s.conv.get(), s.image.get(),
        CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &count, backward_data));
    m.found = m.found && PickFastest(backward_data, count, budget, &m.algos.backward_data,
                                     &m.algos.backward_data_math);
    cudnnConvolutionBwdFilterAlgoPerf_t backward_filter[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
    DEMI_CUDNN_CHECK(cudnnFindConvolutionBackwardFilterAlgorithm(
        handle, s.image.get(), s.output.get(), s.conv.get(), s.filter.get(),
        CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &count, backward_filter));
    m.found = m.found && PickFastest(backward_filter, count, budget, &m.algos.backward_filter,
                                     &m.algos.backward_filter_math);
    cached = Measured().emplace(key, m).first;
  }
  s.ready = cached->second.found;
  s.algos = cached->second.algos;
}

bool BaseConvolutionLayer::CudnnReady() const { return cudnn_ && cudnn_->ready; }

bool BaseConvolutionLayer::CudnnTakesChannelsLast() const {
  return CudnnReady() && cudnn_->staging.type() != FLOAT &&
         cudnn_->refused_channels_last.shape.empty();
}

bool BaseConvolutionLayer::CudnnTakesNarrowBlobs() const {
  return CudnnReady() && cudnn_->refused_narrow.shape.empty();
}

void BaseConvolutionLayer::CudnnConvolve(const void* image, const void* weights, void* output) {
  CudnnState& s = *cudnn_;
  DEMI_CUDNN_CHECK(cudnnSetConvolutionMathType(s.conv.get(), s.algos.forward_math));
  DEMI_CUDNN_CHECK(cudnnConvolutionForward(
      CudnnHandle(), CudnnScale::One(), s.image.get(), image, s.filter.get(), weights, s.conv.get(),
      s.algos.forward, WorkspacePointer(&s.workspace), s.workspace.count() * sizeof(float),
      CudnnScale::Zero(), s.output.get(), output));
}

void BaseConvolutionLayer::CudnnConvolveAdjoint(const void* output, const void* weights,
                                                void* image) {
  CudnnState& s = *cudnn_;
  DEMI_CUDNN_CHECK(cudnnSetConvolutionMathType(s.conv.get(), s.algos.backward_data_math));
  DEMI_CUDNN_CHECK(cudnnConvolutionBackwardData(
      CudnnHandle(), CudnnScale::One(), s.filter.get(), weights, s.output.get(), output,
      s.conv.get(), s.algos.backward_data, WorkspacePointer(&s.workspace),
      s.workspace.count() * sizeof(float), CudnnScale::Zero(), s.image.get(), image));
}

void BaseConvolutionLayer::CudnnWeightGradient(const void* image, const void* output) {
  CudnnState& s = *cudnn_;
  DEMI_CUDNN_CHECK(cudnnSetConvolutionMathType(s.conv.get(), s.algos.backward_filter_math));
  // FLOAT: accumulated into the param's gradient (beta 1). 16 bits: written
  // to scratch, then widened and added.
  const bool narrow = s.staging.type() != FLOAT;
  void* weights_diff = narrow ? s.narrow_weight_diff.data()->mutable_gpu_data()
                              : static_cast<void*>(blobs_[0]->mutable_gpu_diff());
  DEMI_CUDNN_CHECK(cudnnConvolutionBackwardFilter(
      CudnnHandle(), CudnnScale::One(), s.image.get(), image, s.output.get(), output, s.conv.get(),
      s.algos.backward_filter, WorkspacePointer(&s.workspace), s.workspace.count() * sizeof(float),
      narrow ? CudnnScale::Zero() : CudnnScale::One(), s.filter.get(), weights_diff));
  const Blob& w = *blobs_[0];
  if (narrow && s.staging.channels_last()) {
    GpuAddWidenedFromChannelsLast(w.shape(0), w.shape(1), w.count(2), s.staging.type(),
                                  s.narrow_weight_diff.data()->gpu_data(),
                                  blobs_[0]->mutable_gpu_diff());
  } else if (narrow) {
    GpuAddWidened(w.count(), s.staging.type(), s.narrow_weight_diff.data()->gpu_data(),
                  blobs_[0]->mutable_gpu_diff());
  }
}

const void* BaseConvolutionLayer::CudnnWeights() {
  CudnnState& s = *cudnn_;
  if (s.staging.type() == FLOAT) return blobs_[0]->gpu_data();
  return s.narrow_weights.data()->gpu_data();
}

void BaseConvolutionLayer::CudnnForward(const Blob& bottom, Blob* top) {
  CudnnState& s = *cudnn_;
  const Blob& w = *blobs_[0];
  void* narrow_weights = s.narrow_weights.data()->mutable_gpu_data();
  // The FLOAT weights may have changed since the last pass.
  if (s.staging.channels_last()) {
    GpuConvertLayout(w.shape(0), w.shape(1), w.count(2), FLOAT, w.gpu_data(), s.staging.type(),
                     narrow_weights, true);
  } else if (s.staging.type() != FLOAT) {
    GpuConvert(w.count(), FLOAT, w.gpu_data(), s.staging.type(), narrow_weights);
  }
  const void* x = s.staging.BottomData(bottom);
  void* y = s.staging.MutableTopData(top);
  if (reverse_dimensions()) {
    CudnnConvolveAdjoint(x, CudnnWeights(), y);
  } else {
    CudnnConvolve(x, CudnnWeights(), y);
  }
  if (bias_term_ && s.staging.type() == FLOAT) {
    const CudnnTensor& out = reverse_dimensions() ? s.image : s.output;
    DEMI_CUDNN_CHECK(cudnnAddTensor(CudnnHandle(), CudnnScale::One(), s.bias.get(),
                                    blobs_[1]->gpu_data(), CudnnScale::One(), out.get(), y));
  } else if (bias_term_) {
    AddBiasGpu(s.staging.type(), s.staging.channels_last(), y);
  }
  s.staging.FinishTopData(top);
}

void BaseConvolutionLayer::CudnnBackward(const Blob& top, bool propagate_down, Blob* bottom) {
  CudnnState& s = *cudnn_;
  const bool weight_grad = param_propagate_down(0);
  const bool bias_grad = bias_term_ && param_propagate_down(1);
  const bool reverse = reverse_dimensions();
  // For Deconvolution the top is the convolution's image, the bottom its output.
  const void* dy = s.staging.TopDiff(top);
  if (bias_grad && s.staging.type() == FLOAT) {
    const CudnnTensor& out = reverse ? s.image : s.output;
    DEMI_CUDNN_CHECK(cudnnConvolutionBackwardBias(CudnnHandle(), CudnnScale::One(), out.get(), dy,
                                                  CudnnScale::One(), s.bias.get(),
                                                  blobs_[1]->mutable_gpu_diff()));
  } else if (bias_grad) {
    AccumulateBiasGradientGpu(s.staging.type(), s.staging.channels_last(), dy);
  }
  if (weight_grad) {
    const void* x = s.staging.BottomData(*bottom);
    CudnnWeightGradient(reverse ? dy : x, reverse ? x : dy);
  }
  if (!propagate_down) return;
  void* dx = s.staging.MutableBottomDiff(bottom);
  if (reverse) {
    CudnnConvolve(dy, CudnnWeights(), dx);
  } else {
    CudnnConvolveAdjoint(dy, CudnnWeights(), dx);
  }
  s.staging.FinishBottomDiff(bottom);
}

}  // namespace demi

#endif  // USE_CUDNN
