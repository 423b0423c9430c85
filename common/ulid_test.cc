#include "common/ulid.h"

#include <array>
#include <cstdint>
#include <set>
#include <string>

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
  absl::Time t = absl::FromUnixMillis(2000000000000);
  const std::string first = NewUlid(t);
  const std::string later = NewUlid(t + absl::Milliseconds(1));
  const std::string much_later = NewUlid(t + absl::Hours(24 * 365));
  EXPECT_LT(first, later);
  EXPECT_LT(later, much_later);
  // The time part is the first 10 characters.
  EXPECT_NE(first.substr(0, 10), much_later.substr(0, 10));
}

TEST(UlidTest, MonotonicWithinAMillisecond) {
  absl::Time t = absl::FromUnixMillis(1900000000000);
  std::string prev = NewUlid(t);
  for (int i = 0; i < 1000; ++i) {
    std::string next = NewUlid(t);
    ASSERT_LT(prev, next);
    prev = next;
  }
  // A clock that steps back still yields increasing ids.
  EXPECT_LT(prev, NewUlid(t - absl::Seconds(1)));
}

TEST(UlidTest, RejectsMalformed) {
  EXPECT_FALSE(IsUlid(""));
  EXPECT_FALSE(IsUlid("01ARZ3NDEKTSV4RRFFQ69G5FAU"));  // U is not base32
  EXPECT_TRUE(IsUlid("01ARZ3NDEKTSV4RRFFQ69G5FAV"));
  EXPECT_FALSE(IsUlid("01arz3ndektsv4rrffq69g5fav"));  // lower case: not ours
  EXPECT_FALSE(IsUlid(std::string("01ARZ3NDEKTSV4RRFFQ69G5FA\0", 26)));
  EXPECT_FALSE(IsUlid("01ARZ3NDEKTSV4RRFFQ69G5FA\xc9"));  // high bytes
  for (char c : std::string("ILOU")) {  // Crockford leaves these out
    EXPECT_FALSE(IsUlid(std::string(25, '0') + c)) << c;
  }
}

TEST(UlidTest, BytesRoundTripAndKeepTheOrder) {
  std::string prev;
  std::array<uint8_t, 16> prev_bytes{};
  const absl::Time t = absl::FromUnixSeconds(1'700'000'000);
  for (int i = 0; i < 1000; ++i) {
    const std::string id = NewUlid(t + absl::Milliseconds(i / 3));
    const auto bytes = UlidBytes(id);
    ASSERT_TRUE(bytes.has_value()) << id;
    EXPECT_EQ(UlidFromBytes(*bytes), id);
    if (!prev.empty()) {
      EXPECT_LT(prev_bytes, *bytes) << prev << " " << id;
    }
    prev = id;
    prev_bytes = *bytes;
  }
  // The largest ULID and the smallest.
  EXPECT_EQ(UlidFromBytes(*UlidBytes("7ZZZZZZZZZZZZZZZZZZZZZZZZZ")), "7ZZZZZZZZZZZZZZZZZZZZZZZZZ");
  std::array<uint8_t, 16> ones;
  ones.fill(0xFF);
  EXPECT_EQ(*UlidBytes("7ZZZZZZZZZZZZZZZZZZZZZZZZZ"), ones);
  EXPECT_EQ(UlidFromBytes(std::array<uint8_t, 16>{}), std::string(26, '0'));
}

TEST(UlidTest, BytesOnlyForCanonicalIds) {
  EXPECT_FALSE(UlidBytes("").has_value());
  EXPECT_FALSE(UlidBytes("s1").has_value());
  EXPECT_FALSE(UlidBytes("8ZZZZZZZZZZZZZZZZZZZZZZZZZ").has_value());  // 130 bits
  EXPECT_FALSE(UlidBytes("01arz3ndektsv4rrffq69g5fav").has_value());
  EXPECT_FALSE(UlidBytes("01ARZ3NDEKTSV4RRFFQ69G5FAU").has_value());
  EXPECT_FALSE(UlidBytes("01ARZ3NDEKTSV4RRFFQ69G5FAV0").has_value());
  EXPECT_TRUE(UlidBytes("01ARZ3NDEKTSV4RRFFQ69G5FAV").has_value());
}

}  // namespace
}  // namespace fleetbench
