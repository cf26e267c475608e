#include <gtest/gtest.h>

#include "demi/blob.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

TEST(BlobTest, ShapeCountAndLegacyAccessors) {
  Blob blob({2, 3, 4, 5});
  EXPECT_EQ(blob.count(), 120);
  EXPECT_EQ(blob.count(1), 60);
  EXPECT_EQ(blob.count(1, 3), 12);
  EXPECT_EQ(blob.num(), 2);
  EXPECT_EQ(blob.channels(), 3);
  EXPECT_EQ(blob.height(), 4);
  EXPECT_EQ(blob.width(), 5);
  EXPECT_EQ(blob.shape(-1), 5);
  EXPECT_EQ(blob.offset(1, 2, 3, 4), 119);
  EXPECT_EQ(blob.shape_string(), "2 3 4 5 (120)");
  Blob vec({7});
  EXPECT_EQ(vec.channels(), 1);  // missing trailing axes read as 1
}

TEST(BlobTest, ScalarBlobHasCountOne) {
  Blob scalar(std::vector<int64_t>{});
  EXPECT_EQ(scalar.num_axes(), 0);
  EXPECT_EQ(scalar.count(), 1);
}

TEST(BlobTest, ShapesThatOverflowAreAnError) {
  Blob blob;
  // The count itself wraps.
  ExpectErrorContaining(
      [&] {
        blob.Reshape({100000, 100000, 100000, 100000});
      },
      {"blob shape 100000 100000 100000 100000 (count overflows) overflows"});
  // The count fits, its bytes do not.
  ExpectErrorContaining(
      [&] {
        blob.Reshape({1000000, 1000000, 1000000, 5});
      },
      {"1000000 1000000 1000000 5 (5000000000000000000) overflows"});
  // A zero makes any product empty.
  blob.Reshape({100000, 100000, 100000, 100000, 0});
  EXPECT_EQ(blob.count(), 0);
  // A big shape that fits is only counted: nothing is allocated yet.
  blob.Reshape({100000, 100000, 1000});
  EXPECT_EQ(blob.count(), int64_t{10000000000000});
  EXPECT_EQ(blob.data()->size(), size_t{40000000000000});
}

TEST(BlobTest, BadAxisIsAnError) {
  Blob blob({2, 3});
  ExpectErrorContaining([&] { blob.CanonicalAxisIndex(2); }, {"axis 2", "2 3 (6)"});
  ExpectErrorContaining([&] { blob.CanonicalAxisIndex(-3); }, {"axis -3"});
  EXPECT_EQ(blob.CanonicalAxisIndex(-1), 1);
}

TEST(BlobTest, ShrinkingKeepsTheAllocation) {
  Blob blob({4, 100});
  const void* before = blob.mutable_cpu_data();
  blob.Reshape({2, 100});
  EXPECT_EQ(blob.mutable_cpu_data(), before);
  EXPECT_EQ(blob.data()->capacity(), 400 * sizeof(float));
  blob.Reshape({4, 100});
  EXPECT_EQ(blob.mutable_cpu_data(), before);  // still within capacity
  blob.Reshape({5, 100});
  EXPECT_EQ(blob.data()->capacity(), 500 * sizeof(float));
}

TEST(BlobTest, ShareDataAndDiff) {
  Blob a({2, 2}), b({4});
  FillValues(&a, {1, 2, 3, 4});
  b.ShareData(a);
  EXPECT_EQ(b.cpu_data(), a.cpu_data());
  b.mutable_cpu_data()[3] = 9;
  EXPECT_EQ(a.cpu_data()[3], 9);
  b.ShareDiff(a);
  EXPECT_EQ(b.cpu_diff(), a.cpu_diff());
}

TEST(BlobTest, UpdateSubtractsDiff) {
  Blob blob({3});
  FillValues(&blob, {1, 2, 3});
  std::vector<float> diff{0.5, -1, 2};
  std::copy(diff.begin(), diff.end(), blob.mutable_cpu_diff());
  blob.Update();
  EXPECT_EQ(DataOf(blob), (std::vector<float>{0.5, 3, 1}));
  EXPECT_DOUBLE_EQ(blob.asum_data(), 4.5);
  EXPECT_DOUBLE_EQ(blob.sumsq_diff(), 0.25 + 1 + 4);
  blob.scale_data(2);
  EXPECT_EQ(DataOf(blob), (std::vector<float>{1, 6, 2}));
}

TEST(BlobTest, ProtoRoundTripWithShape) {
  Blob blob({2, 3});
  FillValues(&blob, {1, 2, 3, 4, 5, 6});
  BlobProto proto;
  blob.ToProto(&proto);
  Blob copy;
  copy.FromProto(proto);
  EXPECT_EQ(copy.shape(), blob.shape());
  EXPECT_EQ(DataOf(copy), DataOf(blob));
}

TEST(BlobTest, FromLegacyDimsAndDoubleData) {
  BlobProto proto;
  proto.set_num(1);
  proto.set_channels(2);
  proto.set_height(1);
  proto.set_width(2);
  for (double v : {1.5, 2.5, 3.5, 4.5}) proto.add_double_data(v);
  Blob blob;
  blob.FromProto(proto);
  EXPECT_EQ(blob.shape(), (std::vector<int64_t>{1, 2, 1, 2}));
  EXPECT_EQ(DataOf(blob), (std::vector<float>{1.5, 2.5, 3.5, 4.5}));
  // A 1-D blob of 4 matches legacy dims 1 1 1 4 (left-padded with ones).
  Blob vec({4});
  BlobProto legacy;
  legacy.set_num(1);
  legacy.set_channels(1);
  legacy.set_height(1);
  legacy.set_width(4);
  EXPECT_TRUE(vec.ShapeEquals(legacy));
}

TEST(BlobTest, FromProtoWithWrongCountIsAnError) {
  BlobProto proto;
  proto.mutable_shape()->add_dim(3);
  proto.add_data(1);
  Blob blob;
  ExpectErrorContaining([&] { blob.FromProto(proto); }, {"1 values", "needs 3"});
}

}  // namespace
}  // namespace demi
