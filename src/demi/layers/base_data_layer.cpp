#include "demi/layers/base_data_layer.hpp"

#include <algorithm>
#include <opencv2/core.hpp>

#include "demi/data/byte_pixels.hpp"
#include "demi/util/device.hpp"
#include "demi/util/math.hpp"
#include "demi/util/threads.hpp"

namespace demi {

namespace {

constexpr int64_t kLoggedSkips = 20;

}  // namespace

BaseDataLayer::~BaseDataLayer() {
  StopPrefetch();
  // type() is no longer callable here: the name was kept at setup.
  if (skipped_ > 0) {
    LOG(WARNING) << owner_ << ": skipped " << skipped_ << " bad record(s) in total";
  }
}

std::string BaseDataLayer::Owner() const {
  return StrCat(type(), " layer '", layer_param_.name(), "'");
}

void BaseDataLayer::set_decode_threads(int threads) {
  CHECK(!prefetcher_) << "set_decode_threads must come before SetUp";
  DEMI_CHECK(threads >= 1, Owner(), ": decode threads must be at least 1, got ", threads);
  decode_threads_ = threads;
}

int BaseDataLayer::decode_threads() const { return pool_ ? pool_->num_threads() : decode_threads_; }

std::string BaseDataLayer::DecodeThreadsText() const {
  if (decode_threads_ > 0) return StrCat(decode_threads_, " decode thread(s)");
  return StrCat("decode threads: its prefetch thread and ", pool_->num_threads() - 1,
                " helper(s) shared by the process's data layers");
}

void BaseDataLayer::LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  owner_ = Owner();
  transformer_ = std::make_unique<Transformer>(layer_param_.transform_param(), phase_, Owner());
  example_shape_ = DataLayerSetUp();
  CHECK_EQ(example_shape_.size(), 3u);
  DEMI_CHECK(batch_size_ > 0, Owner(), ": batch_size must be positive, got ", batch_size_);
  example_size_ = example_shape_[0] * example_shape_[1] * example_shape_[2];
  byte_batches_ = transformer_->DefersNormalization();
  if (byte_batches_) {
    normalization_ = transformer_->Normalization(example_shape_[0]);
    device_mean_.Reshape({example_shape_[0]});
    std::copy(normalization_.mean.begin(), normalization_.mean.end(),
              device_mean_.mutable_cpu_data());
  }
  if (phase_ == TRAIN && context().num_replicas > 1) {
    shard_ = context().replica;
    num_shards_ = context().num_replicas;
    CHECK(shard_ >= 0 && shard_ < num_shards_);
    LOG(INFO) << Owner() << ": replica " << shard_ << " of " << num_shards_ << " reads blocks "
              << shard_ << ", " << shard_ + num_shards_ << ", " << shard_ + 2 * num_shards_
              << ", ... of " << batch_size_ << " records";
  }
  const int depth = static_cast<int>(layer_param_.data_param().prefetch());
  DEMI_CHECK(depth >= 1, Owner(), ": data_param prefetch must be at least 1, got ", depth);
  errors_.resize(batch_size_);
  if (layer_param_.data_param().has_threads()) {
    set_decode_threads(static_cast<int>(layer_param_.data_param().threads()));
  }
  if (decode_threads_ > 0) {
    pool_ = std::make_shared<WorkerPool>(decode_threads_);
  } else {
    // The GPUs this process drives: its replicas, as far as it has devices.
    const bool gpu = context().device == Device::kGPU;
    const int replicas = gpu ? std::min(context().num_replicas, std::max(1, DeviceCount())) : 1;
    pool_ = SharedWorkerPool(DefaultDecodeThreads(gpu, DefaultThreads(), replicas));
  }
  consumed_ = StreamPosition();
  prefetcher_ = std::make_unique<Prefetcher>(
      depth, [this](Batch* batch, const std::atomic<bool>& stop) { FillBatch(batch, stop); });
  prefetcher_->Start();
  LOG(INFO) << Owner() << ": batches of " << batch_size_ << " x " << ShapeString(example_shape_)
            << (byte_batches_ ? " bytes" : " floats") << ", " << depth << " prefetched, "
            << DecodeThreadsText();
}

void BaseDataLayer::Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  top[0]->Reshape({batch_size_, example_shape_[0], example_shape_[1], example_shape_[2]});
  if (top.size() > 1) top[1]->Reshape({batch_size_});
}

void BaseDataLayer::StopPrefetch() {
  if (prefetcher_) prefetcher_->Stop();
}

DataReadPosition BaseDataLayer::StreamPosition() const {
  DataReadPosition position;
  position.set_layer(layer_param_.name());
  position.set_type(type());
  position.set_num_replicas(num_shards_);
  position.set_replica(shard_);
  position.set_stream_position(stream_position_);
  position.set_skipped_records(skipped_);
  SaveSourcePosition(&position);
  return position;
}

bool BaseDataLayer::SaveReadPosition(DataReadPosition* position) const {
  *position = consumed_;
  return true;
}

void BaseDataLayer::RestoreReadPosition(const DataReadPosition& position) {
  DEMI_CHECK(position.type() == type(), Owner(), ": the saved read position is a ", position.type(),
             " layer's");
  DEMI_CHECK(position.stream_position() >= 0 && position.epoch() >= 0 && position.index() >= 0,
             Owner(), ": the saved read position (stream position ", position.stream_position(),
             ", epoch ", position.epoch(), ", index ", position.index(), ") is corrupt");
  prefetcher_->Stop();
  stream_position_ = position.stream_position();
  skipped_ = position.skipped_records();
  consecutive_bad_ = 0;
  RestoreSourcePosition(position);
  consumed_ = StreamPosition();
  prefetcher_->Start();
}

void BaseDataLayer::FillBatch(Batch* batch, const std::atomic<bool>& stop) {
  // On the prefetch thread: pin the batch for this layer's GPU (device.hpp).
  if (context().device == Device::kGPU) SetCurrentDevice(context().device_id);
  if (byte_batches_) {
    batch->bytes.resize(batch_size_ * example_size_);
    batch->float_rows.assign(batch_size_, 0);
  } else {
    batch->data.resize(batch_size_ * example_size_);
  }
  batch->label.resize(batch_size_);
  batch->indices.resize(batch_size_);
  batch->epochs.resize(batch_size_);
  // Rows [0, filled) hold good examples. Each round reads the next records
  // into the other rows, loads them in parallel, and moves the good ones up,
  // so a batch is the next batch_size good records in stream order.
  int64_t filled = 0;
  while (filled < batch_size_) {
    for (int64_t row = filled; row < batch_size_; ++row) {
      if (stop) return;
      ReadOwnExample(row, &batch->indices[row], &batch->epochs[row]);
    }
    pool_->Run(batch_size_ - filled, [&](int64_t begin, int64_t end) {
      for (int64_t row = filled + begin; row < filled + end; ++row) {
        if (stop) return;
        LoadRow(batch, row, byte_batches_);
      }
    });
    if (stop) return;
    // A byte batch's records of floats, again into float rows (rare: a
    // float_data record in a database of bytes).
    for (int64_t row = filled; byte_batches_ && row < batch_size_; ++row) {
      if (!batch->float_rows[row] || !errors_[row].empty()) continue;
      batch->data.resize(batch_size_ * example_size_);
      LoadRow(batch, row, false);
    }
    const int64_t first = filled;
    for (int64_t row = first; row < batch_size_; ++row) {
      if (!errors_[row].empty()) {
        const std::string message = StrCat(Owner(), ": ", DescribeExample(row), " ", errors_[row]);
        DEMI_CHECK(skip_bad_records_, message, "; ", SkipHint());
        const int64_t skipped = ++skipped_;
        // Every skip up to kLoggedSkips, then one line a thousand.
        if (skipped <= kLoggedSkips || skipped % 1000 == 0) {
          LOG(WARNING) << message << "; skipped (" << skipped << " bad record(s) so far"
                       << (skipped == kLoggedSkips ? "; from now on one line per 1000 skips)"
                                                   : ")");
        }
        DEMI_CHECK(++consecutive_bad_ < SourceSize(), Owner(), ": every one of the ", SourceSize(),
                   " records of its source is bad; nothing to read");
        continue;
      }
      consecutive_bad_ = 0;
      if (row != filled) MoveRow(batch, row, filled);
      ++filled;
    }
  }
  batch->next = StreamPosition();
  // To the GPU now, on this thread's stream: the copy overlaps the steps
  // before the one that takes the batch.
  if (byte_batches_ && context().device == Device::kGPU) batch->UploadBytes();
}

void BaseDataLayer::LoadRow(Batch* batch, int64_t row, bool as_bytes) {
  errors_[row].clear();
  RandomEngine engine = RecordEngine(context().seed, batch->epochs[row], batch->indices[row]);
  ExampleOut out;
  if (as_bytes) {
    out.bytes = batch->bytes.data() + row * example_size_;
  } else {
    out.floats = batch->data.data() + row * example_size_;
  }
  try {
    const bool wrote = LoadExample(row, &engine, out, &batch->label[row]);
    if (byte_batches_) batch->float_rows[row] = as_bytes && wrote ? 0 : 1;
  } catch (const BadRecordError& error) {
    errors_[row] = error.what();
  } catch (const cv::Exception& error) {
    errors_[row] = StrCat("failed in OpenCV: ", error.what());
  }
}

void BaseDataLayer::MoveRow(Batch* batch, int64_t from, int64_t to) const {
  const bool floats = !byte_batches_ || batch->float_rows[from];
  if (floats) {
    std::copy_n(batch->data.data() + from * example_size_, example_size_,
                batch->data.data() + to * example_size_);
  } else {
    std::copy_n(batch->bytes.data() + from * example_size_, example_size_,
                batch->bytes.data() + to * example_size_);
  }
  if (byte_batches_) batch->float_rows[to] = batch->float_rows[from];
  batch->label[to] = batch->label[from];
  batch->indices[to] = batch->indices[from];
  batch->epochs[to] = batch->epochs[from];
}

void BaseDataLayer::ReadOwnExample(int64_t row, int64_t* index, int64_t* epoch) {
  while ((stream_position_ / batch_size_) % num_shards_ != shard_) {
    SkipExample();
    ++stream_position_;
  }
  ReadExample(row, index, epoch);
  ++stream_position_;
}

void BaseDataLayer::Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  Batch* batch = prefetcher_->Next();
  float* data = top[0]->mutable_cpu_data();
  if (byte_batches_) {
    NormalizeBatch(normalization_, batch_size_, example_size_ / example_shape_[0],
                   batch->bytes.data(), data);
    for (int64_t row = 0; row < batch_size_; ++row) {
      if (!batch->float_rows[row]) continue;
      std::copy_n(batch->data.data() + row * example_size_, example_size_,
                  data + row * example_size_);
    }
  } else {
    Copy(top[0]->count(), batch->data.data(), data);
  }
  if (top.size() > 1) Copy(top[1]->count(), batch->label.data(), top[1]->mutable_cpu_data());
  consumed_.Swap(&batch->next);
  prefetcher_->Release(batch);
}

#ifndef CPU_ONLY
void BaseDataLayer::Forward_gpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  Batch* batch = prefetcher_->Next();
  // The batch is pinned: the copies run asynchronously, and the prefetcher
  // refills the batch only once they are done (batch->copied).
  float* data = top[0]->mutable_gpu_data();
  const auto row_bytes = static_cast<size_t>(example_size_) * sizeof(float);
  if (byte_batches_) {
    // Its bytes are on the device, or on their way (FillBatch).
    batch->uploaded->MakeStreamWait();
    const auto* bytes = static_cast<const uint8_t*>(batch->device_bytes.gpu_data());
    NormalizeBytesGpu(device_mean_.gpu_data(), normalization_.scale, batch_size_, example_shape_[0],
                      example_size_ / example_shape_[0], bytes, data);
    for (int64_t row = 0; row < batch_size_; ++row) {
      if (!batch->float_rows[row]) continue;
      CopyHostToDevice(data + row * example_size_, batch->data.data() + row * example_size_,
                       row_bytes);
    }
  } else {
    CopyHostToDevice(data, batch->data.data(), static_cast<size_t>(batch_size_) * row_bytes);
  }
  if (top.size() > 1) {
    CopyHostToDevice(top[1]->mutable_gpu_data(), batch->label.data(),
                     static_cast<size_t>(top[1]->count()) * sizeof(float));
  }
  batch->MarkCopied();
  consumed_.Swap(&batch->next);
  prefetcher_->Release(batch);
}
#endif

}  // namespace demi
