#include <gtest/gtest.h>

#include <limits>

#include "demi/util/checked_math.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

TEST(CheckedMathTest, ProductsAndSumsThatFitAreExact) {
  EXPECT_EQ(CheckedMul(int64_t{100000} * 100000, int64_t{1000}, "x"), int64_t{10000000000000});
  EXPECT_EQ(CheckedAdd(size_t{1} << 62, size_t{1} << 62, "x"), size_t{1} << 63);
  EXPECT_EQ(CheckedMul(size_t{0}, std::numeric_limits<size_t>::max(), "x"), 0u);
}

TEST(CheckedMathTest, OverflowThrowsNamingTheFigure) {
  const int64_t big = std::numeric_limits<int64_t>::max() / 2 + 1;
  ExpectErrorContaining([&] { CheckedMul(big, int64_t{2}, "shape of 'x'"); },
                        {"shape of 'x' overflows"});
  ExpectErrorContaining(
      [] { CheckedAdd(std::numeric_limits<size_t>::max(), size_t{1}, "bytes of 'y'"); },
      {"bytes of 'y' overflows"});
  // A function describing the figure is called only when it overflows.
  int calls = 0;
  auto what = [&] {
    ++calls;
    return std::string("the lazily named figure");
  };
  CheckedAdd(size_t{1}, size_t{2}, what);
  EXPECT_EQ(calls, 0);
  ExpectErrorContaining([&] { CheckedMul(size_t{1} << 40, size_t{1} << 40, what); },
                        {"the lazily named figure overflows"});
  EXPECT_EQ(calls, 1);
}

TEST(CheckedMathTest, CountOfDims) {
  int64_t count = -1;
  EXPECT_TRUE(CountOfDims({}, &count));
  EXPECT_EQ(count, 1);
  EXPECT_TRUE(CountOfDims({2, 3, 4}, &count));
  EXPECT_EQ(count, 24);
  EXPECT_FALSE(CountOfDims({100000, 100000, 100000, 100000}, &count));
  // A zero anywhere, even after a product that overflowed, gives 0.
  EXPECT_TRUE(CountOfDims({100000, 100000, 100000, 100000, 0}, &count));
  EXPECT_EQ(count, 0);
}

}  // namespace
}  // namespace demi
