#include "demi/view_block.hpp"

#include <cstring>

#include "demi/common.hpp"

namespace demi {

void ViewBlock::Bind(const std::vector<std::shared_ptr<SyncedMemory>>& memories,
                     const std::vector<int64_t>& offsets, int64_t floats) {
  CHECK_EQ(memories.size(), offsets.size());
  CHECK(views_.empty()) << "a ViewBlock is bound once";
  floats_ = floats;
  arena_->Reserve(bytes());
  std::vector<uint8_t> saved;
  for (size_t i = 0; i < memories.size(); ++i) {
    SyncedMemory& memory = *memories[i];
    const size_t size = memory.size();
    CHECK_LE(offsets[i] * sizeof(float) + size, bytes()) << "view past the block's end";
    // Binding drops the content: keep what the memory holds (initialised
    // params, loaded history); untouched memories (fresh diffs) stay
    // unallocated until first used.
    const bool has_content = memory.head() != SyncedMemory::UNINITIALIZED;
    if (has_content) {
      const auto* bytes_now = static_cast<const uint8_t*>(memory.cpu_data());
      saved.assign(bytes_now, bytes_now + size);
    }
    memory.BindToArena(arena_.get(), static_cast<size_t>(offsets[i]) * sizeof(float), size);
    if (has_content && size > 0) std::memcpy(memory.mutable_cpu_data(), saved.data(), size);
    views_.push_back(memories[i]);
  }
}

bool ViewBlock::ReleaseIfUnused() {
  for (const auto& view : views_) {
    if (view.use_count() > 1) return false;
  }
  views_.clear();
  arena_ = std::make_unique<Arena>(true);
  floats_ = 0;
  return true;
}

void ViewBlock::CheckViewsInBlock() const {
  for (const auto& view : views_) {
    DEMI_CHECK(view->arena() == arena_.get(),
               "a param left its contiguous block (was a param blob reshaped to a larger size?); "
               "params must keep their shapes after the net is built");
  }
}

const float* ViewBlock::cpu() {
  CheckViewsInBlock();
  for (const auto& view : views_) view->cpu_data();
  return reinterpret_cast<const float*>(arena_->host_base());
}

float* ViewBlock::mutable_cpu() {
  CheckViewsInBlock();
  for (const auto& view : views_) view->mutable_cpu_data();
  return reinterpret_cast<float*>(arena_->host_base());
}

const float* ViewBlock::gpu() {
  CheckViewsInBlock();
  for (const auto& view : views_) view->gpu_data();
  return reinterpret_cast<const float*>(arena_->device_base());
}

float* ViewBlock::mutable_gpu() {
  CheckViewsInBlock();
  for (const auto& view : views_) view->mutable_gpu_data();
  return reinterpret_cast<float*>(arena_->device_base());
}

}  // namespace demi
