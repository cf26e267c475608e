#include "demi/step_graph.hpp"

#include <utility>

#include "demi/net.hpp"

#ifndef CPU_ONLY
#include "demi/gpu_access_log.hpp"
#include "demi/util/cuda.hpp"
#include "demi/util/cuda_graph.hpp"
#include "demi/util/cuda_scratch.hpp"
#include "demi/util/device.hpp"
#include "demi/util/math_gpu.hpp"
#endif

namespace demi {

std::string CudaGraphBlocker(const SolverParameter& param, const Context& context) {
  if (context.device != Device::kGPU) return "the solver runs on the CPU";
  if (param.debug_info()) return "debug_info reads every layer's blobs on the host";
  return "";
}

namespace {

/// Whether `hands_over` says so of a layer whose hook runs after `step`.
bool HandsOverAfterStep(const Net& net, int step,
                        const std::function<bool(int layer_id)>& hands_over) {
  if (!hands_over) return false;
  for (int layer_id : net.BackwardHookLayers(step)) {
    if (hands_over(layer_id)) return true;
  }
  return false;
}

}  // namespace

std::vector<StepRange> PlanStepRanges(const Net& net, bool backward, const std::set<int>& outside,
                                      const std::function<bool(int layer_id)>& hands_over) {
  std::vector<StepRange> ranges;
  const int steps = static_cast<int>(net.layers().size());
  bool cut = false;
  for (int k = 0; k < steps; ++k) {
    const int step = backward ? steps - 1 - k : k;
    const int layer = net.execution_order()[step];
    // A backward step that does nothing (no Backward, no recomputation,
    // so no hook) starts and ends no range (one that joins across it runs
    // it, as nothing): the steps below the last hand-over make no empty
    // graph.
    if (backward && net.BackwardStepIdle(step)) continue;
    // Sources (no bottoms) read the host or draw, new each step; they
    // have no backward.
    const bool source = !backward && net.bottom_vecs()[layer].empty();
    const bool host = source || outside.count(layer) > 0;
    // A layer that stages host inputs starts a graph, so that its upload
    // is queued where its forward would queue it (its buffer may share
    // arena bytes with a tensor an earlier step still uses).
    const bool stages = !backward && net.layers()[layer]->StagesHostInputs();
    // Steps outside run one by one; captured ones join the range before,
    // unless gradients were handed over after its last step.
    if (!ranges.empty() && !host && !stages && !ranges.back().outside && !cut) {
      (backward ? ranges.back().first : ranges.back().last) = step;
    } else {
      ranges.push_back(StepRange{step, step, host});
    }
    cut = backward && HandsOverAfterStep(net, step, hands_over);
  }
  return ranges;
}

#ifndef CPU_ONLY

/// A StepRange with its graph, when it is not outside.
struct StepGraph::Segment : StepRange {
  CudaGraph graph;
  GpuAccessLog log;
};

StepGraph::StepGraph(Net* net, HandsOver hands_over)
    : net_(net), hands_over_(std::move(hands_over)) {
  loss_ = static_cast<float*>(DeviceMalloc(sizeof(float)));
}

StepGraph::~StepGraph() {
  // Graphs first: they hold loss_'s address.
  forward_.clear();
  backward_.clear();
  DeviceFree(loss_);
}

bool StepGraph::Run(float* loss) {
  if (state_ == State::kReplay && (plan_changed_ || !GraphsValid())) {
    LOG(INFO) << "CUDA graph: the graphs hold old device addresses, shapes or gradient scale, or "
                 "the solver's callbacks changed; capturing the pass again";
    Invalidate();
  }
  // A change since the warm-up pass (dynamic loss scaling's update after it,
  // a reshape before the next Step): the capture would meet an upload or a
  // first fill, which it refuses (and leave the layer outside for good);
  // another pass as usual first. (A scratch the warm-up grew is grown.)
  if (state_ == State::kCapture && !WarmUpHolds()) Invalidate();
  if (state_ == State::kOff) return false;
  if (state_ == State::kWarmUp) {
    gradient_scale_ = net_->gradient_scale();
    shapes_ = ShapesHash();
    state_ = State::kCapture;
    return false;
  }
  if (state_ == State::kCapture) {
    if (!Capture()) {
      state_ = State::kOff;
      return false;
    }
    state_ = State::kReplay;
  }
  if (!Replay(loss)) Invalidate();  // the rest of the pass ran as usual
  return true;
}

void StepGraph::Invalidate() {
  // A launch still queued reads what the graphs hold.
  SynchronizeStream();
  forward_.clear();
  backward_.clear();
  for (const auto& layer : net_->layers()) layer->set_captured(false);
  if (state_ != State::kOff) state_ = State::kWarmUp;
}

std::vector<std::string> StepGraph::SegmentsOutside() const {
  std::set<int> layers;
  for (const auto* segments : {&forward_, &backward_}) {
    for (const Segment& segment : *segments) {
      if (!segment.outside) continue;
      for (int step = segment.first; step <= segment.last; ++step) {
        layers.insert(net_->execution_order()[step]);
      }
    }
  }
  std::vector<std::string> names;
  for (int layer : layers) names.push_back(net_->layer_names()[layer]);
  return names;
}

void StepGraph::PlanSegments() {
  for (bool backward : {false, true}) {
    std::vector<Segment>& segments = backward ? backward_ : forward_;
    segments.clear();
    const std::set<int>& outside = backward ? outside_backward_ : outside_forward_;
    for (const StepRange& range : PlanStepRanges(*net_, backward, outside, hands_over_)) {
      segments.emplace_back();
      static_cast<StepRange&>(segments.back()) = range;
    }
  }
}

void StepGraph::MarkCaptured(bool captured) {
  for (const Segment& segment : forward_) {
    if (segment.outside) continue;
    for (int step = segment.first; step <= segment.last; ++step) {
      net_->layers()[net_->execution_order()[step]]->set_captured(captured);
    }
  }
}

bool StepGraph::Capture() {
  plan_changed_ = false;  // the segments are planned from the callbacks as they are now
  // Each failure leaves one more step outside: at most two per step.
  const int most = 2 * static_cast<int>(net_->layers().size()) + 1;
  for (int attempt = 0; attempt < most; ++attempt) {
    PlanSegments();
    // Only while capturing: host code that runs later (Solve's last
    // Forward) runs as usual. The backward hook runs at the replays, after
    // the launches that compute what it hands over, not at the capture,
    // which computes nothing.
    struct CaptureScope {
      StepGraph* graph;
      std::function<void(int)> hook;
      ~CaptureScope() {
        graph->MarkCaptured(false);
        graph->net_->set_layer_backward_hook(std::move(hook));
      }
    };
    bool captured = false;
    const uint64_t scratch_moves = CudaScratchMoves();
    {
      CaptureScope scope{this, net_->layer_backward_hook()};
      MarkCaptured(true);
      net_->set_layer_backward_hook(nullptr);
      captured = CaptureSegments();
    }
    if (!captured) continue;
    // A scratch that moved while capturing left the kernels captured before
    // it holding the freed one: capture again, the scratch now grown.
    if (CudaScratchMoves() != scratch_moves) continue;
    scratch_moves_ = scratch_moves;
    gradient_scale_ = net_->gradient_scale();
    shapes_ = ShapesHash();
    ++captures_;
    int graphs = 0;
    for (const auto* segments : {&forward_, &backward_}) {
      for (const Segment& segment : *segments) graphs += segment.outside ? 0 : 1;
    }
    layers_outside_ = SegmentsOutside();
    LOG(INFO) << "CUDA graph: captured the pass in " << graphs << " graphs; "
              << layers_outside_.size() << " layers run outside them";
    return true;
  }
  LOG(WARNING) << "CUDA graph: the capture kept failing; the passes run without graphs";
  forward_.clear();
  backward_.clear();
  return false;
}

bool StepGraph::CaptureSegments() {
  for (bool backward : {false, true}) {
    for (Segment& segment : backward ? backward_ : forward_) {
      if (segment.outside) continue;
      int step = 0;
      std::string why;
      if (CaptureSegment(&segment, backward, &step, &why)) continue;
      const int layer = net_->execution_order()[step];
      LOG(INFO) << "CUDA graph: layer '" << net_->layer_names()[layer] << "' ("
                << net_->layers()[layer]->type() << ") runs its "
                << (backward ? "backward" : "forward") << " outside the graphs: " << why;
      (backward ? outside_backward_ : outside_forward_).insert(layer);
      return false;
    }
  }
  return true;
}

bool StepGraph::CaptureSegment(Segment* segment, bool backward, int* failed_step,
                               std::string* why) {
  segment->log.Clear();
  segment->graph.BeginCapture();
  segment->log.Start();
  for (int k = segment->first; k <= segment->last; ++k) {
    const int step = backward ? segment->last - (k - segment->first) : k;
    try {
      RunStep(step, backward);
      *why = segment->graph.CaptureProblem();
    } catch (const Error& error) {
      *why = error.what();
    } catch (...) {
      // Not the capture's doing (out of host memory): the thread must not
      // stay capturing.
      segment->log.Stop();
      segment->graph.AbandonCapture();
      throw;
    }
    if (why->empty()) continue;
    segment->log.Stop();
    segment->graph.AbandonCapture();
    *failed_step = step;
    return false;
  }
  segment->log.Stop();
  try {
    segment->graph.EndCapture();
  } catch (const Error& error) {
    // CUDA does not say which call broke it: the segment's last step goes.
    *why = error.what();
    *failed_step = backward ? segment->first : segment->last;
    return false;
  }
  return true;
}

bool StepGraph::WarmUpHolds() const {
  return net_->gradient_scale() == gradient_scale_ && ShapesHash() == shapes_;
}

bool StepGraph::GraphsValid() const {
  // The loss layers' captured calls divide by the scale (dynamic loss
  // scaling changes it).
  if (net_->gradient_scale() != gradient_scale_) return false;
  if (CudaScratchMoves() != scratch_moves_) return false;
  if (ShapesHash() != shapes_) return false;
  for (const auto* segments : {&forward_, &backward_}) {
    for (const Segment& segment : *segments) {
      if (!segment.outside && !segment.log.AddressesHold()) return false;
    }
  }
  return true;
}

uint64_t StepGraph::ShapesHash() const {
  uint64_t hash = 14695981039346656037ull;  // FNV-1a over every axis of every shape
  auto mix = [&hash](uint64_t value) {
    hash ^= value;
    hash *= 1099511628211ull;
  };
  for (const auto* blobs : {&net_->blobs(), &net_->params()}) {
    for (const auto& blob : *blobs) {
      mix(static_cast<uint64_t>(blob->num_axes()));
      for (int64_t dim : blob->shape()) mix(static_cast<uint64_t>(dim));
      // The format too: the same count in another type or layout may keep
      // the address.
      mix(static_cast<uint64_t>(blob->storage_type()));
      mix(static_cast<uint64_t>(blob->channel_block()));
    }
  }
  return hash;
}

bool StepGraph::Replay(float* loss) {
  // The captured layers add into loss_, in the order they would into *loss.
  GpuCopy(1, loss, loss_);
  bool as_usual = false;
  for (const Segment& segment : forward_) as_usual = !RunSegment(segment, false, as_usual);
  GpuCopy(1, loss_, loss);
  for (const Segment& segment : backward_) as_usual = !RunSegment(segment, true, as_usual);
  if (!as_usual) ++replays_;
  return !as_usual;
}

bool StepGraph::RunSegment(const Segment& segment, bool backward, bool as_usual) {
  if (segment.outside || as_usual) {
    for (int k = segment.first; k <= segment.last; ++k) {
      RunStep(backward ? segment.last - (k - segment.first) : k, backward);
    }
    // A layer run here may have grown the CUDA scratch the graphs hold: the
    // rest of the pass then runs as usual too.
    return !as_usual && CudaScratchMoves() == scratch_moves_;
  }
  if (!backward) {
    for (int step = segment.first; step <= segment.last; ++step) {
      net_->layers()[net_->execution_order()[step]]->StageHostInputs();
    }
  }
  segment.log.PrepareReplay();
  segment.graph.Launch();
  segment.log.FinishReplay();
  if (backward) {
    for (int step = segment.last; step >= segment.first; --step) net_->RunBackwardHooks(step);
  }
  return true;
}

void StepGraph::RunStep(int step, bool backward) {
  if (backward) {
    net_->BackwardFromTo(step, step);
  } else {
    net_->ForwardAddingLoss(step, step, loss_);
  }
}

#endif  // CPU_ONLY

}  // namespace demi
