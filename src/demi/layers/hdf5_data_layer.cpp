#include "demi/layers/hdf5_data_layer.hpp"

#include <algorithm>
#include <numeric>

#include "demi/data/transformer.hpp"
#include "demi/layer_registry.hpp"
#include "demi/util/device.hpp"
#include "demi/util/math.hpp"

namespace demi {

HDF5DataLayer::~HDF5DataLayer() {
  if (prefetcher_) prefetcher_->Stop();
}

std::string HDF5DataLayer::Owner() const {
  return StrCat("HDF5Data layer '", layer_param_.name(), "'");
}

std::string HDF5DataLayer::DescribeFile(size_t file) const {
  return StrCat("'", files_[file].path, "' (line ", files_[file].line, " of '",
                layer_param_.hdf5_data_param().source(), "')");
}

void HDF5DataLayer::LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const HDF5DataParameter& param = layer_param_.hdf5_data_param();
  DEMI_CHECK(!param.source().empty(), Owner(),
             ": hdf5_data_param has no source (a text file listing .h5 files)");
  batch_size_ = param.batch_size();
  DEMI_CHECK(batch_size_ > 0, Owner(), ": hdf5_data_param batch_size must be positive, got ",
             batch_size_);
  shuffle_ = param.shuffle();
  try {
    files_ = ReadHdf5List(param.source());
  } catch (const Error& error) {
    ThrowError(StrCat(Owner(), ": ", error.what()));
  }
  CheckFiles();
  int64_t offset = 0;
  for (size_t i = 0; i < row_shapes_.size(); ++i) {
    row_sizes_.push_back(std::accumulate(row_shapes_[i].begin(), row_shapes_[i].end(), int64_t{1},
                                         std::multiplies<int64_t>()));
    top_offsets_.push_back(offset);
    offset += batch_size_ * row_sizes_[i];
  }
  if (phase_ == TRAIN && context().num_replicas > 1) {
    shard_ = context().replica;
    num_shards_ = context().num_replicas;
  }
  file_order_.resize(files_.size());
  ShuffleFiles();
  LoadFile();
  consumed_ = StreamPosition();
  const int depth = static_cast<int>(layer_param_.data_param().prefetch());
  DEMI_CHECK(depth >= 1, Owner(), ": data_param prefetch must be at least 1, got ", depth);
  prefetcher_ = std::make_unique<Prefetcher>(
      depth, [this](Batch* batch, const std::atomic<bool>& stop) { FillBatch(batch, stop); });
  prefetcher_->Start();
  LOG(INFO) << Owner() << ": " << files_.size() << " file(s), " << total_rows_ << " rows"
            << (shuffle_ ? ", shuffled" : "") << ", batches of " << batch_size_;
}

void HDF5DataLayer::CheckFiles() {
  const std::string& first_top = layer_param_.top(0);
  for (size_t file = 0; file < files_.size(); ++file) {
    int64_t rows = 0;
    for (int i = 0; i < layer_param_.top_size(); ++i) {
      const std::string& name = layer_param_.top(i);
      std::vector<int64_t> shape;
      try {
        shape = Hdf5DatasetShape(files_[file].path, name);
      } catch (const Error& error) {
        ThrowError(StrCat(Owner(), ": ", error.what(), " (line ", files_[file].line, " of '",
                          layer_param_.hdf5_data_param().source(), "')"));
      }
      DEMI_CHECK(shape.size() <= static_cast<size_t>(kMaxBlobAxes), Owner(), ": dataset '", name,
                 "' of ", DescribeFile(file), " has ", shape.size(), " axes; a top takes at most ",
                 kMaxBlobAxes);
      const std::vector<int64_t> row(shape.begin() + 1, shape.end());
      if (file == 0) {
        row_shapes_.push_back(row);
      } else {
        DEMI_CHECK(row == row_shapes_[i], Owner(), ": dataset '", name, "' of ", DescribeFile(file),
                   " has rows of shape ", ShapeString(row), " but in ", DescribeFile(0),
                   " of shape ", ShapeString(row_shapes_[i]), "; top '", name,
                   "' takes one shape, so every file's rows must have it");
      }
      if (i == 0) {
        rows = shape[0];
      } else {
        DEMI_CHECK(shape[0] == rows, Owner(), ": in ", DescribeFile(file), " dataset '", name,
                   "' has ", shape[0], " rows but dataset '", first_top, "' has ", rows,
                   "; the datasets of one file must have the same first dimension");
      }
    }
    DEMI_CHECK(rows > 0, Owner(), ": ", DescribeFile(file), " has no rows (dataset '", first_top,
               "' is empty); remove it from the list");
    file_rows_.push_back(rows);
    total_rows_ += rows;
  }
}

void HDF5DataLayer::ShuffleFiles() {
  std::iota(file_order_.begin(), file_order_.end(), size_t{0});
  if (!shuffle_) return;
  RandomEngine engine = RecordEngine(context().seed, pass_, -1);
  for (size_t i = file_order_.size(); i > 1; --i) {
    std::swap(file_order_[i - 1], file_order_[RandomIndex(&engine, static_cast<uint32_t>(i))]);
  }
}

void HDF5DataLayer::LoadFile() {
  const size_t file = file_order_[file_position_];
  if (file != loaded_file_) {
    values_.resize(layer_param_.top_size());
    for (int i = 0; i < layer_param_.top_size(); ++i) {
      std::vector<int64_t> shape =
          ReadHdf5Dataset(files_[file].path, layer_param_.top(i), &values_[i]);
      DEMI_CHECK(shape[0] == file_rows_[file] &&
                     std::vector<int64_t>(shape.begin() + 1, shape.end()) == row_shapes_[i],
                 Owner(), ": dataset '", layer_param_.top(i), "' of ", DescribeFile(file),
                 " changed shape since setup, to ", ShapeString(shape));
    }
    loaded_file_ = file;
  }
  row_order_.resize(file_rows_[file]);
  std::iota(row_order_.begin(), row_order_.end(), int64_t{0});
  if (shuffle_) {
    RandomEngine engine = RecordEngine(context().seed, pass_, static_cast<int64_t>(file));
    for (size_t i = row_order_.size(); i > 1; --i) {
      std::swap(row_order_[i - 1], row_order_[RandomIndex(&engine, static_cast<uint32_t>(i))]);
    }
  }
  row_position_ = 0;
}

void HDF5DataLayer::Advance() {
  ++stream_position_;
  if (++row_position_ < static_cast<int64_t>(row_order_.size())) return;
  if (++file_position_ == files_.size()) {
    file_position_ = 0;
    ++pass_;
    ShuffleFiles();
  }
  LoadFile();
}

void HDF5DataLayer::FillBatch(Batch* batch, const std::atomic<bool>& stop) {
  if (context().device == Device::kGPU) SetCurrentDevice(context().device_id);
  batch->data.resize(top_offsets_.back() + batch_size_ * row_sizes_.back());
  for (int64_t row = 0; row < batch_size_; ++row) {
    if (stop) return;
    while ((stream_position_ / batch_size_) % num_shards_ != shard_) Advance();
    const int64_t source_row = row_order_[row_position_];
    for (size_t i = 0; i < values_.size(); ++i) {
      std::copy_n(values_[i].data() + source_row * row_sizes_[i], row_sizes_[i],
                  batch->data.data() + top_offsets_[i] + row * row_sizes_[i]);
    }
    Advance();
  }
  batch->next = StreamPosition();
}

DataReadPosition HDF5DataLayer::StreamPosition() const {
  DataReadPosition position;
  position.set_layer(layer_param_.name());
  position.set_type(type());
  position.set_replica(shard_);
  position.set_num_replicas(num_shards_);
  position.set_stream_position(stream_position_);
  position.set_epoch(pass_);
  position.set_file(static_cast<int64_t>(file_position_));
  position.set_index(row_position_);
  position.set_source_records(total_rows_);
  return position;
}

bool HDF5DataLayer::SaveReadPosition(DataReadPosition* position) const {
  *position = consumed_;
  return true;
}

void HDF5DataLayer::RestoreReadPosition(const DataReadPosition& position) {
  DEMI_CHECK(position.epoch() >= 0 && position.file() >= 0 && position.index() >= 0, Owner(),
             ": the saved read position (pass ", position.epoch(), ", file ", position.file(),
             ", row ", position.index(), ") is corrupt");
  prefetcher_->Stop();
  stream_position_ = position.stream_position();
  pass_ = position.epoch();
  ShuffleFiles();
  file_position_ = static_cast<size_t>(position.file()) % files_.size();
  LoadFile();
  row_position_ = position.index() % static_cast<int64_t>(row_order_.size());
  if (position.source_records() != total_rows_ ||
      file_position_ != static_cast<size_t>(position.file()) || row_position_ != position.index()) {
    LOG(WARNING) << Owner() << ": the files of '" << layer_param_.hdf5_data_param().source()
                 << "' changed since the read position was saved (" << position.source_records()
                 << " rows then, " << total_rows_ << " now): reading on from row " << row_position_
                 << " of file " << file_position_ << " of pass " << pass_
                 << ", but the batches differ from an uninterrupted run's";
  }
  consumed_ = StreamPosition();
  prefetcher_->Start();
}

void HDF5DataLayer::Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  for (size_t i = 0; i < top.size(); ++i) {
    std::vector<int64_t> shape{batch_size_};
    shape.insert(shape.end(), row_shapes_[i].begin(), row_shapes_[i].end());
    top[i]->Reshape(shape);
  }
}

void HDF5DataLayer::Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  Batch* batch = prefetcher_->Next();
  for (size_t i = 0; i < top.size(); ++i) {
    Copy(top[i]->count(), batch->data.data() + top_offsets_[i], top[i]->mutable_cpu_data());
  }
  consumed_.Swap(&batch->next);
  prefetcher_->Release(batch);
}

#ifndef CPU_ONLY
void HDF5DataLayer::Forward_gpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  Batch* batch = prefetcher_->Next();
  for (size_t i = 0; i < top.size(); ++i) {
    CopyHostToDevice(top[i]->mutable_gpu_data(), batch->data.data() + top_offsets_[i],
                     static_cast<size_t>(top[i]->count()) * sizeof(float));
  }
  // The prefetcher refills the batch once the copies are done.
  batch->MarkCopied();
  consumed_.Swap(&batch->next);
  prefetcher_->Release(batch);
}
#endif

DEMI_REGISTER_LAYER(HDF5Data);

}  // namespace demi
