// Group tasks and group runs in the store: what a restarted
// controller needs to dispatch a group again survives a reopen, the next
// pass's tasks join their run, and a version 5 file takes the new columns.
#include <filesystem>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/migrations.h"
#include "storage/sqlite_store.h"
#include "storage/store.h"
#include "storage/store_test_util.h"

namespace fleetbench::storage {
namespace {

using ::testing::ElementsAre;

TaskRecord Member(const std::string& id, const std::string& node, int rank) {
  TaskRecord t = MakeTask(id, "r1", node, kT0);
  t.group_id = "g1";
  t.group_rank = rank;
  t.group_members = {"n1", "n2", "n3"};
  t.group_pass = 1;
  return t;
}

// Eight names join to more than a short string holds inline: the joined
// text lives on the heap, where a temporary bound without a copy was freed
// and reused before the Step (the node list read back as "creating run r1").
TEST_P(StoreContractTest, LongGroupNodeAndMemberListsAreStoredWhole) {
  ASSERT_TRUE(store_->UpsertNode(MakeNode("node-01", "6.1", kT0)).ok());
  RunRecord run = MakeRun("r1", kT0);
  run.group.set_mode(v1::GROUP_MODE_ISOLATE);
  run.group_nodes = {"node-01", "node-02", "node-03", "node-04",
                     "node-05", "node-06", "node-07", "node-08"};
  TaskRecord member = Member("t0", "node-01", 0);
  member.group_members = run.group_nodes;
  const absl::Status created = store_->CreateRun(run, {member});
  ASSERT_TRUE(created.ok()) << created;
  Reopen();
  auto stored = store_->GetRun("r1");
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_EQ(stored->group_nodes, run.group_nodes);
  auto tasks = store_->ListTasks("r1");
  ASSERT_TRUE(tasks.ok()) << tasks.status();
  ASSERT_EQ(tasks->size(), 1u);
  EXPECT_EQ((*tasks)[0].group_members, run.group_nodes);
}

TEST_P(StoreContractTest, GroupTasksAndRunOptionsSurviveAReopen) {
  ASSERT_TRUE(store_->UpsertNode(MakeNode("n1", "6.1", kT0)).ok());
  RunRecord run = MakeRun("r1", kT0);
  run.group.set_mode(v1::GROUP_MODE_ISOLATE);
  run.group.set_threshold(0.2);
  run.group_nodes = {"n1", "n2", "n3"};
  ASSERT_TRUE(store_->CreateRun(run, {Member("t0", "n1", 0), Member("t1", "n2", 1),
                                      MakeTask("plain", "r1", "n3", kT0)})
                  .ok());
  Reopen();
  auto stored = store_->GetRun("r1");
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_EQ(stored->group.mode(), v1::GROUP_MODE_ISOLATE);
  EXPECT_DOUBLE_EQ(stored->group.threshold(), 0.2);
  EXPECT_THAT(stored->group_nodes, ElementsAre("n1", "n2", "n3"));
  auto tasks = store_->ListTasks("r1");
  ASSERT_TRUE(tasks.ok()) << tasks.status();
  ASSERT_EQ(tasks->size(), 3u);
  EXPECT_EQ((*tasks)[1].group_id, "g1");
  EXPECT_EQ((*tasks)[1].group_rank, 1);
  EXPECT_EQ((*tasks)[1].group_pass, 1);
  EXPECT_THAT((*tasks)[1].group_members, ElementsAre("n1", "n2", "n3"));
  EXPECT_EQ((*tasks)[2].group_id, "");
  EXPECT_TRUE((*tasks)[2].group_members.empty());

  // Rank 0's headline is written with the task; membership is not.
  TaskRecord t0 = (*tasks)[0];
  t0.group_metric = "allreduce.gloo.busbw_GBps";
  t0.group_value = 3.5;
  t0.group_rank = 7;  // ignored: membership never changes
  t0.state = v1::TASK_STATE_SUCCEEDED;
  ASSERT_TRUE(store_->UpdateTask(t0).ok());
  auto read = store_->GetTask("t0");
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->group_metric, "allreduce.gloo.busbw_GBps");
  EXPECT_DOUBLE_EQ(read->group_value, 3.5);
  EXPECT_EQ(read->group_rank, 0);
}

TEST_P(StoreContractTest, AddTasksJoinsAnExistingRunInOrder) {
  ASSERT_TRUE(store_->CreateRun(MakeRun("r1", kT0), {Member("t0", "n1", 0)}).ok());
  TaskRecord next = Member("t5", "n3", 0);
  next.group_id = "g2";
  next.group_pass = 2;
  ASSERT_TRUE(store_->AddTasks("r1", {next}).ok());
  auto tasks = store_->ListTasks("r1");
  ASSERT_TRUE(tasks.ok()) << tasks.status();
  ASSERT_EQ(tasks->size(), 2u);
  EXPECT_EQ((*tasks)[1].task_id, "t5");
  EXPECT_EQ((*tasks)[1].group_pass, 2);
  TaskRecord unplaced = Member("t9", "n1", 0);
  unplaced.run_id = "";
  EXPECT_EQ(store_->AddTasks("nope", {unplaced}).code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->AddTasks("r1", {next}).code(), absl::StatusCode::kAlreadyExists);
  TaskRecord other = Member("t8", "n1", 0);
  other.run_id = "r2";
  EXPECT_EQ(store_->AddTasks("r1", {other}).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->ListTasks("r1")->size(), 2u);  // nothing of a refused call
}

TEST_F(SqliteStoreTest, AVersionFiveFileTakesGroupColumns) {
  store_.reset();
  std::filesystem::remove(path_);
  SqliteOptions options;
  options.path = path_;
  {
    std::vector<SchemaMigration> v5(SchemaMigrations().begin(), SchemaMigrations().begin() + 5);
    ASSERT_EQ(v5.back().version, 5);
    auto old = OpenSqliteStoreWithMigrations(options, v5);
    ASSERT_TRUE(old.ok()) << old.status();
    ASSERT_TRUE((*old)->UpsertNode(MakeNode("n1", "6.1", kT0)).ok());
    ASSERT_TRUE((*old)->CreateRun(MakeRun("r0", kT0), {MakeTask("p0", "r0", "n1", kT0)}).ok());
    // The group columns of version 6 do not exist yet.
    EXPECT_FALSE((*old)->CreateRun(MakeRun("r1", kT0), {Member("t0", "n1", 0)}).ok());
  }
  Reopen();
  EXPECT_EQ(store_->ListNodes()->size(), 1u);
  auto kept = store_->GetTask("p0");
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_EQ(kept->group_id, "");
  EXPECT_TRUE(kept->group_members.empty());
  EXPECT_EQ(store_->GetRun("r0")->group.mode(), v1::GROUP_MODE_UNSPECIFIED);
  ASSERT_TRUE(store_->CreateRun(MakeRun("r1", kT0), {Member("t0", "n1", 0)}).ok());
  EXPECT_EQ(store_->GetTask("t0")->group_id, "g1");
  EXPECT_TRUE(store_->CheckIntegrity().ok());
}

}  // namespace
}  // namespace fleetbench::storage
