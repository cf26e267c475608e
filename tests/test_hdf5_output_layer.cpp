#include <gtest/gtest.h>

#include "data_test_util.hpp"
#include "demi/layers/hdf5_output_layer.hpp"
#include "hdf5_test_util.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

class HDF5OutputLayerTest : public ::testing::Test {
 protected:
  std::unique_ptr<Layer> Make(const std::string& file_name) {
    auto layer = MakeLayer(
        "name: 'out' type: 'HDF5Output' bottom: 'data' bottom: 'label' "
        "hdf5_output_param { file_name: '" +
        file_name + "' }");
    layer->SetUp(bottom_, {});
    return layer;
  }

  TempDir dir_;
  Blob data_{{2, 3, 2}}, label_{{2}};
  std::vector<Blob*> bottom_{&data_, &label_};
};

TEST_F(HDF5OutputLayerTest, AppendsEveryBatchAndHDF5DataReadsThemBack) {
  const std::string path = dir_ / "out.h5";
  {
    auto layer = Make(path);
    for (int batch = 0; batch < 2; ++batch) {
      FillValues(&data_, Iota(12, 100.0f * batch));
      FillValues(&label_, {2.0f * batch, 2.0f * batch + 1});
      layer->Forward(bottom_, {});
    }
  }
  std::vector<hsize_t> shape;
  std::vector<double> data = ReadH5(path, "data", &shape);
  EXPECT_EQ(shape, (std::vector<hsize_t>{4, 3, 2}));
  ASSERT_EQ(data.size(), 24u);
  EXPECT_EQ(data[0], 0);
  EXPECT_EQ(data[11], 11);
  EXPECT_EQ(data[12], 100);
  EXPECT_EQ(data[23], 111);
  EXPECT_EQ(ReadH5(path, "label", &shape), (std::vector<double>{0, 1, 2, 3}));
  EXPECT_EQ(shape, (std::vector<hsize_t>{4}));

  // The round trip: HDF5Data reads the rows written, in order.
  WriteFile(dir_ / "list.txt", path);
  auto reader = MakeLayer(
      "name: 'in' type: 'HDF5Data' top: 'data' top: 'label' "
      "hdf5_data_param { source: '" +
      dir_ / "list.txt" + "' batch_size: 4 }");
  Blob data_in, label_in;
  reader->SetUp({}, {&data_in, &label_in});
  reader->Forward({}, {&data_in, &label_in});
  EXPECT_EQ(data_in.shape(), (std::vector<int64_t>{4, 3, 2}));
  std::vector<float> expected = Iota(12, 0.0f);
  const std::vector<float> second = Iota(12, 100.0f);
  expected.insert(expected.end(), second.begin(), second.end());
  EXPECT_EQ(DataOf(data_in), expected);
  EXPECT_EQ(DataOf(label_in), (std::vector<float>{0, 1, 2, 3}));
}

TEST_F(HDF5OutputLayerTest, BadSetupsAreNamed) {
  ExpectErrorContaining([&] { Make(""); }, {"HDF5Output layer 'out'", "no file_name"});
  ExpectErrorContaining(
      [&] { Make(dir_ / "no/such/dir.h5"); },
      {"HDF5Output layer 'out'", "cannot create HDF5 file", dir_ / "no/such/dir.h5"});
  label_.Reshape({3});
  ExpectErrorContaining([&] { Make(dir_ / "x.h5"); },
                        {"HDF5Output layer 'out'", "same first dimension"});
}

}  // namespace
}  // namespace demi
