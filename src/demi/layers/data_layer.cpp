#include "demi/layers/data_layer.hpp"

#include "demi/layer_registry.hpp"

namespace demi {

DataLayer::~DataLayer() { StopPrefetch(); }

std::vector<int64_t> DataLayer::DataLayerSetUp() {
  const DataParameter& param = layer_param_.data_param();
  DEMI_CHECK(param.backend() == DataParameter::LMDB, Owner(),
             ": data_param backend is LEVELDB (the default when none is given), but LevelDB is "
             "not supported; convert the data to LMDB and set data_param { backend: LMDB }");
  DEMI_CHECK(!param.source().empty(), Owner(), ": data_param has no source");
  DEMI_CHECK(!param.shuffle(), Owner(),
             ": data_param shuffle (NVCaffe's: a new record order each epoch) is not supported "
             "for LMDB; shuffle the records when making the database (convert_imageset "
             "--shuffle)");
  try {
    reader_ = std::make_unique<DBReader>(param.source());
  } catch (const Error& error) {
    ThrowError(StrCat(Owner(), ": ", error.what()));
  }
  batch_size_ = param.batch_size();
  skip_bad_records_ = param.skip_bad_records();
  records_.resize(batch_size_);
  datums_.resize(batch_size_);

  // The example shape is the first usable record's.
  std::vector<int64_t> shape;
  std::unique_ptr<LMDBCursor> cursor = LMDB::Open(param.source(), DBMode::kRead)->NewCursor();
  for (int64_t index = 0; cursor->valid() && shape.empty(); ++index, cursor->Next()) {
    Datum datum;
    try {
      if (!datum.ParseFromArray(cursor->value().data(), static_cast<int>(cursor->value().size()))) {
        throw BadRecordError(StrCat("is not a Datum (", cursor->value().size(), " bytes)"));
      }
      shape = transformer_->OutputShape(datum);
    } catch (const BadRecordError& error) {
      const std::string message = StrCat(Owner(), ": record '", cursor->key(), "' (index ", index,
                                         ") of '", param.source(), "' ", error.what());
      DEMI_CHECK(skip_bad_records_, message, "; ", SkipHint());
      LOG(WARNING) << message << "; looking further for the example shape";
    }
  }
  DEMI_CHECK(!shape.empty(), Owner(), ": no record of '", param.source(),
             "' can be decoded; nothing to read");

  if (param.rand_skip() > 0) {
    RandomEngine engine = RecordEngine(context().seed, -1, -1);
    const uint32_t skip = RandomIndex(&engine, param.rand_skip());
    LOG(INFO) << Owner() << ": skipping the first " << skip << " records";
    reader_->Skip(skip);
  }
  return shape;
}

void DataLayer::ReadExample(int64_t row, int64_t* index, int64_t* epoch) {
  Record& record = records_[row];
  reader_->Next(&record);
  *index = record.index;
  *epoch = record.epoch;
}

bool DataLayer::LoadExample(int64_t row, RandomEngine* engine, const ExampleOut& out,
                            float* label) {
  const Record& record = records_[row];
  // The pixels are decoded where LMDB keeps them: no copy of the record.
  std::string_view data;
  if (!ParseDatumInPlace(record.value, &datums_[row], &data)) {
    throw BadRecordError(StrCat("is not a Datum (", record.value.size(), " bytes)"));
  }
  const DatumView datum(datums_[row], data);
  *label = static_cast<float>(datum.label());
  if (out.bytes != nullptr)
    return transformer_->TransformBytes(datum, example_shape(), engine, out.bytes);
  transformer_->Transform(datum, example_shape(), engine, out.floats);
  return true;
}

void DataLayer::SkipExample() { reader_->Skip(1); }

std::string DataLayer::DescribeExample(int64_t row) const {
  const Record& record = records_[row];
  return StrCat("record '", record.key, "' (index ", record.index, ") of '", reader_->source(),
                "'");
}

std::string DataLayer::SkipHint() const {
  return "set data_param { skip_bad_records: true } to skip and count such records";
}

void DataLayer::SaveSourcePosition(DataReadPosition* position) const {
  position->set_key(std::string(reader_->next_key()));
  position->set_index(reader_->index());
  position->set_epoch(reader_->epoch());
  position->set_source_records(reader_->size());
}

void DataLayer::RestoreSourcePosition(const DataReadPosition& position) {
  if (reader_->Seek(position.key(), position.index(), position.epoch(),
                    position.source_records())) {
    return;
  }
  LOG(WARNING) << Owner() << ": '" << reader_->source() << "' changed since the read position was "
               << "saved (" << position.source_records() << " records then, " << reader_->size()
               << " now; key '" << position.key() << "' "
               << (reader_->next_key() == position.key() ? "found" : "gone")
               << "): reading on from record " << reader_->index() << " of epoch "
               << reader_->epoch() << ", but the batches differ from an uninterrupted run's";
}

DEMI_REGISTER_LAYER(Data);

}  // namespace demi
