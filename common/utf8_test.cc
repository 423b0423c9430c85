// ToValidUtf8: valid text passes unchanged, each bad byte shows as U+FFFD,
// and what it gives is a string protobuf's parser takes (the raw bytes are
// not: the reason this exists).
#include "common/utf8.h"

#include <string>

#include "fleetbench/v1/agent.pb.h"
#include "gtest/gtest.h"

namespace fleetbench {
namespace {

constexpr char kReplacement[] = "\xef\xbf\xbd";

TEST(Utf8Test, ValidTextIsUnchanged) {
  for (const std::string text : {"", "plain", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"}) {
    EXPECT_EQ(ToValidUtf8(text), text);
  }
}

TEST(Utf8Test, EachBadByteBecomesAReplacementCharacter) {
  EXPECT_EQ(ToValidUtf8("a\xff" "b"), std::string("a") + kReplacement + "b");
  EXPECT_EQ(ToValidUtf8("\xe9t\xe9"), std::string(kReplacement) + "t" + kReplacement)
      << "Latin-1 'ete'";
  EXPECT_EQ(ToValidUtf8("\xe2\x82"), std::string(kReplacement) + kReplacement)
      << "a cut sequence";
  EXPECT_EQ(ToValidUtf8("\xc0\xaf"), std::string(kReplacement) + kReplacement)
      << "an overlong '/'";
  EXPECT_EQ(ToValidUtf8("\xed\xa0\x80"),
            std::string(kReplacement) + kReplacement + kReplacement)
      << "a surrogate";
}

TEST(Utf8Test, WhatItGivesCrossesTheWireWhereTheRawBytesDoNot) {
  const std::string raw = "loss=0.5 \xe9poch \xff\xfe\n";
  v1::Report report;
  report.set_task_log(raw);
  v1::Report back;
  EXPECT_FALSE(back.ParseFromString(report.SerializeAsString()))
      << "protobuf refuses a proto3 string that is not UTF-8";
  report.set_task_log(ToValidUtf8(raw));
  ASSERT_TRUE(back.ParseFromString(report.SerializeAsString()));
  EXPECT_EQ(back.task_log(), ToValidUtf8(raw));
}

}  // namespace
}  // namespace fleetbench
