#ifndef DEMI_LAYERS_BASE_DATA_LAYER_HPP_
#define DEMI_LAYERS_BASE_DATA_LAYER_HPP_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "demi/data/reader.hpp"
#include "demi/data/transformer.hpp"
#include "demi/layer.hpp"

namespace demi {

/// @brief Base of the layers that read examples (Data, ImageData).
///
/// Tops: data (N x C x H x W) and, optionally, label (N). A prefetch thread
/// keeps up to data_param.prefetch batches ready (default 4); Forward copies
/// the next one into the tops. Within a batch, examples are decoded and
/// augmented by its prefetch thread and a pool's helpers: a pool of the
/// layer's own where data_param.threads or set_decode_threads gives the
/// count, else the process's pool of DefaultDecodeThreads (no helper on a
/// CPU; on a GPU the cores training leaves free), shared by the data layers
/// of every replica and net in the process.
///
/// Byte batches: where the transform's last step can wait
/// (Transformer::DefersNormalization: no colour jitter, no mean_file), the
/// decode threads write bytes, a quarter of the floats, and Forward applies
/// the mean and scale on the compute device as it moves the batch into the
/// top: one pass on the CPU; on a GPU a kernel, after the prefetch thread's
/// copy of the bytes to the device (on its own stream, overlapping the
/// steps before; one device buffer per prefetched batch).
/// The top's values are those of the float path, bit for bit. A record whose
/// pixels are floats (float_data) takes a float row of its own.
///
/// Every example is augmented by an engine seeded from (context().seed,
/// epoch, record index) (RecordEngine), so the batches do not depend on
/// thread timing, on the number of decode threads, or on how the stream is
/// cut into batches: batch size 4 sees the same rows as two batches of 2.
///
/// A bad example (BadRecordError: undecodable, wrong size) throws an Error
/// naming the layer and the record; with skip_bad_records the layer instead
/// logs it, counts it (skipped_records()) and takes the next record: a batch
/// is always the next batch_size good records of the stream, in order.
///
/// Replication: in TRAIN, replica r of R (context()) reads only its shard of
/// the stream: the records at stream positions p with (p / batch_size) % R
/// == r. Batch g of every replica, concatenated in replica order, is then
/// batch g of one replica with R times the batch size, and across an epoch
/// each record is read by exactly one replica.
///
/// Read position (Layer::SaveReadPosition, saved in a .solverstate): each
/// batch carries the position just after it (the stream position, the
/// skipped count and the subclass's source position), and Forward adopts it
/// when it consumes the batch, so the position is that of the first batch
/// not consumed, however many are prefetched. RestoreReadPosition stops the
/// prefetch thread, drops its batches, moves the source and starts again.
/// Backward does nothing; it reads no data.
class BaseDataLayer : public Layer {
 public:
  using Layer::Layer;
  /// Stops the prefetch thread if a subclass has not already.
  ~BaseDataLayer() override;

  /// Runs DataLayerSetUp, shapes the tops and starts the prefetch thread.
  void LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) final;
  void Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  int ExactNumBottomBlobs() const override { return 0; }
  int MinTopBlobs() const override { return 1; }
  int MaxTopBlobs() const override { return 2; }
  bool BackwardReadsTopData(int) const override { return false; }
  bool BackwardReadsBottomData(int) const override { return false; }
  bool ForwardDraws() const override { return true; }

  /// Whether batches travel as bytes (see above); known after SetUp.
  bool byte_batches() const { return byte_batches_; }
  /// The threads a batch gets when it is decoded alone: its prefetch thread
  /// and the pool's helpers (after SetUp).
  int decode_threads() const;

  /// Threads that decode and augment each batch; call before SetUp.
  void set_decode_threads(int threads);
  /// Bad records skipped so far (with skip_bad_records).
  int64_t skipped_records() const { return skipped_; }
  /// The prefetcher's statistics (how often Forward waited for a batch).
  const Prefetcher& prefetcher() const { return *prefetcher_; }
  bool SaveReadPosition(DataReadPosition* position) const final;
  void RestoreReadPosition(const DataReadPosition& position) final;
  /// {C, H, W} of one example.
  const std::vector<int64_t>& example_shape() const { return example_shape_; }
  /// Which records each replica reads follows from these three (see above);
  /// ranks training together compare them when they join.
  int64_t source_records() const { return SourceSize(); }
  int64_t batch_size() const { return batch_size_; }
  int num_shards() const { return num_shards_; }

 protected:
  // ---- what a subclass provides ----
  /// Opens the source, sets batch_size_ (and skip_bad_records_), and returns
  /// the {C, H, W} shape of an example.
  virtual std::vector<int64_t> DataLayerSetUp() = 0;
  /// Number of records in one epoch of the source.
  virtual int64_t SourceSize() const = 0;
  /// Reads the next record of the stream into batch row `row` (called in
  /// stream order, from one thread); sets its record index and epoch.
  virtual void ReadExample(int64_t row, int64_t* index, int64_t* epoch) = 0;
  /// Passes over the next record of the stream (another replica's).
  virtual void SkipExample() = 0;
  /// Where LoadExample writes an example of example_shape(): floats (the
  /// whole transform, Transformer::Transform) or bytes (its steps 1-4,
  /// Transformer::TransformBytes). One of the two is set.
  struct ExampleOut {
    float* floats = nullptr;
    uint8_t* bytes = nullptr;
  };
  /// Decodes and transforms row `row` into `out` and `*label`; called
  /// concurrently for distinct rows. Returns false, having written nothing,
  /// where `out` takes bytes and the record's pixels are floats: the row is
  /// then loaded again into floats, with a fresh engine. Throws
  /// BadRecordError for a bad record.
  virtual bool LoadExample(int64_t row, RandomEngine* engine, const ExampleOut& out,
                           float* label) = 0;
  /// Names row `row`'s record in messages ("record '00000003' of db").
  virtual std::string DescribeExample(int64_t row) const = 0;
  /// How to skip bad records, appended to the error for one.
  virtual std::string SkipHint() const = 0;
  /// Writes where the source reads next (epoch, index, key, source_records;
  /// see DataReadPosition) into `position`; on the prefetch thread, or when
  /// it is stopped.
  virtual void SaveSourcePosition(DataReadPosition* position) const = 0;
  /// Moves the source to a position SaveSourcePosition wrote (the prefetch
  /// thread is stopped); a source that changed since goes as near as it can,
  /// with one WARNING saying so.
  virtual void RestoreSourcePosition(const DataReadPosition& position) = 0;

  /// Stops and joins the prefetch thread; subclass destructors call it
  /// first, while the members the thread uses still exist.
  void StopPrefetch();

  void Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Backward_cpu(const std::vector<Blob*>&, const std::vector<bool>&,
                    const std::vector<Blob*>&) override {}
#ifndef CPU_ONLY
  /// Copies the next batch into the tops' device memory, normalising byte
  /// batches there (byte_pixels.hpp's kernel) once their upload is done:
  /// the host waits for nothing.
  void Forward_gpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Backward_gpu(const std::vector<Blob*>&, const std::vector<bool>&,
                    const std::vector<Blob*>&) override {}
#endif

  /// "Data layer 'name'", for messages.
  std::string Owner() const;

  int64_t batch_size_ = 0;
  bool skip_bad_records_ = false;
  std::unique_ptr<Transformer> transformer_;

 private:
  void FillBatch(Batch* batch, const std::atomic<bool>& stop);
  /// LoadExample for one row, into bytes or floats; a bad record's reason
  /// goes to errors_[row].
  void LoadRow(Batch* batch, int64_t row, bool as_bytes);
  /// Moves row `from`'s example, label and record to row `to`.
  void MoveRow(Batch* batch, int64_t from, int64_t to) const;
  /// ReadExample for this replica's next record, skipping the others'.
  void ReadOwnExample(int64_t row, int64_t* index, int64_t* epoch);
  /// The prefetch side's position now (the stream's next record).
  DataReadPosition StreamPosition() const;
  /// The decode threads, for the setup line.
  std::string DecodeThreadsText() const;

  std::string owner_;  ///< Owner(), kept for the destructor
  std::vector<int64_t> example_shape_;
  int64_t example_size_ = 0;
  bool byte_batches_ = false;
  PixelNormalization normalization_;  ///< a byte batch's last step
  /// GPU: the channels' means (a byte batch reaches the device in its
  /// Batch, which the prefetch thread uploads).
  Blob device_mean_;
  /// Set by data_param.threads or set_decode_threads: a pool of the layer's
  /// own. 0: the process's shared pool of DefaultDecodeThreads.
  int decode_threads_ = 0;
  std::shared_ptr<WorkerPool> pool_;
  std::unique_ptr<Prefetcher> prefetcher_;
  std::atomic<int64_t> skipped_{0};
  int64_t consecutive_bad_ = 0;  ///< bad records in a row, in stream order
  int shard_ = 0;                ///< this replica's shard of the stream
  int num_shards_ = 1;
  int64_t stream_position_ = 0;      ///< records read or skipped so far (prefetch thread)
  std::vector<std::string> errors_;  ///< per row, from the last load (prefetch thread)
  DataReadPosition consumed_;        ///< the first record Forward has not consumed
};

}  // namespace demi

#endif  // DEMI_LAYERS_BASE_DATA_LAYER_HPP_
