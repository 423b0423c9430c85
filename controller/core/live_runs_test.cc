// LiveRuns on its own: what is kept about an unfinished task goes with it,
// the newest copy of a task, the counts dispatch asks for, the promised
// reports that fall due, and the writes kept for the store retry. The
// lifecycle's rules over it are tested through FleetCore
// (fleet_core_dispatch_test.cc, fleet_core_ingest_test.cc).
#include "controller/core/live_runs.h"

#include <string>

#include "gmock/gmock.h"

namespace fleetbench::controller {
namespace {

using ::testing::ElementsAre;

const absl::Time kNow = absl::FromUnixSeconds(1'700'000'000);

storage::TaskRecord Task(const std::string& id, const std::string& run, const std::string& node,
                         v1::TaskState state) {
  storage::TaskRecord t;
  t.task_id = id;
  t.run_id = run;
  t.node = node;
  t.state = state;
  return t;
}

TEST(LiveRunsTest, EndingATaskDropsEverythingKeptAboutIt) {
  LiveRuns live;
  live.AddTask(Task("t1", "r1", "n1", v1::TASK_STATE_RUNNING));
  live.SetProgress("t1", {"gemm", 0.5, "half"});
  live.PromiseReport("t1", kNow);
  live.AwaitPort("t1");
  ASSERT_NE(live.ProgressOf("t1"), nullptr);
  EXPECT_EQ(live.ProgressOf("t1")->message, "half");

  live.EndTask("t1");
  EXPECT_EQ(live.FindTask("t1"), nullptr);
  EXPECT_EQ(live.ProgressOf("t1"), nullptr);
  EXPECT_FALSE(live.ReportPromised("t1"));
  EXPECT_FALSE(live.AwaitingPort("t1"));
  EXPECT_TRUE(live.PromisesDue(kNow + absl::Hours(1)).empty());
}

TEST(LiveRunsTest, TheNewestCopyIsTheUnfinishedTaskThenTheUnstoredEnd) {
  LiveRuns live;
  const storage::TaskRecord stored = Task("t1", "r1", "n1", v1::TASK_STATE_QUEUED);
  EXPECT_EQ(live.Newest(stored).state, v1::TASK_STATE_QUEUED);
  live.AddTask(Task("t1", "r1", "n1", v1::TASK_STATE_RUNNING));
  EXPECT_EQ(live.Newest(stored).state, v1::TASK_STATE_RUNNING);
  live.KeepUnstoredEnd(Task("t1", "r1", "n1", v1::TASK_STATE_SUCCEEDED));
  live.EndTask("t1");
  EXPECT_EQ(live.Newest(stored).state, v1::TASK_STATE_SUCCEEDED);
  EXPECT_TRUE(live.HasUnstoredWrites());
  live.EndStored("t1");
  EXPECT_EQ(live.Newest(stored).state, v1::TASK_STATE_QUEUED);
  EXPECT_FALSE(live.HasUnstoredWrites());
  live.NoteUnsettled("r1");
  EXPECT_TRUE(live.HasUnstoredWrites());
  live.Settled("r1");
  EXPECT_FALSE(live.HasUnstoredWrites());
}

TEST(LiveRunsTest, BusyAndInFlightCountOnlyDispatchedAndRunningTasks) {
  LiveRuns live;
  live.AddTask(Task("t1", "r1", "n1", v1::TASK_STATE_QUEUED));
  live.AddTask(Task("t2", "r1", "n2", v1::TASK_STATE_DISPATCHED));
  live.AddTask(Task("t3", "r1", "n3", v1::TASK_STATE_RUNNING));
  live.AddTask(Task("t4", "r2", "n1", v1::TASK_STATE_RUNNING));
  EXPECT_EQ(live.InFlight("r1"), 2u);
  EXPECT_EQ(live.InFlight("r2"), 1u);
  EXPECT_TRUE(live.NodeBusy("n1")) << "r2's task";
  EXPECT_TRUE(live.NodeBusy("n2"));
  EXPECT_FALSE(live.NodeBusy("n4"));
  EXPECT_THAT(live.RunsOnNode("n1"), ElementsAre("r1", "r2"));
  EXPECT_THAT(live.TaskIdsOfNode("n1"), ElementsAre("t4")) << "t1 is still queued";
}

TEST(LiveRunsTest, TheNodesTaskIdsOutliveTheTasksTheCallerEnds) {
  LiveRuns live;
  live.AddTask(Task("t1", "r1", "n1", v1::TASK_STATE_RUNNING));
  live.AddTask(Task("t2", "r1", "n1", v1::TASK_STATE_DISPATCHED));
  live.AddTask(Task("t3", "r1", "n2", v1::TASK_STATE_RUNNING));
  int ended = 0;
  for (const std::string& id : live.TaskIdsOfNode("n1")) {
    if (live.FindTask(id) == nullptr) continue;
    // Ending the first ends its partner as well, as a pair's end does.
    live.EndTask("t1");
    live.EndTask("t2");
    ++ended;
  }
  EXPECT_EQ(ended, 1);
  EXPECT_EQ(live.tasks().size(), 1u);
}

TEST(LiveRunsTest, PromisedReportsFallDueAtTheirTime) {
  LiveRuns live;
  live.PromiseReport("t2", kNow + absl::Seconds(15));
  live.PromiseReport("t1", kNow + absl::Seconds(5));
  EXPECT_TRUE(live.PromisesDue(kNow).empty());
  EXPECT_THAT(live.PromisesDue(kNow + absl::Seconds(5)), ElementsAre("t1"));
  EXPECT_THAT(live.PromisesDue(kNow + absl::Seconds(15)), ElementsAre("t1", "t2"));
  live.ReportCame("t1");
  EXPECT_THAT(live.PromisesDue(kNow + absl::Seconds(15)), ElementsAre("t2"));
}

TEST(LiveRunsTest, ARunThatLeavesForgetsItsCancellation) {
  LiveRuns live;
  storage::RunRecord run;
  run.run_id = "r1";
  run.state = "running";
  live.AddRun(run);
  live.NoteCancelledByUser("r1");
  ASSERT_NE(live.FindRun("r1"), nullptr);
  EXPECT_TRUE(live.CancelledByUser("r1"));
  live.EraseRun("r1");
  EXPECT_FALSE(live.HasRun("r1"));
  EXPECT_FALSE(live.CancelledByUser("r1"));
}

}  // namespace
}  // namespace fleetbench::controller
