#include "demi/param_block.hpp"

#include "demi/util/device.hpp"

namespace demi {

namespace {

constexpr int64_t kAlignFloats = static_cast<int64_t>(kHostAlignment / sizeof(float));

int64_t AlignUp(int64_t floats) {
  return (floats + kAlignFloats - 1) / kAlignFloats * kAlignFloats;
}

}  // namespace

void ParamBlock::Bind(const std::vector<Blob*>& params) {
  CHECK(segments_.empty()) << "a ParamBlock is bound once";
  std::vector<std::shared_ptr<SyncedMemory>> data, diff;
  std::vector<int64_t> offsets;
  for (Blob* param : params) {
    floats_ = AlignUp(floats_);
    segments_.push_back({floats_, param->count()});
    offsets.push_back(floats_);
    data.push_back(param->data());
    diff.push_back(param->diff());
    floats_ += param->count();
  }
  floats_ = AlignUp(floats_);
  data_.Bind(data, offsets, floats_);
  diff_.Bind(diff, offsets, floats_);
}

void ParamBlock::BindCopies(const std::vector<std::shared_ptr<Blob>>& blobs, int sets,
                            ViewBlock* block) const {
  CHECK_EQ(blobs.size(), segments_.size() * static_cast<size_t>(sets));
  std::vector<std::shared_ptr<SyncedMemory>> memories;
  std::vector<int64_t> offsets;
  for (size_t i = 0; i < blobs.size(); ++i) {
    const ParamSegment& segment = segments_[i % segments_.size()];
    CHECK_EQ(blobs[i]->count(), segment.count);
    memories.push_back(blobs[i]->data());
    offsets.push_back(static_cast<int64_t>(i / segments_.size()) * floats_ + segment.offset);
  }
  block->Bind(memories, offsets, floats_ * sets);
}

}  // namespace demi
