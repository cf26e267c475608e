#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "data_test_util.hpp"
#include "demi/layers/hdf5_data_layer.hpp"
#include "hdf5_test_util.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

/// Rows [first, first + rows): data row r is 2 x 3 with values 100 r + k,
/// label r (stored as int, read as float).
std::vector<H5Dataset> Rows(int first, int rows) {
  H5Dataset data{"data", {static_cast<hsize_t>(rows), 2, 3}, {}};
  H5Dataset label{"label", {static_cast<hsize_t>(rows)}, {}, H5T_NATIVE_INT};
  for (int r = first; r < first + rows; ++r) {
    for (int k = 0; k < 6; ++k) data.values.push_back(100 * r + k);
    label.values.push_back(r);
  }
  return {data, label};
}

class HDF5DataLayerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WriteH5(dir_ / "a.h5", Rows(0, 3));
    WriteH5(dir_ / "b.h5", Rows(3, 2));
    WriteFile(dir_ / "list.txt", dir_ / "a.h5" + "\n\n  " + dir_ / "b.h5" + "  \n");
  }

  std::unique_ptr<Layer> Make(const std::string& list, const std::string& extra,
                              uint32_t seed = 1701) {
    auto layer = MakeLayer(
        "name: 'h5' type: 'HDF5Data' top: 'data' top: 'label' "
        "hdf5_data_param { source: '" +
        list + "' " + extra + " }");
    Context context;
    context.seed = seed;
    layer->set_context(context);
    layer->SetUp({}, top_);
    return layer;
  }

  /// The labels of the next `batches` batches, one after another.
  std::vector<float> Labels(Layer* layer, int batches) {
    std::vector<float> labels;
    for (int b = 0; b < batches; ++b) {
      layer->Forward({}, top_);
      for (int64_t row = 0; row < label_.count(); ++row) {
        labels.push_back(label_.cpu_data()[row]);
        // Every data row travels with its label.
        EXPECT_EQ(data_.data_at(row, 1, 2, 0), 100 * label_.cpu_data()[row] + 5);
      }
    }
    return labels;
  }

  void ExpectSetUpError(const std::string& list, const std::vector<std::string>& parts) {
    ExpectErrorContaining([&] { Make(list, "batch_size: 2"); }, parts);
  }

  TempDir dir_;
  Blob data_, label_;
  std::vector<Blob*> top_{&data_, &label_};
};

TEST_F(HDF5DataLayerTest, ReadsTheValuesWrittenAcrossFilesAndWrapsAround) {
  auto layer = Make(dir_ / "list.txt", "batch_size: 4");
  EXPECT_EQ(data_.shape(), (std::vector<int64_t>{4, 2, 3}));
  EXPECT_EQ(label_.shape(), (std::vector<int64_t>{4}));
  EXPECT_EQ(static_cast<HDF5DataLayer*>(layer.get())->source_rows(), 5);
  layer->Forward({}, top_);
  EXPECT_EQ(DataOf(label_), (std::vector<float>{0, 1, 2, 3}));
  std::vector<float> expected(24);
  std::iota(expected.begin(), expected.begin() + 6, 0.0f);
  std::iota(expected.begin() + 6, expected.begin() + 12, 100.0f);
  std::iota(expected.begin() + 12, expected.begin() + 18, 200.0f);
  std::iota(expected.begin() + 18, expected.end(), 300.0f);
  EXPECT_EQ(DataOf(data_), expected);
  // The second batch spans the end of b.h5 and the wrap to a.h5.
  EXPECT_EQ(Labels(layer.get(), 2), (std::vector<float>{4, 0, 1, 2, 3, 4, 0, 1}));
}

TEST_F(HDF5DataLayerTest, ShuffleIsSeededAndEachPassReadsEveryRowOnce) {
  auto first = Make(dir_ / "list.txt", "batch_size: 5 shuffle: true");
  std::vector<float> labels = Labels(first.get(), 4);
  auto again = Make(dir_ / "list.txt", "batch_size: 5 shuffle: true");
  EXPECT_EQ(Labels(again.get(), 4), labels);
  auto other_seed = Make(dir_ / "list.txt", "batch_size: 5 shuffle: true", 7);
  EXPECT_NE(Labels(other_seed.get(), 4), labels);
  std::vector<float> in_order(5);
  std::iota(in_order.begin(), in_order.end(), 0.0f);
  std::vector<std::vector<float>> passes;
  for (int pass = 0; pass < 4; ++pass) {
    std::vector<float> rows(labels.begin() + 5 * pass, labels.begin() + 5 * pass + 5);
    passes.push_back(rows);
    // A file's rows are read together: a.h5's three rows are one run.
    const auto a_row = [](float label) { return label < 3; };
    const auto begin = std::find_if(rows.begin(), rows.end(), a_row);
    EXPECT_TRUE(std::all_of(begin, begin + 3, a_row)) << "pass " << pass;
    std::sort(rows.begin(), rows.end());
    EXPECT_EQ(rows, in_order) << "pass " << pass;
  }
  // Passes are shuffled anew: not all four alike.
  EXPECT_TRUE(passes[1] != passes[0] || passes[2] != passes[0] || passes[3] != passes[0]);
}

// The read position (pass, place in the file order, row in the file's
// order) is that of the first row Forward has not consumed: a new layer
// restored to it, or this one after reading on, reads the same rows next.
TEST_F(HDF5DataLayerTest, ARestoredReadPositionReadsOnFromTheFirstUnconsumedRow) {
  auto layer = Make(dir_ / "list.txt", "batch_size: 3 shuffle: true");
  Labels(layer.get(), 3);  // 9 rows: the second pass's fifth row is next
  DataReadPosition position;
  ASSERT_TRUE(layer->SaveReadPosition(&position));
  EXPECT_EQ(position.type(), "HDF5Data");
  EXPECT_EQ(position.epoch(), 1);
  EXPECT_EQ(position.stream_position(), 9);
  EXPECT_EQ(position.source_records(), 5);
  const std::vector<float> next = Labels(layer.get(), 4);
  auto fresh = Make(dir_ / "list.txt", "batch_size: 3 shuffle: true");
  fresh->RestoreReadPosition(position);
  EXPECT_EQ(Labels(fresh.get(), 4), next);
  layer->RestoreReadPosition(position);
  EXPECT_EQ(Labels(layer.get(), 4), next);
}

TEST_F(HDF5DataLayerTest, LabelsOfShapeNx1GiveATopOfShapeBx1) {
  WriteH5(dir_ / "c.h5", {{"data", {2, 1}, {5, 6}}, {"label", {2, 1}, {1, 0}}});
  WriteFile(dir_ / "c.txt", dir_ / "c.h5");
  auto layer = Make(dir_ / "c.txt", "batch_size: 3");
  EXPECT_EQ(label_.shape(), (std::vector<int64_t>{3, 1}));
  layer->Forward({}, top_);
  EXPECT_EQ(DataOf(data_), (std::vector<float>{5, 6, 5}));
  EXPECT_EQ(DataOf(label_), (std::vector<float>{1, 0, 1}));
}

TEST_F(HDF5DataLayerTest, BadInputIsNamed) {
  ExpectSetUpError(dir_ / "none.txt",
                   {"HDF5Data layer 'h5'", "cannot open HDF5 list", dir_ / "none.txt"});
  WriteFile(dir_ / "empty.txt", "\n  \n");
  ExpectSetUpError(dir_ / "empty.txt", {"HDF5 list", dir_ / "empty.txt", "is empty"});
  WriteFile(dir_ / "missing.txt", dir_ / "a.h5" + "\n" + dir_ / "gone.h5\n");
  ExpectSetUpError(dir_ / "missing.txt",
                   {"cannot open HDF5 file", dir_ / "gone.h5", "line 2 of", dir_ / "missing.txt"});
  WriteH5(dir_ / "nolabel.h5", {Rows(0, 2)[0]});
  WriteFile(dir_ / "nolabel.txt", dir_ / "nolabel.h5");
  ExpectSetUpError(dir_ / "nolabel.txt", {dir_ / "nolabel.h5", "has no dataset 'label'"});
  WriteH5(dir_ / "rows.h5", {Rows(0, 3)[0], Rows(0, 2)[1]});
  WriteFile(dir_ / "rows.txt", dir_ / "rows.h5");
  ExpectSetUpError(dir_ / "rows.txt", {dir_ / "rows.h5", "dataset 'label' has 2 rows",
                                       "dataset 'data' has 3", "same first dimension"});
  WriteH5(dir_ / "scalar.h5", {Rows(0, 1)[0], {"label", {}, {1}}});
  WriteFile(dir_ / "scalar.txt", dir_ / "scalar.h5");
  ExpectSetUpError(dir_ / "scalar.txt", {dir_ / "scalar.h5", "dataset 'label'", "is a scalar"});
  WriteH5(dir_ / "wide.h5", {{"data", {1, 3, 2}, {0, 1, 2, 3, 4, 5}}, {"label", {1}, {0}}});
  WriteFile(dir_ / "shapes.txt", dir_ / "a.h5" + "\n" + dir_ / "wide.h5");
  ExpectSetUpError(dir_ / "shapes.txt",
                   {"dataset 'data' of '" + dir_ / "wide.h5", "rows of shape 3 2", "of shape 2 3"});
  WriteH5(dir_ / "zero.h5", {{"data", {0, 2, 3}, {}}, {"label", {0}, {}}});
  WriteFile(dir_ / "zero.txt", dir_ / "zero.h5");
  ExpectSetUpError(dir_ / "zero.txt", {dir_ / "zero.h5", "has no rows"});
  ExpectErrorContaining([&] { Make(dir_ / "list.txt", ""); }, {"batch_size must be positive"});
  ExpectErrorContaining([&] { Make("", "batch_size: 1"); }, {"hdf5_data_param has no source"});
}

}  // namespace
}  // namespace demi
