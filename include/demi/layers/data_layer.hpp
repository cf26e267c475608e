#ifndef DEMI_LAYERS_DATA_LAYER_HPP_
#define DEMI_LAYERS_DATA_LAYER_HPP_

#include <memory>
#include <string>
#include <vector>

#include "demi/data/reader.hpp"
#include "demi/layers/base_data_layer.hpp"

namespace demi {

/// @brief Reads Datum records (raw or encoded) from an LMDB in key order,
/// rewinding at the end, and outputs data (N x C x H x W, after
/// transform_param) and optionally label (N).
///
/// data_param: source (the LMDB directory), batch_size, backend (LMDB only;
/// LevelDB is not supported), rand_skip (skip a random number of records
/// below it at the start), prefetch (batches kept ready), skip_bad_records.
/// Record index = position in the database; epoch = times it was rewound.
/// Read position: the next record's key, index and epoch; a restore finds
/// the key (LMDB's set-range) and warns when the database changed since.
/// The example shape comes from the first usable record.
class DataLayer : public BaseDataLayer {
 public:
  using BaseDataLayer::BaseDataLayer;
  ~DataLayer() override;
  const char* type() const override { return "Data"; }

 protected:
  std::vector<int64_t> DataLayerSetUp() override;
  int64_t SourceSize() const override { return reader_->size(); }
  void ReadExample(int64_t row, int64_t* index, int64_t* epoch) override;
  void SkipExample() override;
  bool LoadExample(int64_t row, RandomEngine* engine, const ExampleOut& out, float* label) override;
  std::string DescribeExample(int64_t row) const override;
  std::string SkipHint() const override;
  void SaveSourcePosition(DataReadPosition* position) const override;
  void RestoreSourcePosition(const DataReadPosition& position) override;

 private:
  std::unique_ptr<DBReader> reader_;
  std::vector<Record> records_;  ///< the record behind each batch row
  std::vector<Datum> datums_;    ///< each row's record but its data, which stays in place
};

}  // namespace demi

#endif  // DEMI_LAYERS_DATA_LAYER_HPP_
