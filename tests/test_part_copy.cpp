#include <gtest/gtest.h>

#include "demi/layers/part_copy.hpp"
#include "demi/util/math.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

// A whole of shape 2 x 5 x 3 along axis 1 is the parts 2 x 2 x 3 and
// 2 x 3 x 3 side by side: each of its 2 rows holds 6 floats of the first
// part, then 9 of the second.
class PartCopyTest : public ::testing::Test {
 protected:
  PartCopyTest() : first_({2, 2, 3}), second_({2, 3, 3}), whole_({2, 5, 3}) {
    FillValues(&first_, Iota(12, 100));
    FillValues(&second_, Iota(18, 200));
  }
  Blob first_, second_, whole_;
  std::vector<Blob*> parts_{&first_, &second_};
};

TEST_F(PartCopyTest, GatherPlacesEachPartsRowsByHand) {
  GatherParts(Device::kCPU, 1, BlobField::kData, parts_, &whole_);
  std::vector<float> expected;
  for (int row = 0; row < 2; ++row) {
    for (int i = 0; i < 6; ++i) expected.push_back(100 + row * 6 + i);
    for (int i = 0; i < 9; ++i) expected.push_back(200 + row * 9 + i);
  }
  EXPECT_EQ(DataOf(whole_), expected);
}

TEST_F(PartCopyTest, ScatterIsGathersInverseOnDiffs) {
  FillValues(&whole_, Iota(30, 1));
  Copy(30, whole_.cpu_data(), whole_.mutable_cpu_diff());
  ScatterParts(Device::kCPU, 1, BlobField::kDiff, whole_, parts_, {true, true});
  Blob again({2, 5, 3});
  GatherParts(Device::kCPU, 1, BlobField::kDiff, parts_, &again);
  EXPECT_EQ(DiffOf(again), DataOf(whole_));
  // The second part's first row starts after the first part's 6 floats.
  EXPECT_EQ(second_.cpu_diff()[0], 7.0f);
}

TEST_F(PartCopyTest, ScatterLeavesUnwantedPartsAlone) {
  FillValues(&whole_, Iota(30, 1));
  ScatterParts(Device::kCPU, 1, BlobField::kData, whole_, parts_, {false, true});
  EXPECT_EQ(DataOf(first_), Iota(12, 100));
  EXPECT_EQ(second_.cpu_data()[9], 22.0f);  // row 1 of the whole starts at 16, plus 6
}

TEST_F(PartCopyTest, AlongTheFirstAxisThePartsFollowEachOther) {
  Blob a({1, 4}), b({3, 4}), whole({4, 4});
  FillValues(&a, Iota(4, 1));
  FillValues(&b, Iota(12, 5));
  GatherParts(Device::kCPU, 0, BlobField::kData, {&a, &b}, &whole);
  EXPECT_EQ(DataOf(whole), Iota(16, 1));
}

}  // namespace
}  // namespace demi
