#include <gtest/gtest.h>

#include <chrono>

#include "data_test_util.hpp"
#include "demi/layers/data_layer.hpp"
#include "demi/net.hpp"
#include "log_capture.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

/// Record i: a 1 x 3 x 4 image of values 10 i + position, label i.
Datum Example(int i) {
  std::vector<uint8_t> pixels;
  for (int p = 0; p < 12; ++p) pixels.push_back(static_cast<uint8_t>(10 * i + p));
  return RawDatum(1, 3, 4, pixels, i);
}

class DataLayerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::vector<Datum> datums;
    for (int i = 0; i < 5; ++i) datums.push_back(Example(i));
    WriteDatumDB(source_, datums);
  }

  std::unique_ptr<Layer> Make(const std::string& params, const std::string& source,
                              uint32_t seed = 1701, int threads = 1) {
    auto layer = MakeLayer("name: 'd' type: 'Data' " + params + " data_param { source: '" + source +
                           "' backend: LMDB " + data_params_ + " }");
    Context context;
    context.seed = seed;
    layer->set_context(context);
    static_cast<DataLayer*>(layer.get())->set_decode_threads(threads);
    layer->SetUp({}, top_);
    return layer;
  }

  TempDir dir_;
  std::string source_ = dir_ / "db";
  std::string data_params_ = "batch_size: 3";
  Blob data_, label_;
  std::vector<Blob*> top_{&data_, &label_};
};

TEST_F(DataLayerTest, ForwardsRecordsInOrderAndRewinds) {
  auto layer = Make("phase: TEST transform_param { scale: 0.5 }", source_);
  EXPECT_EQ(data_.shape(), (std::vector<int64_t>{3, 1, 3, 4}));
  EXPECT_EQ(label_.shape(), (std::vector<int64_t>{3}));
  EXPECT_FALSE(layer->BackwardReadsTopData(0));
  const std::vector<std::vector<int>> batches = {{0, 1, 2}, {3, 4, 0}, {1, 2, 3}};
  for (const auto& records : batches) {
    layer->Forward({}, top_);
    for (int row = 0; row < 3; ++row) {
      EXPECT_EQ(label_.cpu_data()[row], records[row]);
      for (int p = 0; p < 12; ++p) {
        ASSERT_EQ(data_.cpu_data()[row * 12 + p], 0.5f * (10 * records[row] + p));
      }
    }
  }
}

TEST_F(DataLayerTest, DataOnlyTop) {
  auto layer = MakeLayer("name: 'd' type: 'Data' data_param { source: '" + source_ +
                         "' backend: LMDB batch_size: 2 }");
  std::vector<Blob*> top{&data_};
  layer->SetUp({}, top);
  layer->Forward({}, top);
  EXPECT_EQ(data_.shape(), (std::vector<int64_t>{2, 1, 3, 4}));
  EXPECT_EQ(data_.cpu_data()[12], 10.0f);
}

TEST_F(DataLayerTest, AugmentationDoesNotDependOnBatchSizeOrThreads) {
  const std::string transform = "transform_param { crop_size: 2 mirror: true }";
  auto rows_of = [&](int batch_size, int threads, uint32_t seed) {
    data_params_ = StrCat("batch_size: ", batch_size);
    auto layer = Make(transform, source_, seed, threads);
    std::vector<float> rows;
    while (rows.size() < 12 * 4) {
      layer->Forward({}, top_);
      rows.insert(rows.end(), data_.cpu_data(), data_.cpu_data() + data_.count());
    }
    rows.resize(12 * 4);  // 12 rows of 2 x 2 crops
    return rows;
  };
  const std::vector<float> reference = rows_of(4, 1, 7);
  EXPECT_EQ(rows_of(2, 1, 7), reference);
  EXPECT_EQ(rows_of(3, 2, 7), reference);
  EXPECT_EQ(rows_of(12, 3, 7), reference);
  EXPECT_NE(rows_of(4, 1, 8), reference);
  // Rows 5 to 9 are records 0 to 4 again, of epoch 1: drawn anew.
  EXPECT_NE(std::vector<float>(reference.begin(), reference.begin() + 20),
            std::vector<float>(reference.begin() + 20, reference.begin() + 40));
}

TEST_F(DataLayerTest, ConstructAndDestroyRepeatedlyWithoutHanging) {
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 50; ++i) {
    data_params_ = StrCat("batch_size: ", 1 + i % 7, " prefetch: ", 1 + i % 3);
    auto layer = Make("transform_param { mirror: true }", source_, 1701, 1 + i % 2);
    for (int f = 0; f < i % 3; ++f) layer->Forward({}, top_);
  }
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 10.0);
}

TEST_F(DataLayerTest, WorksInsideANet) {
  NetParameter param = ParseText<NetParameter>(
      "name: 'n' layer { name: 'd' type: 'Data' top: 'data' top: 'label' "
      "data_param { source: '" +
      source_ +
      "' backend: LMDB batch_size: 4 } "
      "transform_param { scale: 0.1 } }");
  param.mutable_state()->set_phase(TEST);
  Net net(param);
  net.Forward();
  const Blob& data = *net.blob_by_name("data");
  const Blob& label = *net.blob_by_name("label");
  EXPECT_EQ(data.shape(), (std::vector<int64_t>{4, 1, 3, 4}));
  EXPECT_FLOAT_EQ(data.cpu_data()[12 * 3 + 5], 0.1f * 35);
  EXPECT_EQ(DataOf(label), (std::vector<float>{0, 1, 2, 3}));
}

TEST_F(DataLayerTest, SetupErrorsNameTheLayerAndSource) {
  ExpectErrorContaining(
      [&] {
        MakeLayer("name: 'd' type: 'Data' data_param { source: '" + source_ + "' batch_size: 2 }")
            ->SetUp({}, top_);
      },
      {"Data layer 'd'", "LEVELDB", "LevelDB is not supported", "backend: LMDB"});
  ExpectErrorContaining([&] { Make("", dir_ / "missing"); },
                        {"Data layer 'd'", dir_ / "missing", "does not exist"});
  ExpectErrorContaining([&] { Make("", ""); }, {"Data layer 'd'", "has no source"});
  LMDB::Open(dir_ / "empty", DBMode::kNew)->NewTransaction()->Commit();
  ExpectErrorContaining([&] { Make("", dir_ / "empty"); },
                        {"Data layer 'd'", dir_ / "empty", "is empty"});
  data_params_ = "";
  ExpectErrorContaining([&] { Make("", source_); },
                        {"Data layer 'd'", "batch_size must be positive, got 0"});
  data_params_ = "batch_size: 2";
  ExpectErrorContaining([&] { Make("transform_param { crop_size: 5 }", source_); },
                        {"Data layer 'd'", "record '00000000' (index 0) of '" + source_ + "'",
                         "is 3x4, smaller than crop_size 5", "skip_bad_records"});
}

/// Records 0..4, with record 1 replaced by an undecodable encoded one.
void WriteWithBadRecord(const std::string& path) {
  std::vector<Datum> datums;
  for (int i = 0; i < 5; ++i) datums.push_back(Example(i));
  datums[1].Clear();
  datums[1].set_data("garbage");
  datums[1].set_encoded(true);
  datums[1].set_label(1);
  WriteDatumDB(path, datums);
}

TEST_F(DataLayerTest, UndecodableRecordFailsNamingItsKey) {
  WriteWithBadRecord(dir_ / "bad");
  auto layer = Make("", dir_ / "bad");
  ExpectErrorContaining(
      [&] { layer->Forward({}, top_); },
      {"Data layer 'd'", "record '00000001' (index 1) of '" + (dir_ / "bad") + "'",
       "does not decode as an image (7 bytes of encoded data)",
       "set data_param { skip_bad_records: true }"});
}

TEST_F(DataLayerTest, SkipBadRecordsSkipsAndCounts) {
  WriteWithBadRecord(dir_ / "bad");
  data_params_ = "batch_size: 3 skip_bad_records: true prefetch: 1";
  auto layer = Make("", dir_ / "bad");
  const std::vector<std::vector<float>> labels = {{0, 2, 3}, {4, 0, 2}, {3, 4, 0}};
  for (const auto& expected : labels) {
    layer->Forward({}, top_);
    EXPECT_EQ(DataOf(label_), expected);
  }
  // Epochs 0 and 1 were read at least; the prefetch thread may be further on.
  EXPECT_GE(static_cast<DataLayer*>(layer.get())->skipped_records(), 2);
}

TEST_F(DataLayerTest, AllRecordsBadIsAnErrorEvenWhenSkipping) {
  std::vector<Datum> datums(3);
  for (Datum& datum : datums) {
    datum.set_data("garbage");
    datum.set_encoded(true);
  }
  WriteDatumDB(dir_ / "allbad", datums);
  data_params_ = "batch_size: 2 skip_bad_records: true";
  ExpectErrorContaining([&] { Make("", dir_ / "allbad"); },
                        {"Data layer 'd'", "no record of", "can be decoded"});
}

TEST_F(DataLayerTest, RecordOfAnotherSizeFailsNamingItsKey) {
  std::vector<Datum> datums = {Example(0), Example(1),
                               RawDatum(1, 4, 4, std::vector<uint8_t>(16), 2)};
  WriteDatumDB(dir_ / "sizes", datums);
  auto layer = Make("", dir_ / "sizes");
  ExpectErrorContaining([&] { layer->Forward({}, top_); },
                        {"Data layer 'd'", "record '00000002' (index 2)",
                         "gives a 1x4x4 image, but the batch holds 1x3x4 images"});
  // A crop makes the sizes agree.
  auto cropped = Make("phase: TEST transform_param { crop_size: 3 }", dir_ / "sizes");
  cropped->Forward({}, top_);
  EXPECT_EQ(data_.shape(), (std::vector<int64_t>{3, 1, 3, 3}));
  EXPECT_EQ(data_.cpu_data()[2 * 9], 0.0f);
}

/// The data and labels of the next `batches` batches, one after another.
std::vector<float> NextBatches(Layer* layer, const std::vector<Blob*>& top, int batches) {
  std::vector<float> values;
  for (int b = 0; b < batches; ++b) {
    layer->Forward({}, top);
    for (const Blob* blob : top) {
      values.insert(values.end(), blob->cpu_data(), blob->cpu_data() + blob->count());
    }
  }
  return values;
}

// The read position is the first record Forward has not consumed, however
// far the prefetch thread has read; restored into a new layer, or into this
// one after it read on, the layer reads on from there (mirrored as before:
// the epoch is part of the position).
TEST_F(DataLayerTest, ARestoredReadPositionReadsOnFromTheFirstUnconsumedRecord) {
  data_params_ = "batch_size: 2 prefetch: 3";
  const std::string params = "phase: TRAIN transform_param { mirror: true }";
  auto layer = Make(params, source_);
  NextBatches(layer.get(), top_, 3);  // records 0 1 2 3 4 0
  DataReadPosition position;
  ASSERT_TRUE(layer->SaveReadPosition(&position));
  EXPECT_EQ(position.layer(), "d");
  EXPECT_EQ(position.type(), "Data");
  EXPECT_EQ(position.key(), "00000001");
  EXPECT_EQ(position.index(), 1);
  EXPECT_EQ(position.epoch(), 1);
  EXPECT_EQ(position.stream_position(), 6);
  EXPECT_EQ(position.source_records(), 5);
  const std::vector<float> next = NextBatches(layer.get(), top_, 4);

  auto fresh = Make(params, source_);
  fresh->RestoreReadPosition(position);
  EXPECT_EQ(NextBatches(fresh.get(), top_, 4), next);
  layer->RestoreReadPosition(position);
  EXPECT_EQ(NextBatches(layer.get(), top_, 4), next);
}

// A database changed since the position was saved: the layer finds the key
// (counting its index afresh) or else goes by the saved index, and says so.
TEST_F(DataLayerTest, ReadPositionInAChangedDatabaseWarns) {
  data_params_ = "batch_size: 2";
  auto layer = Make("phase: TEST", source_);
  NextBatches(layer.get(), top_, 1);
  DataReadPosition position;
  ASSERT_TRUE(layer->SaveReadPosition(&position));
  ASSERT_EQ(position.key(), "00000002");

  // Records 1 and 3: key 00000002 gone, the reader goes to index 2 % 2 = 0.
  std::vector<Datum> fewer = {Example(1), Example(3)};
  WriteDatumDB(dir_ / "fewer", fewer);
  auto changed = Make("phase: TEST", dir_ / "fewer");
  LogCapture log;
  changed->RestoreReadPosition(position);
  ASSERT_EQ(log.Containing("changed since the read position was saved (5 records then, 2 now; "
                           "key '00000002' gone)")
                .size(),
            1u)
      << ::testing::PrintToString(log.messages());
  changed->Forward({}, top_);
  EXPECT_EQ(DataOf(label_), (std::vector<float>{1, 3}));

  // Records 0 to 2 and two more: the key is there, at index 2 still.
  std::vector<Datum> more;
  for (int i = 0; i < 7; ++i) more.push_back(Example(i));
  WriteDatumDB(dir_ / "more", more);
  auto grown = Make("phase: TEST", dir_ / "more");
  grown->RestoreReadPosition(position);
  EXPECT_EQ(log.Containing("key '00000002' found").size(), 1u);
  grown->Forward({}, top_);
  EXPECT_EQ(DataOf(label_), (std::vector<float>{2, 3}));
  ASSERT_TRUE(grown->SaveReadPosition(&position));
  EXPECT_EQ(position.index(), 4);
}

}  // namespace
}  // namespace demi
