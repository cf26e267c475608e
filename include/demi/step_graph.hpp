#ifndef DEMI_STEP_GRAPH_HPP_
#define DEMI_STEP_GRAPH_HPP_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "demi/common.hpp"
#include "demi/proto/demi.pb.h"

namespace demi {

class Net;

/// Why a solver with `param` on `context` cannot replay its passes from CUDA
/// graphs (the solver's cuda_graph), or "" when it can.
std::string CudaGraphBlocker(const SolverParameter& param, const Context& context);

/// Steps [first, last] of a net's execution order (backward: last down to
/// first), run by the host one by one (outside) or together, as one CUDA
/// graph (StepGraph's segments).
struct StepRange {
  int first = 0;
  int last = 0;
  bool outside = false;
};

/// How StepGraph cuts a forward or backward pass of `net` into ranges, in
/// the order they run. Outside: sources (forward), and the layers in
/// `outside`. A range starts at each step outside and after it, at each
/// layer that stages host inputs (forward), and after each step where
/// `hands_over` says the backward hook hands gradients over (backward).
/// Backward steps that do nothing belong to no range but one that spans
/// them. The cut depends on nothing a GPU holds: planned, and tested, on
/// any machine.
std::vector<StepRange> PlanStepRanges(const Net& net, bool backward, const std::set<int>& outside,
                                      const std::function<bool(int layer_id)>& hands_over);

#ifndef CPU_ONLY

class CudaGraph;
class GpuAccessLog;

/// @brief A train net's forward and backward pass replayed from CUDA graphs
/// (the solver's cuda_graph): the host queues a few graph launches per pass
/// instead of a few thousand kernels and library calls, bit-identical to
/// queuing them one by one, since a graph holds exactly the calls the layers
/// made when it was captured.
///
/// The first pass after construction or Invalidate() runs as usual, by the
/// caller (cuDNN measures its algorithms, buffers are allocated); the next
/// one is captured step by step and then launched; later ones launch the
/// graphs. Some layers stay outside, run by the host between launches:
/// - layers without bottoms (data layers: their input comes from the host or
///   their random stream, new each step);
/// - layers whose capture failed: their GPU code touches a blob on the host
///   (Embed's index check; any layer without a CUDA twin), or makes a call
///   no graph can hold. The log names each one, with why.
/// So forward and backward are each a sequence of segments, graphs between
/// the layers outside. Backward graphs also end where replication hands a
/// bucket of gradients over (its hook runs on the host after the launch).
/// The loss is added into a float of the graph's own and moved to the
/// caller's before and after the forward segments, in the order the layers
/// would have added it.
///
/// Replays keep SyncedMemory's head states true through a GpuAccessLog per
/// graph, and a captured layer's host-side work each step
/// (Layer::StageHostInputs: Dropout's draws) runs just before the launch of
/// the graph it starts, where its forward would have queued it.
/// Graphs that hold stale device addresses (a net re-planned, the CUDA
/// scratch grown), old shapes (a reshape that kept the addresses), an old
/// gradient scale (dynamic loss scaling) or an old plan (a callback added
/// or removed: PlanChanged) are dropped: that pass runs as usual and the
/// next captures again. Otherwise they last across Steps; what the host
/// wrote between passes is uploaded before the launch (GpuAccessLog).
class StepGraph {
 public:
  /// Whether the net's backward hook hands gradients over after a layer
  /// (Solver::Callback::HandsOverAfter).
  using HandsOver = std::function<bool(int layer_id)>;

  /// `hands_over`, asked at each capture (so it may answer from state that
  /// changes: say PlanChanged then): where backward graphs end
  /// (PlanStepRanges).
  explicit StepGraph(Net* net, HandsOver hands_over = nullptr);
  ~StepGraph();
  StepGraph(const StepGraph&) = delete;
  StepGraph& operator=(const StepGraph&) = delete;

  /// One forward pass adding its loss into *loss (a float on the device)
  /// and one backward pass, from the graphs (captured first when due); false
  /// when this pass is one to run as usual, which the caller then does: the
  /// first after Invalidate(), or every one once the capture kept failing.
  /// The net's backward hook, if set, runs for each step of a backward graph
  /// after its launch (never while capturing); a capture ends a backward
  /// graph after each layer where the hands-over predicate says the hook
  /// hands gradients over, so that they leave as early as without graphs.
  bool Run(float* loss);
  /// Drops the graphs (the next pass runs as usual, the one after
  /// captures): for whatever may have changed what the layers would queue
  /// that Run cannot see. Waits for the device.
  void Invalidate();

  /// Where backward's hands-over may have changed (a callback added or
  /// removed): the next pass plans and captures anew. No CUDA call: any
  /// thread may say it.
  void PlanChanged() { plan_changed_ = true; }

  /// Passes replayed from graphs, and captures made, so far.
  int replays() const { return replays_; }
  int captures() const { return captures_; }
  /// The names of the layers run outside the graphs (forward or backward),
  /// as of the last capture.
  const std::vector<std::string>& LayersOutside() const { return layers_outside_; }

 private:
  struct Segment;
  /// kOff: the capture kept failing; passes run as usual.
  enum class State { kWarmUp, kCapture, kReplay, kOff };

  /// The names of the layers in outside segments, in layer order.
  std::vector<std::string> SegmentsOutside() const;
  /// Captures every segment, leaving out each layer whose capture fails;
  /// false (with a warning) when it kept failing.
  bool Capture();
  /// Splits forward and backward into segments (PlanStepRanges).
  void PlanSegments();
  /// Sets Layer::captured() of the layers in forward graphs.
  void MarkCaptured(bool captured);
  /// Captures the segments in order; false, with one more step outside,
  /// at the first failure.
  bool CaptureSegments();
  /// Captures `segment`; on a failure returns false with the step and why.
  bool CaptureSegment(Segment* segment, bool backward, int* failed_step, std::string* why);
  /// Whether every graph's addresses, the blobs' shapes and the gradient
  /// scale still hold.
  bool GraphsValid() const;
  /// Whether the gradient scale and the shapes noted at the warm-up pass
  /// still hold: what the capture after it needs.
  bool WarmUpHolds() const;
  /// A hash of every blob's and param's shape and format: a reshape that
  /// keeps the addresses (smaller) still changes what the kernels cover.
  uint64_t ShapesHash() const;
  /// Runs the segments; false when the CUDA scratch moved under the graphs
  /// and the pass ended as usual.
  bool Replay(float* loss);
  /// Launches `segment`'s graph (staging its layers' host inputs first) or
  /// runs its steps; `as_usual`: run them whatever it is. False when the rest
  /// of the pass must run as usual.
  bool RunSegment(const Segment& segment, bool backward, bool as_usual);
  void RunStep(int step, bool backward);

  Net* net_;
  HandsOver hands_over_;
  State state_ = State::kWarmUp;
  std::vector<Segment> forward_;
  std::vector<Segment> backward_;
  /// Layers left outside the graphs (beyond the sources), each direction,
  /// for the net's life: what failed once fails again.
  std::set<int> outside_forward_;
  std::set<int> outside_backward_;
  /// The float the captured loss layers add into.
  float* loss_ = nullptr;
  /// What the graphs hold beyond the noted memories: CudaScratchMoves(),
  /// the net's gradient scale and ShapesHash() at the capture (noted at the
  /// warm-up before it too).
  uint64_t scratch_moves_ = 0;
  float gradient_scale_ = 1.0f;
  uint64_t shapes_ = 0;
  std::atomic<bool> plan_changed_{false};
  std::vector<std::string> layers_outside_;
  int replays_ = 0;
  int captures_ = 0;
};

#endif  // CPU_ONLY

}  // namespace demi

#endif  // DEMI_STEP_GRAPH_HPP_
