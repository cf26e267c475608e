#ifndef DEMI_LAYERS_HDF5_DATA_LAYER_HPP_
#define DEMI_LAYERS_HDF5_DATA_LAYER_HPP_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "demi/data/hdf5.hpp"
#include "demi/data/reader.hpp"
#include "demi/layer.hpp"

namespace demi {

/// @brief Reads rows of HDF5 datasets, as Caffe's HDF5Data: top i is dataset
/// `top(i)` of each file, batch_size rows at a time (batch_size x the
/// dataset's shape after its first axis).
///
/// hdf5_data_param: source (a list of .h5 files, ReadHdf5List), batch_size,
/// shuffle. The stream walks the files in list order and the rows of each in
/// order, wrapping around at the end (a batch may span files and the wrap);
/// with shuffle, the file order is drawn anew each pass from (context().seed,
/// pass) and a file's rows each time it is loaded from (seed, pass, file), so
/// the stream is reproducible. Values are stored as floats whatever their
/// HDF5 type; no transform_param is applied (as in Caffe).
///
/// Every file of the list is checked at setup, without reading its values:
/// each top's dataset exists, has rank >= 1, the same number of rows as the
/// other tops' and the same row shape as in the first file. The prefetch
/// thread (Prefetcher, data_param.prefetch batches ahead, 4 by default) holds
/// one file's datasets in memory at a time and packs a batch's tops one
/// after another in Batch::data.
///
/// Replication: in TRAIN, replica r of R reads the rows at stream positions p
/// with (p / batch_size) % R == r, as BaseDataLayer's replicas do.
///
/// Read position (as BaseDataLayer's: the first row not consumed by
/// Forward): the pass, the place in its file order and the row in that
/// file's order.
/// Backward does nothing; it reads no data.
class HDF5DataLayer : public Layer {
 public:
  using Layer::Layer;
  ~HDF5DataLayer() override;
  const char* type() const override { return "HDF5Data"; }

  void LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  int ExactNumBottomBlobs() const override { return 0; }
  int MinTopBlobs() const override { return 1; }
  bool BackwardReadsTopData(int) const override { return false; }
  bool BackwardReadsBottomData(int) const override { return false; }
  bool ForwardDraws() const override { return true; }

  bool SaveReadPosition(DataReadPosition* position) const override;
  void RestoreReadPosition(const DataReadPosition& position) override;

  /// Rows of all files together (one pass over the list).
  int64_t source_rows() const { return total_rows_; }

 protected:
  void Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Backward_cpu(const std::vector<Blob*>&, const std::vector<bool>&,
                    const std::vector<Blob*>&) override {}
#ifndef CPU_ONLY
  /// Copies the next batch into the tops' device memory (no kernel).
  void Forward_gpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Backward_gpu(const std::vector<Blob*>&, const std::vector<bool>&,
                    const std::vector<Blob*>&) override {}
#endif

 private:
  std::string Owner() const;
  /// "'file.h5' (line 3 of 'list.txt')", for messages.
  std::string DescribeFile(size_t file) const;
  /// Checks every file's datasets; sets row_shapes_ and file_rows_.
  void CheckFiles();
  void ShuffleFiles();
  /// Loads file file_order_[file_position_] and draws its row order.
  void LoadFile();
  /// Moves to the next row of the stream, loading the next file at the end of
  /// one (prefetch thread).
  void Advance();
  void FillBatch(Batch* batch, const std::atomic<bool>& stop);
  /// The prefetch side's position now (the stream's next row).
  DataReadPosition StreamPosition() const;

  std::vector<Hdf5ListEntry> files_;
  std::vector<std::vector<int64_t>> row_shapes_;  ///< per top, a row's shape
  std::vector<int64_t> row_sizes_;                ///< per top, floats in a row
  std::vector<int64_t> top_offsets_;              ///< per top, its start in Batch::data
  std::vector<int64_t> file_rows_;                ///< per file
  int64_t total_rows_ = 0;
  int64_t batch_size_ = 0;
  bool shuffle_ = false;
  int shard_ = 0;
  int num_shards_ = 1;

  // ---- the stream (prefetch thread after setup) ----
  std::vector<size_t> file_order_;
  size_t file_position_ = 0;
  int64_t pass_ = 0;
  size_t loaded_file_ = SIZE_MAX;
  std::vector<std::vector<float>> values_;  ///< per top, the loaded file's dataset
  std::vector<int64_t> row_order_;          ///< the loaded file's rows, in reading order
  int64_t row_position_ = 0;
  int64_t stream_position_ = 0;
  std::unique_ptr<Prefetcher> prefetcher_;
  DataReadPosition consumed_;  ///< the first row Forward has not consumed
};

}  // namespace demi

#endif  // DEMI_LAYERS_HDF5_DATA_LAYER_HPP_
