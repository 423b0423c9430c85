#include "common/api_enums.h"

#include "absl/status/status.h"

#include "gtest/gtest.h"

namespace fleetbench {
namespace {

TEST(TaskStateTest, OnlyEndStatesAreTerminal) {
  for (v1::TaskState s : {v1::TASK_STATE_UNSPECIFIED, v1::TASK_STATE_QUEUED,
                          v1::TASK_STATE_DISPATCHED, v1::TASK_STATE_RUNNING}) {
    EXPECT_FALSE(IsTerminal(s)) << TaskStateName(s);
  }
  for (v1::TaskState s : {v1::TASK_STATE_SUCCEEDED, v1::TASK_STATE_FAILED,
                          v1::TASK_STATE_SKIPPED, v1::TASK_STATE_CANCELLED,
                          v1::TASK_STATE_LOST}) {
    EXPECT_TRUE(IsTerminal(s)) << TaskStateName(s);
  }
}

TEST(TaskStateTest, OnlyDispatchedAndRunningAreInFlight) {
  for (v1::TaskState s : {v1::TASK_STATE_DISPATCHED, v1::TASK_STATE_RUNNING}) {
    EXPECT_TRUE(IsInFlight(s)) << TaskStateName(s);
  }
  for (v1::TaskState s : {v1::TASK_STATE_UNSPECIFIED, v1::TASK_STATE_QUEUED,
                          v1::TASK_STATE_SUCCEEDED, v1::TASK_STATE_LOST}) {
    EXPECT_FALSE(IsInFlight(s)) << TaskStateName(s);
  }
}

TEST(TaskStateTest, NamesAreTheOnesTheCliPrints) {
  EXPECT_EQ(TaskStateName(v1::TASK_STATE_QUEUED), "queued");
  EXPECT_EQ(TaskStateName(v1::TASK_STATE_DISPATCHED), "dispatched");
  EXPECT_EQ(TaskStateName(v1::TASK_STATE_RUNNING), "running");
  EXPECT_EQ(TaskStateName(v1::TASK_STATE_SUCCEEDED), "succeeded");
  EXPECT_EQ(TaskStateName(v1::TASK_STATE_FAILED), "failed");
  EXPECT_EQ(TaskStateName(v1::TASK_STATE_SKIPPED), "skipped");
  EXPECT_EQ(TaskStateName(v1::TASK_STATE_CANCELLED), "cancelled");
  EXPECT_EQ(TaskStateName(v1::TASK_STATE_LOST), "lost");
  EXPECT_EQ(TaskStateName(v1::TASK_STATE_UNSPECIFIED), "unspecified");
}

TEST(RunStateTest, NamesRoundTripAndOnlyEndsAreTerminal) {
  for (v1::RunState s : {v1::RUN_STATE_QUEUED, v1::RUN_STATE_RUNNING, v1::RUN_STATE_SUCCEEDED,
                         v1::RUN_STATE_FAILED, v1::RUN_STATE_CANCELLED}) {
    ASSERT_TRUE(RunStateFromName(RunStateName(s)).has_value()) << RunStateName(s);
    EXPECT_EQ(*RunStateFromName(RunStateName(s)), s);
  }
  EXPECT_EQ(RunStateName(v1::RUN_STATE_SUCCEEDED), "succeeded");
  EXPECT_FALSE(RunStateFromName("done").has_value());
  EXPECT_FALSE(IsTerminal(v1::RUN_STATE_RUNNING));
  EXPECT_FALSE(IsTerminal(v1::RUN_STATE_QUEUED));
  EXPECT_TRUE(IsTerminal(v1::RUN_STATE_CANCELLED));
}

TEST(RankGroupingTest, WordsParseAndUnknownOnesAreRefusedWithTheList) {
  EXPECT_EQ(*ParseRankGrouping("instance_type"), v1::RANK_GROUPING_INSTANCE_TYPE);
  EXPECT_EQ(*ParseRankGrouping("node"), v1::RANK_GROUPING_NODE);
  EXPECT_EQ(RankGroupingName(v1::RANK_GROUPING_UNSPECIFIED), "node");
  absl::StatusOr<v1::RankGrouping> bad = ParseRankGrouping("zone");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("instance_type, region, provider"), std::string::npos);
}

TEST(StatusCodeTest, NamesDropThePrefix) {
  EXPECT_EQ(StatusCodeName(v1::STATUS_CODE_DEADLINE_EXCEEDED), "DEADLINE_EXCEEDED");
  EXPECT_EQ(StatusCodeName(v1::STATUS_CODE_OK), "OK");
  EXPECT_EQ(NodeStatusName(v1::NODE_STATUS_OFFLINE), "offline");
}

TEST(ApiEnumsTest, PriceKindsReadAsTheirWords) {
  EXPECT_EQ(PriceKindName(v1::PRICE_KIND_UNSPECIFIED), "on_demand");
  EXPECT_EQ(PriceKindName(v1::PRICE_KIND_SPOT), "spot");
  EXPECT_EQ(*ParsePriceKind("on_demand"), v1::PRICE_KIND_ON_DEMAND);
  EXPECT_EQ(*ParsePriceKind("spot"), v1::PRICE_KIND_SPOT);
  auto bad = ParsePriceKind("reserved");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "price 'reserved' is not one of on_demand, spot");
}

TEST(InterruptionKindTest, NamesRoundTripAndUnknownOnesAreUnspecified) {
  for (v1::InterruptionKind k :
       {v1::INTERRUPTION_KIND_OFFLINE, v1::INTERRUPTION_KIND_AGENT_RESTART,
        v1::INTERRUPTION_KIND_PREEMPTED, v1::INTERRUPTION_KIND_CRITICAL_FINDING,
        v1::INTERRUPTION_KIND_ISOLATED, v1::INTERRUPTION_KIND_REVOKED}) {
    EXPECT_EQ(InterruptionKindOf(InterruptionKindName(k)), k) << InterruptionKindName(k);
  }
  EXPECT_EQ(InterruptionKindName(v1::INTERRUPTION_KIND_AGENT_RESTART), "agent_restart");
  EXPECT_EQ(InterruptionKindOf("meteor"), v1::INTERRUPTION_KIND_UNSPECIFIED);
}

}  // namespace
}  // namespace fleetbench
