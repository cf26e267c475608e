#include "demi/layers/narrow_staging.hpp"

#ifndef CPU_ONLY

#include "demi/util/convert_gpu.hpp"

namespace demi {

namespace {

/// `stand_in` shaped like `blob` in `type`, or emptied.
void Size(bool staged, Type type, const Blob& blob, Blob* stand_in) {
  stand_in->set_storage_type(type);
  stand_in->Reshape(staged ? blob.shape() : std::vector<int64_t>{0});
}

}  // namespace

void NarrowStaging::Reshape(const LayerTypes& types, const Blob& bottom, const Blob& top) {
  const Type narrow = types.forward_storage;
  const bool stores = narrow != FLOAT && narrow == types.backward_storage;
  type_ =
      stores && (bottom.storage_type() == narrow || top.storage_type() == narrow) ? narrow : FLOAT;
  Size(Staged(bottom), type_, bottom, &bottom_data_);
  Size(Staged(bottom), type_, bottom, &bottom_diff_);
  Size(Staged(top), type_, top, &top_data_);
  Size(Staged(top), type_, top, &top_diff_);
}

const void* NarrowStaging::BottomData(const Blob& bottom) {
  if (!Staged(bottom)) return bottom.data()->gpu_data();
  GpuConvert(bottom.count(), FLOAT, bottom.gpu_data(), type_,
             bottom_data_.data()->mutable_gpu_data());
  return bottom_data_.data()->gpu_data();
}

void* NarrowStaging::MutableTopData(Blob* top) {
  return Staged(*top) ? top_data_.data()->mutable_gpu_data() : top->data()->mutable_gpu_data();
}

void NarrowStaging::FinishTopData(Blob* top) {
  if (!Staged(*top)) return;
  GpuConvert(top->count(), type_, top_data_.data()->gpu_data(), FLOAT, top->mutable_gpu_data());
}

const void* NarrowStaging::TopData(const Blob& top) {
  if (!Staged(top)) return top.data()->gpu_data();
  GpuConvert(top.count(), FLOAT, top.gpu_data(), type_, top_data_.data()->mutable_gpu_data());
  return top_data_.data()->gpu_data();
}

const void* NarrowStaging::TopDiff(const Blob& top) {
  if (!Staged(top)) return top.diff()->gpu_data();
  GpuConvert(top.count(), FLOAT, top.gpu_diff(), type_, top_diff_.data()->mutable_gpu_data());
  return top_diff_.data()->gpu_data();
}

void* NarrowStaging::MutableBottomDiff(Blob* bottom) {
  return Staged(*bottom) ? bottom_diff_.data()->mutable_gpu_data()
                         : bottom->diff()->mutable_gpu_data();
}

void NarrowStaging::FinishBottomDiff(Blob* bottom) {
  if (!Staged(*bottom)) return;
  GpuConvert(bottom->count(), type_, bottom_diff_.data()->gpu_data(), FLOAT,
             bottom->mutable_gpu_diff());
}

}  // namespace demi

#endif  // CPU_ONLY
