#include "common/number_text.h"

#include "gtest/gtest.h"

namespace fleetbench {
namespace {

TEST(NumberTextTest, DecimalsShrinkAsNumbersGrow) {
  EXPECT_EQ(FormatForPeople(0), "0.0000");
  EXPECT_EQ(FormatForPeople(1.23456), "1.2346");
  EXPECT_EQ(FormatForPeople(12.3456), "12.35");
  EXPECT_EQ(FormatForPeople(1234.56), "1235");
  EXPECT_EQ(FormatForPeople(-12.3456), "-12.35");
}

TEST(NumberTextTest, TinyAndHugeNumbersKeepFourSignificantDigits) {
  EXPECT_EQ(FormatForPeople(0.000123456), "0.0001235");
  EXPECT_EQ(FormatForPeople(1.23456e10), "1.235e+10");
}

}  // namespace
}  // namespace fleetbench
