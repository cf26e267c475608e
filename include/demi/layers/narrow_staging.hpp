#ifndef DEMI_LAYERS_NARROW_STAGING_HPP_
#define DEMI_LAYERS_NARROW_STAGING_HPP_

// A GPU layer of one bottom and one top whose kernels read and write a
// single 16-bit type (cuDNN's convolutions and pooling take one type for x
// and y) next to a net that stores each blob in FLOAT or in that type
// (BlobFormats::kPerBlob): a FLOAT bottom or top gets a 16-bit stand-in in
// the layer's scratch, converted on the way in and out; a blob already in
// the type is read and written where it is. The same for layouts: where the
// kernels run channels last (NHWC), a side in Caffe's layout is transposed
// through scratch (the net's first convolution reads its input so), and
// the other way round. The CPU twin is oneDNN's reorders around its
// primitives (the DNNL engines do the same there).
#ifndef CPU_ONLY

#include "demi/blob.hpp"
#include "demi/engine_decision.hpp"

namespace demi {

class NarrowStaging {
 public:
  /// Calls register_buffer(name, blob) for each stand-in, for the layer to
  /// pass to Layer::RegisterBuffer (kScratch) at SetUp: each holds its
  /// values in its data memory, empty where nothing is staged.
  template <typename F>
  void ForEachBuffer(F register_buffer) {
    register_buffer("staged_bottom", &bottom_data_);
    register_buffer("staged_bottom_diff", &bottom_diff_);
    register_buffer("staged_top", &top_data_);
    register_buffer("staged_top_diff", &top_diff_);
  }

  /// Sizes the stand-ins for the current shapes. The kernels compute in the
  /// 16-bit type `types` (the layer's engine decision) store both ways where
  /// the bottom or the top is stored in it (the net stores a blob so only
  /// where the layer allows it), else in FLOAT, staging nothing.
  /// With `may_run_channels_last`, the kernels run channels last where they
  /// run in 16 bits and the bottom or the top is channels last
  /// (Blob::channels_last()).
  void Reshape(const LayerTypes& types, const Blob& bottom, const Blob& top,
               bool may_run_channels_last = false);
  /// The type the kernels compute in, as last reshaped.
  Type type() const { return type_; }
  /// Whether the kernels read and write channels last, as last reshaped.
  bool channels_last() const { return channels_last_; }

  // Device pointers in type(), valid until the layer's call returns.
  /// x: the bottom's data, converted into its stand-in where staged.
  const void* BottomData(const Blob& bottom);
  /// y for a forward to write; FinishTopData stores it into a FLOAT top.
  void* MutableTopData(Blob* top);
  void FinishTopData(Blob* top);
  /// y again, for a backward that reads it.
  const void* TopData(const Blob& top);
  /// dy, converted where staged.
  const void* TopDiff(const Blob& top);
  /// dx for a backward to write; FinishBottomDiff stores it into a FLOAT bottom.
  void* MutableBottomDiff(Blob* bottom);
  void FinishBottomDiff(Blob* bottom);

 private:
  /// Whether `blob`'s stand-in holds it: another type, or another layout
  /// (a blob of one channel or one pixel is the same bytes in both).
  bool Staged(const Blob& blob) const;
  /// Converts n = blob.count() values of `blob` from (from, from_last) to
  /// (to, to_last).
  void Convert(const Blob& blob, Type from, bool from_last, const void* x, Type to, bool to_last,
               void* y) const;
  /// Into the kernels' type and layout from the blob's, and back.
  void In(const Blob& blob, const void* x, void* y) const;
  void Out(const Blob& blob, const void* x, void* y) const;

  Type type_ = FLOAT;
  bool channels_last_ = false;
  Blob bottom_data_, bottom_diff_, top_data_, top_diff_;
};

}  // namespace demi

#endif  // CPU_ONLY
#endif  // DEMI_LAYERS_NARROW_STAGING_HPP_
