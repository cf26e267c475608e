// Sizes as flags give them: binary units (K, KiB, ...) are powers of 1024,
// decimal ones (KB, MB, GB) powers of 1000, as GNU coreutils read them.
#include <gtest/gtest.h>

#include "demi/util/byte_size.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

TEST(ByteSizeTest, BinaryAndDecimalUnits) {
  EXPECT_EQ(ParseByteSize("512", "--x"), 512u);
  EXPECT_EQ(ParseByteSize("512B", "--x"), 512u);
  EXPECT_EQ(ParseByteSize("64K", "--x"), 64u << 10);
  EXPECT_EQ(ParseByteSize("64KiB", "--x"), 64u << 10);
  EXPECT_EQ(ParseByteSize("64KB", "--x"), 64000u);
  EXPECT_EQ(ParseByteSize("2MiB", "--x"), 2u << 20);
  EXPECT_EQ(ParseByteSize("2MB", "--x"), 2000000u);
  EXPECT_EQ(ParseByteSize("1.5GiB", "--x"), size_t{3} << 29);
  EXPECT_EQ(ParseByteSize("1.5G", "--x"), size_t{3} << 29);
  EXPECT_EQ(ParseByteSize("1.5GB", "--x"), 1500000000u);
  ExpectErrorContaining([] { ParseByteSize("3TB", "--memory_budget"); },
                        {"--memory_budget: unknown unit 'TB' in '3TB'"});
  ExpectErrorContaining([] { ParseByteSize("lots", "--memory_budget"); },
                        {"--memory_budget: cannot read a size from 'lots'"});
}

}  // namespace
}  // namespace demi
