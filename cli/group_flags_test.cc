// `run`'s group flags to GroupOptions, and the refusals (exit 2 upstream).
#include "cli/group_flags.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetbench::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

absl::StatusOr<std::optional<v1::GroupOptions>> Parse(const std::vector<std::string>& argv) {
  absl::StatusOr<Args> args = ParseArgs(argv, GroupFlags());
  if (!args.ok()) return args.status();
  return GroupOptionsFromArgs(*args);
}

std::string Error(const std::vector<std::string>& argv) {
  auto parsed = Parse(argv);
  EXPECT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(parsed.status().message());
}

TEST(GroupFlagsTest, NoModeLeavesTheRequestAlone) {
  auto parsed = Parse({});
  ASSERT_TRUE(parsed.ok());
  EXPECT_FALSE(parsed->has_value());
}

TEST(GroupFlagsTest, EachMode) {
  auto group = Parse({"--group"});
  ASSERT_TRUE(group.ok() && group->has_value());
  EXPECT_EQ((*group)->mode(), v1::GROUP_MODE_GROUP);

  auto scaling = Parse({"--scaling", "1,2,4,8"});
  ASSERT_TRUE(scaling.ok() && scaling->has_value());
  EXPECT_EQ((*scaling)->mode(), v1::GROUP_MODE_SCALING);
  EXPECT_THAT((*scaling)->scaling(), ElementsAre(1, 2, 4, 8));

  auto isolate = Parse({"--isolate", "--expect-busbw", "11.5", "--threshold=0.3", "--bisect"});
  ASSERT_TRUE(isolate.ok() && isolate->has_value()) << isolate.status();
  EXPECT_EQ((*isolate)->mode(), v1::GROUP_MODE_ISOLATE);
  EXPECT_DOUBLE_EQ((*isolate)->expect_busbw_gbps(), 11.5);
  EXPECT_DOUBLE_EQ((*isolate)->threshold(), 0.3);
  EXPECT_TRUE((*isolate)->bisect());

  // Defaults stay 0: the controller's documented defaults apply.
  auto plain = Parse({"--isolate"});
  ASSERT_TRUE(plain.ok() && plain->has_value());
  EXPECT_EQ((*plain)->threshold(), 0);
  EXPECT_EQ((*plain)->expect_busbw_gbps(), 0);
  EXPECT_FALSE((*plain)->bisect());
}

TEST(GroupFlagsTest, ModesExcludeEachOther) {
  EXPECT_THAT(Error({"--group", "--isolate"}), HasSubstr("at most one of --group"));
  EXPECT_THAT(Error({"--group", "--scaling", "2"}), HasSubstr("at most one of"));
}

TEST(GroupFlagsTest, IsolateOptionsNeedIsolate) {
  EXPECT_EQ(Error({"--bisect"}), "--bisect needs --isolate");
  EXPECT_EQ(Error({"--group", "--threshold", "0.1"}), "--threshold needs --isolate");
  EXPECT_EQ(Error({"--expect-busbw", "10"}), "--expect-busbw needs --isolate");
}

TEST(GroupFlagsTest, BadFiguresAreRefused) {
  EXPECT_THAT(Error({"--scaling", "1,two"}), HasSubstr("'two' is not one"));
  EXPECT_THAT(Error({"--scaling", "0,2"}), HasSubstr("'0' is not one"));
  EXPECT_THAT(Error({"--scaling", ""}), HasSubstr("node counts"));
  EXPECT_THAT(Error({"--scaling", "4,2"}), HasSubstr("strictly ascending; 2 follows 4"));
  EXPECT_THAT(Error({"--scaling", "2,2"}), HasSubstr("strictly ascending"));
  EXPECT_THAT(Error({"--isolate", "--threshold", "1"}), HasSubstr("between 0 and 1"));
  EXPECT_THAT(Error({"--isolate", "--threshold", "-0.1"}), HasSubstr("between 0 and 1"));
  EXPECT_THAT(Error({"--isolate", "--threshold", "nan"}), HasSubstr("between 0 and 1"));
  EXPECT_THAT(Error({"--isolate", "--expect-busbw", "0"}), HasSubstr("above 0"));
  EXPECT_THAT(Error({"--isolate", "--expect-busbw", "inf"}), HasSubstr("above 0"));
  EXPECT_THAT(Error({"--isolate", "--expect-busbw", "fast"}), HasSubstr("'fast'"));
}

}  // namespace
}  // namespace fleetbench::cli
