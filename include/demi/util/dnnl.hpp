#ifndef DEMI_UTIL_DNNL_HPP_
#define DEMI_UTIL_DNNL_HPP_

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <oneapi/dnnl/dnnl.hpp>
#include <optional>
#include <string>
#include <vector>

#include "demi/blob.hpp"
#include "demi/proto/demi.pb.h"

namespace demi {

/// The CPU engine every DNNL layer uses (one per process).
const dnnl::engine& DnnlEngine();
/// This thread's stream on it (replica threads each have their own).
dnnl::stream& DnnlStream();

/// The dense row-major layout of `shape`: Caffe's NCHW (or N x C, or one
/// axis for a bias), of floats unless `type` says otherwise.
dnnl::memory::desc DenseDesc(const std::vector<int64_t>& shape,
                             dnnl::memory::data_type type = dnnl::memory::data_type::f32);

/// The oneDNN type a layer's math type (engine_decision.hpp) reads its
/// inputs in: bf16 for BFLOAT16, else f32.
dnnl::memory::data_type DnnlMathType(Type math);

/// Whether oneDNN computes in bfloat16 on this CPU (its bf16 convolutions
/// need AVX-512; AVX512_BF16 makes them fast). Where it does not, BFLOAT16
/// is a storage type, as FLOAT16 is: blobs hold 16 bits, layers compute in
/// FLOAT (engine_decision.cpp's table says which).
bool DnnlComputesBfloat16();

/// Whether a DNNL layer widens blobs of `storage` into FLOAT around a FLOAT
/// primitive (in the blob's own layout, by our loops): FLOAT16 always, and
/// BFLOAT16 where oneDNN does not compute in it. oneDNN's kernels and
/// reorders for these types are its reference code there, tens of times
/// slower than the primitive they feed.
bool DnnlWidens(Type storage);

/// The channel block of oneDNN's preferred activation layout on this CPU
/// (16 with AVX-512, 8 with AVX2: nChw16c, nChw8c), 1 if it prefers none.
int DnnlChannelBlock();

/// Whether oneDNN's convolutions of blobs stored in `storage` read and write
/// channels last (NHWC) on this CPU: BFLOAT16 where Intel AMX computes it.
/// Nets then store their blobs channels last (Net::ChooseChannelsLast), as
/// on a GPU, instead of reordering around every convolution.
bool DnnlPrefersChannelsLast(Type storage);

/// Tests: DnnlPrefersChannelsLast answers `prefers` for every 16-bit type
/// (false for FLOAT) while this lives, on any CPU.
class ScopedDnnlChannelsLast {
 public:
  explicit ScopedDnnlChannelsLast(bool prefers);
  ~ScopedDnnlChannelsLast();
  ScopedDnnlChannelsLast(const ScopedDnnlChannelsLast&) = delete;
  ScopedDnnlChannelsLast& operator=(const ScopedDnnlChannelsLast&) = delete;

 private:
  int previous_;
};

/// The oneDNN type of elements stored as `storage`.
dnnl::memory::data_type DnnlStorageType(Type storage);
/// The oneDNN type of `blob`'s elements (Blob::storage_type()).
dnnl::memory::data_type DnnlStorageType(const Blob& blob);

/// `desc`'s layout with elements of `type`.
dnnl::memory::desc WithDataType(const dnnl::memory::desc& desc, dnnl::memory::data_type type);

/// The layout `blob` holds, in its storage type: DenseDesc of its shape, or
/// the channel-blocked layout of Blob::channel_block().
dnnl::memory::desc BlobDesc(const Blob& blob);

/// The layout of an element-wise layer's blob: BlobDesc when it is
/// channel-blocked, else one flat axis of count() (any shape, scalars too).
dnnl::memory::desc FlatDesc(const Blob& blob);

/// Attributes every DNNL primitive of ours is made with: the scratchpad is
/// user-managed, so it lives in a planned layer buffer and oneDNN allocates
/// nothing while a net runs.
dnnl::primitive_attr UserScratchpadAttr();

/// Runs `primitive` on this thread's stream with `args` ({DNNL_ARG_*,
/// memory handle}), without the per-call map of the C++ execute().
void DnnlExecute(const dnnl::primitive& primitive, std::initializer_list<dnnl_exec_arg_t> args);
/// The same with arguments built beforehand (a count known at Reshape).
void DnnlExecute(const dnnl::primitive& primitive, const std::vector<dnnl_exec_arg_t>& args);

/// A memory object for `desc` whose data handle is set per call.
dnnl::memory UnboundMemory(const dnnl::memory::desc& desc);
/// Points `memory` at `data` (a const pointer for inputs oneDNN only reads),
/// of the memory's type: a blob's bytes (Blob::data()->cpu_data()) whatever
/// its storage type.
void Bind(const dnnl::memory& memory, const void* data);

/// A layer buffer holding the planner-placed bytes of `blob`, sized for
/// `desc`, with a memory object on it: a scratchpad, or the workspace a
/// forward primitive leaves for its backward.
struct DnnlScratch {
  Blob blob;
  dnnl::memory memory;
  /// Sizes the blob for the largest of `descs`, the scratchpads (or the
  /// workspace) of the primitives that share it (none, or all empty, leaves
  /// it empty).
  void Reshape(std::initializer_list<dnnl::memory::desc> descs = {});
  /// The memory object pointed at the blob's (arena) bytes.
  const dnnl::memory& Bound();
};

/// What the DNNL engine of every layer keeps beside its own primitives and
/// buffers: whether the primitives exist for the current shapes, and the
/// scratchpad they share. A layer's DnnlState derives from it.
struct DnnlLayerState {
  bool ready = false;  ///< the primitives exist for the current shapes
  DnnlScratch scratchpad;

  /// Begins a Reshape: not ready, and the scratchpad and the layer's own
  /// planned `buffers` emptied until the new primitives size them.
  void Reset(std::initializer_list<Blob*> buffers = {});
  /// Runs `primitive` with `args` and the scratchpad.
  void Execute(const dnnl::primitive& primitive, std::initializer_list<dnnl_exec_arg_t> args);
};

/// Logs that the DNNL engine chosen for the layer of `param` has no kernel
/// for its current shapes, and why; the CAFFE engine runs at those shapes.
void LogDnnlFallback(const LayerParameter& param, const std::string& reason);

/// Makes a layer's primitives with `build`, which throws dnnl::error where
/// oneDNN has none for the current shapes. Then it logs, for the layer of
/// `param`, that the CAFFE engine runs because "oneDNN has no `what` (its
/// reason)", and returns false; else true.
bool TryDnnl(const LayerParameter& param, const std::string& what,
             const std::function<void()>& build);

/// The DNNL state of a layer with one forward primitive and the backward
/// primitive that gives its bottom's gradient.
struct DnnlForwardBackward : DnnlLayerState {
  dnnl::primitive forward, backward;

  /// Keeps the primitives of `forward_pd` and `backward_pd` and sizes the
  /// scratchpad for both.
  void Set(const dnnl::primitive_desc& forward_pd, const dnnl::primitive_desc& backward_pd);
};

/// The DNNL state of an activation whose backward needs only the output
/// (dx from y and dy: ReLU, softmax). Its four tensors share the blobs'
/// layout, so the primitives run on the blobs' memory, in place where the
/// layer is.
struct DnnlActivation : DnnlForwardBackward {
  /// DnnlForwardBackward::Set for primitives whose tensors all have the
  /// layout `data`.
  void Set(const dnnl::primitive_desc& forward_pd, const dnnl::primitive_desc& backward_pd,
           const dnnl::memory::desc& data);
  /// y = f(x).
  void Forward(const void* x, void* y);
  /// dx from y = f(x) and dy.
  void Backward(const void* y, const void* dy, void* dx);

 private:
  // One layout for all four: in place they are two pairs of one memory.
  dnnl::memory src_, dst_, diff_dst_, diff_src_;
};

/// One side of a primitive in the layout oneDNN chose for it, beside the
/// tensor's Caffe layout (dense, `user`). When the two differ the data is
/// reordered through a layer buffer the planner places; when they agree the
/// primitive reads or writes the user's memory directly.
class DnnlTensor {
 public:
  /// Sets both layouts and makes the reorders between them; `buffer` (a
  /// layer buffer, possibly shared by several tensors used one after
  /// another) grows to hold the chosen layout. `own_buffer` uses the buffer
  /// even when the layouts agree (for results added to the user's).
  void Reshape(const dnnl::memory::desc& layout, const dnnl::memory::desc& user, Blob* buffer,
               bool own_buffer = false);
  /// The primitive's input: `user` data, reordered into the buffer if needed
  /// (`user` points to elements of the user layout's type, as in Bind).
  const dnnl::memory& In(const void* user);
  /// The primitive's output memory: the buffer, or `user` itself.
  const dnnl::memory& Out(void* user);
  /// After the primitive wrote Out(user): moves the buffer into `user`;
  /// `accumulate` adds to what `user` holds instead of overwriting it.
  void Finish(void* user, bool accumulate = false);

 private:
  const dnnl::memory& Buffer();

  bool reorder_ = false;
  /// FLOAT16 or BFLOAT16 where the layouts differ only in type, the user's
  /// 16 bits against FLOAT: converted by our loops (F16C, AVX-512 or a
  /// shift), not oneDNN's reference reorder (40x slower); else FLOAT.
  Type widened_ = FLOAT;
  int64_t elements_ = 0;
  Blob* buffer_ = nullptr;
  dnnl::memory user_memory_, buffer_memory_;
  dnnl::reorder to_layout_, to_user_, add_to_user_;
};

/// The DNNL state of a layer whose forward primitive leaves its backward a
/// workspace (pooling's argmax, LRN's scales): the tensors of both passes,
/// each in its primitive's layout, and the saved workspace.
struct DnnlSavingForward : DnnlForwardBackward {
  DnnlTensor src, dst, diff_dst, diff_src;
  DnnlScratch workspace;  ///< what backward needs of forward (saved)

  /// Where the layer sets them (Recompute), backward makes the workspace
  /// anew, running forward again from src with its top written into the
  /// buffer, so that the workspace is scratch instead of held from forward
  /// to backward.
  struct Recompute {
    dnnl::memory top;  ///< forward's dst layout
    Blob* top_buffer;  ///< a layer buffer holding it, unused by then
  };
  std::optional<Recompute> recompute;

  /// top = f(bottom) through src and dst, writing the workspace.
  void Forward(const Blob& bottom, Blob* top);
  /// The same on the blobs' bytes (of the user layouts given to the tensors).
  void Forward(const void* x, void* y);
  /// bottom's gradient from top's through diff_dst and diff_src, with the
  /// forward's workspace; `src` too where the primitive reads the bottom
  /// (always where the workspace is recomputed).
  void Backward(const Blob& top, Blob* bottom, bool reads_src);
  /// The same on the bytes: x (the bottom's data) null where not read.
  void Backward(const void* x, const void* dy, void* dx);
};

/// Grows `blob` (a layer buffer of floats) to hold at least `bytes`.
void ReserveBytes(Blob* blob, size_t bytes);

}  // namespace demi

#endif  // DEMI_UTIL_DNNL_HPP_
