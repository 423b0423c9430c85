#include "controller/core/page_tokens.h"

#include "absl/status/status.h"
#include "gtest/gtest.h"

namespace fleetbench::controller {
namespace {

TEST(PageTokensTest, RunsTokenRoundTrips) {
  auto parsed = ParseRunsPageToken(RunsPageToken("01JRUN"));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(*parsed, "01JRUN");
}

TEST(PageTokensTest, HistoryTokenRoundTripsForItsOwnQueryOnly) {
  const std::string token = HistoryPageToken("n1", "mem.triad.GBps", {1234, "01JS"});
  auto parsed = ParseHistoryPageToken(token, "n1", "mem.triad.GBps");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->time_ms, 1234);
  EXPECT_EQ(parsed->id, "01JS");
  EXPECT_EQ(ParseHistoryPageToken(token, "n2", "mem.triad.GBps").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseHistoryPageToken(token, "n1", "mem.copy.GBps").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(PageTokensTest, ForeignAndGarbledTokensAreRefused) {
  const std::string history = HistoryPageToken("n1", "m.us", {1, "x"});
  EXPECT_EQ(ParseRunsPageToken(history).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseHistoryPageToken(RunsPageToken("r"), "n1", "m.us").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseRunsPageToken("not base64 at all!").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseRunsPageToken("").status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace fleetbench::controller
