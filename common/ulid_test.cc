#include "common/ulid.h"

#include <set>

#include "gtest/gtest.h"

namespace fleetbench {
namespace {

TEST(UlidTest, WellFormedAndUnique) {
  std::set<std::string> seen;
  for (int i = 0; i < 10000; ++i) {
    std::string id = NewUlid();
    ASSERT_TRUE(IsUlid(id)) << id;
    ASSERT_TRUE(seen.insert(id).second) << "duplicate " << id;
  }
}

TEST(UlidTest, SortsByTime) {
  absl::Time t = absl::FromUnixMillis(1700000000000);
  EXPECT_LT(NewUlid(t), NewUlid(t + absl::Milliseconds(1)));
  EXPECT_LT(NewUlid(t), NewUlid(t + absl::Hours(24 * 365)));
}

TEST(UlidTest, RejectsMalformed) {
  EXPECT_FALSE(IsUlid(""));
  EXPECT_FALSE(IsUlid("01ARZ3NDEKTSV4RRFFQ69G5FAU"));  // U is not base32
  EXPECT_TRUE(IsUlid("01ARZ3NDEKTSV4RRFFQ69G5FAV"));
}

}  // namespace
}  // namespace fleetbench
