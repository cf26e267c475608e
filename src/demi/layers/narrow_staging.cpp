#include "demi/layers/narrow_staging.hpp"

#ifndef CPU_ONLY

#include "demi/util/channel_blocks.hpp"
#include "demi/util/convert_gpu.hpp"

namespace demi {

namespace {

/// `stand_in` shaped like `blob` in `type`, or emptied.
void Size(bool staged, Type type, const Blob& blob, Blob* stand_in) {
  stand_in->set_storage_type(type);
  stand_in->Reshape(staged ? blob.shape() : std::vector<int64_t>{0});
}

/// A blob whose bytes are the same in both layouts.
bool EitherLayout(const Blob& blob) { return blob.num_axes() != 4 || SameBytesChannelsLast(blob); }

}  // namespace

void NarrowStaging::Reshape(const LayerTypes& types, const Blob& bottom, const Blob& top,
                            bool may_run_channels_last) {
  const Type narrow = types.forward_storage;
  const bool stores = narrow != FLOAT && narrow == types.backward_storage;
  type_ =
      stores && (bottom.storage_type() == narrow || top.storage_type() == narrow) ? narrow : FLOAT;
  channels_last_ =
      may_run_channels_last && type_ != FLOAT && (bottom.channels_last() || top.channels_last());
  Size(Staged(bottom), type_, bottom, &bottom_data_);
  Size(Staged(bottom), type_, bottom, &bottom_diff_);
  Size(Staged(top), type_, top, &top_data_);
  Size(Staged(top), type_, top, &top_diff_);
}

bool NarrowStaging::Staged(const Blob& blob) const {
  return blob.storage_type() != type_ ||
         (blob.channels_last() != channels_last_ && !EitherLayout(blob));
}

void NarrowStaging::Convert(const Blob& blob, Type from, bool from_last, const void* x, Type to,
                            bool to_last, void* y) const {
  if (from_last == to_last || EitherLayout(blob)) {
    GpuConvert(blob.count(), from, x, to, y);
    return;
  }
  GpuConvertLayout(blob.shape(0), blob.shape(1), blob.count(2), from, x, to, y, to_last);
}

void NarrowStaging::In(const Blob& blob, const void* x, void* y) const {
  Convert(blob, blob.storage_type(), blob.channels_last(), x, type_, channels_last_, y);
}

void NarrowStaging::Out(const Blob& blob, const void* x, void* y) const {
  Convert(blob, type_, channels_last_, x, blob.storage_type(), blob.channels_last(), y);
}

const void* NarrowStaging::BottomData(const Blob& bottom) {
  if (!Staged(bottom)) return bottom.data()->gpu_data();
  In(bottom, bottom.data()->gpu_data(), bottom_data_.data()->mutable_gpu_data());
  return bottom_data_.data()->gpu_data();
}

void* NarrowStaging::MutableTopData(Blob* top) {
  return Staged(*top) ? top_data_.data()->mutable_gpu_data() : top->data()->mutable_gpu_data();
}

void NarrowStaging::FinishTopData(Blob* top) {
  if (!Staged(*top)) return;
  Out(*top, top_data_.data()->gpu_data(), top->data()->mutable_gpu_data());
}

const void* NarrowStaging::TopData(const Blob& top) {
  if (!Staged(top)) return top.data()->gpu_data();
  In(top, top.data()->gpu_data(), top_data_.data()->mutable_gpu_data());
  return top_data_.data()->gpu_data();
}

const void* NarrowStaging::TopDiff(const Blob& top) {
  if (!Staged(top)) return top.diff()->gpu_data();
  In(top, top.diff()->gpu_data(), top_diff_.data()->mutable_gpu_data());
  return top_diff_.data()->gpu_data();
}

void* NarrowStaging::MutableBottomDiff(Blob* bottom) {
  return Staged(*bottom) ? bottom_diff_.data()->mutable_gpu_data()
                         : bottom->diff()->mutable_gpu_data();
}

void NarrowStaging::FinishBottomDiff(Blob* bottom) {
  if (!Staged(*bottom)) return;
  Out(*bottom, bottom_diff_.data()->gpu_data(), bottom->diff()->mutable_gpu_data());
}

}  // namespace demi

#endif  // CPU_ONLY
