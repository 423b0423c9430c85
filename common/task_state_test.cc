#include "common/task_state.h"

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

}  // namespace
}  // namespace fleetbench
