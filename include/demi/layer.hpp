#ifndef DEMI_LAYER_HPP_
#define DEMI_LAYER_HPP_

#include <memory>
#include <string>
#include <vector>

#include "demi/blob.hpp"
#include "demi/common.hpp"
#include "demi/engine_decision.hpp"
#include "demi/proto/demi.pb.h"

namespace demi {

/// How a layer-internal buffer lives, for the memory planner.
enum class BufferLifetime {
  kSavedForBackward,  ///< written by Forward, read by Backward (dropout mask, argmax)
  kScratch,           ///< used only inside one Forward or Backward call (im2col columns)
};

/// What a layer, as last reshaped, can read and write besides Caffe's dense
/// FLOAT blobs: the channel-blocked layouts of Blob::channel_block()
/// (Layer::blocked_layouts()), or 16-bit storage (Layer::narrow_blobs()).
enum class BlobFormats {
  kNone,     ///< Caffe's format only
  kPerBlob,  ///< each bottom and top in whatever format its blob has (oneDNN primitives)
  kUniform,  ///< any one format shared by every bottom and top (element-wise and
             ///< per-channel loops, concatenation along channels)
};

/// A layer-internal buffer the planner may place in the arena. `blob` is owned
/// by the layer; its data memory is the buffer.
struct LayerBuffer {
  std::string name;
  Blob* blob;
  BufferLifetime lifetime;
};

/// @brief Base of every layer: set up from a LayerParameter, reshape to its
/// bottoms, compute Forward (tops from bottoms) and Backward (bottom and param
/// gradients from top gradients), as in Caffe.
///
/// Loss: a top with a non-zero loss weight contributes
/// `weight * sum(top data)` to the value Forward returns; as in Caffe, the
/// weight is stored in the top's diff, so a loss layer's Backward reads it from
/// `top[0]->cpu_diff()[0]`.
///
/// Memory planning: Forward must write every element of its tops and
/// Backward every element of the bottom gradients it computes, because a
/// planned activation shares its bytes with other tensors between uses; and
/// each layer declares what its Backward reads
/// (BackwardReadsBottomData / BackwardReadsTopData, conservatively true by
/// default) and registers its internal buffers with their lifetimes.
class Layer {
 public:
  explicit Layer(const LayerParameter& param);
  virtual ~Layer() = default;
  Layer(const Layer&) = delete;
  Layer& operator=(const Layer&) = delete;

  /// Checks blob counts, runs LayerSetUp and Reshape, sets loss weights.
  void SetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top);
  /// One-time setup: read params, create and fill learnable blobs.
  virtual void LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {}
  /// Shapes tops and internal buffers from the bottoms' shapes.
  virtual void Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) = 0;

  /// Runs the forward pass on the context's device; returns the weighted loss
  /// (on a GPU read back, which waits for the device) after
  /// CheckDeferredErrors().
  float Forward(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top);
  /// The forward pass without reading anything back: adds the weighted loss,
  /// divided by `divisor` (the net's gradient scale), into *loss, one float
  /// on the context's device (the solver's pending losses, read when it
  /// displays them).
  void ForwardAddingLoss(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top,
                         float* loss, float divisor);
  /// Raises what Forward found wrong on the device without waiting for it
  /// (SoftmaxWithLoss's labels on a GPU); nothing by default.
  virtual void CheckDeferredErrors() {}
  /// Accumulates param gradients and writes bottom gradients where
  /// propagate_down[i] is true.
  void Backward(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                const std::vector<Blob*>& bottom);

  /// Learnable (or computed) parameter blobs, in Caffe's order.
  std::vector<std::shared_ptr<Blob>>& blobs() { return blobs_; }
  const std::vector<std::shared_ptr<Blob>>& blobs() const { return blobs_; }
  const LayerParameter& layer_param() const { return layer_param_; }
  /// Writes the layer's parameter and blobs, as a .caffemodel stores them.
  virtual void ToProto(LayerParameter* param, bool write_diff = false) const;

  float loss(int top_index) const;
  void set_loss(int top_index, float value);

  virtual const char* type() const = 0;

  virtual int ExactNumBottomBlobs() const { return -1; }
  virtual int MinBottomBlobs() const { return -1; }
  virtual int MaxBottomBlobs() const { return -1; }
  virtual int ExactNumTopBlobs() const { return -1; }
  virtual int MinTopBlobs() const { return -1; }
  virtual int MaxTopBlobs() const { return -1; }
  virtual bool EqualNumBottomTopBlobs() const { return false; }
  /// When true, the net creates anonymous tops up to the minimum count.
  virtual bool AutoTopBlobs() const { return false; }
  /// Whether force_backward may force gradients into bottom `index` (false
  /// for labels and other non-differentiable inputs).
  virtual bool AllowForceBackward(int bottom_index) const { return true; }

  bool param_propagate_down(int param_id) const;
  void set_param_propagate_down(int param_id, bool value);

  // ---- declarations for the memory planner ----
  /// Whether Backward reads bottom `index`'s data.
  virtual bool BackwardReadsBottomData(int bottom_index) const { return true; }
  /// Whether Backward reads top `index`'s data.
  virtual bool BackwardReadsTopData(int top_index) const { return true; }
  const std::vector<LayerBuffer>& buffers() const { return buffers_; }
  /// A buffer holding a copy of this layer's top 0 as Forward wrote it, saved
  /// for Backward (BatchNorm's normalized output when in place), or nullptr.
  virtual Blob* SavedOutputCopy() { return nullptr; }
  /// Tells the layer that a later layer overwrites its top 0 in place
  /// (the net calls it after SetUp, then reshapes the layer): a Backward
  /// that reads the top's data must keep a copy of it, as BatchNorm does.
  /// Returns whether the layer now keeps more than before.
  virtual bool TopOverwrittenLater() { return false; }
  /// Offers a saved copy of this layer's bottom 0 (the previous in-place
  /// layer's SavedOutputCopy) so the layer can read it in Backward instead of
  /// keeping its own copy; returns whether it took it. The net links them.
  virtual bool ShareSavedInput(Blob* saved) { return false; }

  // ---- fusion (Net::FuseLayers, a net's fuse_layers) ----
  /// Offers `next`, the layer that reads this layer's top 0 next, in place,
  /// to run inside this layer's Forward and Backward (BatchNorm takes the
  /// Scale after it). Taking it, this layer computes `next`'s top and its
  /// params' gradients, reading them through `next`, which keeps owning them.
  /// Returns whether it took it.
  virtual bool Absorb(Layer* next) { return false; }
  /// Marks this layer as absorbed by `absorber`: its Forward, Backward and
  /// Replay do nothing, and it gives up its buffers.
  void set_absorbed_by(const std::string& absorber);
  bool absorbed() const { return !absorbed_by_.empty(); }
  /// The layer that absorbed this one, or empty.
  const std::string& absorbed_by() const { return absorbed_by_; }

  /// Whether Forward may set its tops' shapes (Filter: the items selected;
  /// Python: its reshape() and forward()). The net calls Reshape before each
  /// Forward of such a layer (Caffe calls it before every layer's); where a
  /// top's shape changed, it reshapes each later layer just before that
  /// layer runs in the same pass, and a blob grown past its plan is planned
  /// again at the next pass.
  virtual bool ForwardReshapesTops() const { return false; }

  /// Whether Forward draws random numbers or advances a reader (Dropout,
  /// data layers): an order the planner chooses keeps these layers in
  /// their prototxt order among themselves.
  virtual bool ForwardDraws() const { return false; }

  // ---- read position (data layers; part of a .solverstate) ----
  /// Where a layer that reads a source (Data, ImageData, HDF5Data) reads
  /// next: the first record its Forward has not consumed yet. Fills
  /// `position` (all but net and replica, which the solver sets) and returns
  /// true; false for layers without one.
  virtual bool SaveReadPosition(DataReadPosition* position) const { return false; }
  /// Moves the reader to a position SaveReadPosition gave (a resume): the
  /// next Forward reads the batch it would have read then. Prefetched
  /// batches are dropped and read again.
  virtual void RestoreReadPosition(const DataReadPosition& position) {}

  // ---- recomputation (a net's memory_budget) ----
  /// Whether Forward may run again during backward to recompute tops the
  /// net dropped: from the same bottoms and params it writes the same tops
  /// and saved buffers and changes nothing else (no running statistics, no
  /// random draw, no reader advanced). Off unless a layer says so.
  virtual bool CanReplay() const { return false; }
  /// Whether Replay reads this layer's saved buffers (Dropout's mask)
  /// instead of writing them.
  virtual bool ReplayReadsSavedBuffers() const { return false; }
  /// Runs Forward again to recompute the tops; sums no loss.
  virtual void Replay(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top);

  /// Whether Backward will run: the net decides (a layer outside a net
  /// assumes it will). A layer may skip saving what only its Backward reads.
  void set_runs_backward(bool value) { runs_backward_ = value; }
  bool runs_backward() const { return runs_backward_; }

  // ---- engine and types (engine_decision.hpp) ----
  /// Hands the layer its engine and types, decided by the net before SetUp.
  /// A layer that gets none (built alone, or inside another layer) decides
  /// at SetUp from its context, by the same rule.
  void set_engine(const EngineDecision& decision);
  const EngineDecision& engine() const { return engine_; }
  /// The engine that runs at the current shape: engine().engine, or CAFFE
  /// where that engine has no kernel for this shape (logged at Reshape).
  virtual EngineKind running_engine() const { return engine_.engine; }
  virtual BlobFormats blocked_layouts() const { return BlobFormats::kNone; }
  /// Which of its blobs the layer, as last reshaped, can read and write
  /// channels last (NHWC: Blob::channels_last()): layers whose GPU kernels
  /// take it. A layer running so treats a blob of one channel or one pixel
  /// (kept in Caffe's layout: the same bytes) as channels last too.
  virtual BlobFormats channels_last_layouts() const { return BlobFormats::kNone; }
  /// Which of its blobs the layer, as last reshaped, can keep in its 16-bit
  /// storage type (BFLOAT16 or FLOAT16: engine().types; Blob::storage_type()):
  /// layers whose engine stores 16 bits and runs at this shape. A net stores
  /// a blob in 16 bits when every layer touching it stores that type
  /// (Net::SettleLayouts).
  virtual BlobFormats narrow_blobs() const { return BlobFormats::kNone; }

  void set_context(const Context& context) { context_ = context; }
  const Context& context() const { return context_; }
  /// Set while a net settles its blobs' layouts and types on a GPU
  /// (Net::SettleLayouts): those reshapes are trials, in which engines skip
  /// what they measure (cudnnFind's timing of algorithms) and choose by
  /// heuristics; the net reshapes once more, measuring, when they settle.
  /// A member of its own, not of Context: a data layer's prefetch thread
  /// reads the context while the net settles.
  void set_settling(bool settling) { settling_ = settling; }
  bool settling() const { return settling_; }
  /// Set while StepGraph captures the layer's GPU forward into a CUDA graph:
  /// Forward_gpu then queues device work only, and what it prepares on the
  /// host each step is StageHostInputs' part, which the graph's owner calls
  /// before every replay.
  void set_captured(bool captured) { captured_ = captured; }
  bool captured() const { return captured_; }
  /// The host side of one GPU forward pass of a captured layer, on the
  /// device when it returns (Dropout draws its mask from the layer's stream);
  /// nothing for most layers.
  virtual void StageHostInputs() {}
  /// Whether StageHostInputs does anything.
  virtual bool StagesHostInputs() const { return false; }
  Phase phase() const { return phase_; }
  /// Restarts this layer's random stream (gradient checks and resume).
  void SeedRng(uint32_t seed) { rng_.seed(seed); }
  RandomEngine* rng() { return &rng_; }

 protected:
  virtual void Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) = 0;
  /// Falls back to the CPU code (with one log line per layer type) unless a
  /// layer has a CUDA twin.
  virtual void Forward_gpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top);
  virtual void Backward_cpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                            const std::vector<Blob*>& bottom) = 0;
  virtual void Backward_gpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                            const std::vector<Blob*>& bottom);

  void RegisterBuffer(const std::string& name, Blob* blob, BufferLifetime lifetime);
  /// Whether the net chose cuDNN for this layer.
  bool RunsCudnn() const { return engine_.engine == EngineKind::kCudnn; }
  /// `formats` when the engine decided one 16-bit storage type both ways
  /// and `running` (its kernels run at this shape), else kNone: for
  /// narrow_blobs().
  BlobFormats NarrowBlobsWhen(bool running, BlobFormats formats) const {
    const LayerTypes& t = engine_.types;
    const bool stores = t.forward_storage != FLOAT && t.forward_storage == t.backward_storage;
    return stores && running ? formats : BlobFormats::kNone;
  }
  /// running_engine() of a layer whose DNNL primitives exist at some shapes
  /// only: CAFFE runs where they do not.
  EngineKind RunningWithDnnl(bool dnnl_ready) const {
    return engine_.engine == EngineKind::kDnnl && !dnnl_ready ? EngineKind::kCaffe : engine_.engine;
  }
  /// Throws unless propagate_down[bottom_index] is false: that bottom
  /// (labels, indices: `what`, as the message names it) has no gradient.
  void RefuseGradient(const std::vector<bool>& propagate_down, int bottom_index,
                      const char* what) const;

  LayerParameter layer_param_;
  Phase phase_;
  std::vector<std::shared_ptr<Blob>> blobs_;
  std::vector<bool> param_propagate_down_;
  std::vector<float> loss_;
  Context context_;
  bool settling_ = false;
  bool captured_ = false;
  RandomEngine rng_;
  EngineDecision engine_;

 private:
  void CheckBlobCounts(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) const;
  void SetLossWeights(const std::vector<Blob*>& top);
  /// Forward_cpu or Forward_gpu, as the context's device says.
  void RunForward(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top);
  /// The weighted loss of the tops, summed on the host.
  double HostLoss(const std::vector<Blob*>& top) const;
  void LogCpuFallback() const;

  std::vector<LayerBuffer> buffers_;
  std::string absorbed_by_;
  bool runs_backward_ = true;
  bool engine_decided_ = false;
};

/// @brief A layer whose GPU path is only math calls, written once: its
/// ForwardOnDevice and BackwardOnDevice run on both devices, taking pointers
/// from Blob::data_on(device) and doing their math through
/// util/device_math.hpp or layers/elementwise.hpp on context().device.
/// `Base` is Layer or one of its abstract kinds (NeuronLayer).
template <typename Base>
class OneBodyLayer : public Base {
 public:
  using Base::Base;

 protected:
  virtual void ForwardOnDevice(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) = 0;
  virtual void BackwardOnDevice(const std::vector<Blob*>& top,
                                const std::vector<bool>& propagate_down,
                                const std::vector<Blob*>& bottom) = 0;

  void Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) final {
    ForwardOnDevice(bottom, top);
  }
  void Forward_gpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) final {
    ForwardOnDevice(bottom, top);
  }
  void Backward_cpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob*>& bottom) final {
    BackwardOnDevice(top, propagate_down, bottom);
  }
  void Backward_gpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob*>& bottom) final {
    BackwardOnDevice(top, propagate_down, bottom);
  }
};

}  // namespace demi

#endif  // DEMI_LAYER_HPP_
