// What only the PostgreSQL backend has, against a real server (the store
// contract itself runs on it in the contract suite): its schema refused
// from a newer build and migrated once when two controllers start at once,
// and a connection lost under it: between calls it costs at most one
// call, and inside a commit it leaves nothing of the commit behind.
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "storage/postgres_connection.h"
#include "storage/postgres_store.h"
#include "storage/postgres_test_server.h"
#include "storage/store_test_util.h"

namespace fleetbench::storage {
namespace {

// The lease's advisory lock key (storage/postgres_store.cc), for a test
// that takes the lease itself.
constexpr int64_t kLeaderLockForTests = 0x666c6565746c6472;

class PostgresStoreTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto server = PostgresTestServer::Start();
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server).release();
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  void SetUp() override {
    database_ = absl::StrCat("db", ++databases_);
    ASSERT_TRUE(server_->CreateDatabase(database_).ok());
    auto admin = PgConnection::Open(server_->Url(database_), server_->password_file());
    ASSERT_TRUE(admin.ok()) << admin.status();
    admin_ = std::move(*admin);
  }
  // A controller's store, its lease timed in tenths of a second.
  PostgresOptions Leading(absl::Duration grace) const {
    PostgresOptions lead;
    lead.url = server_->Url(database_);
    lead.password_file = server_->password_file();
    lead.lead = true;
    lead.lease_check_interval = absl::Milliseconds(100);
    lead.lease_timeout = absl::Milliseconds(300);
    lead.lease_grace = grace;
    return lead;
  }
  absl::StatusOr<std::unique_ptr<Store>> Open() {
    PostgresOptions options;
    options.url = server_->Url(database_);
    options.password_file = server_->password_file();
    return OpenPostgresStore(options);
  }
  // Ends every server process of the store's connections (not the
  // admin's own): what a failover or an admin's pg_terminate_backend does.
  void CutTheStoresConnections() {
    auto cut = admin_->Exec(
        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = $1 "
        "AND application_name = 'fleetbench' AND pid <> pg_backend_pid()",
        {PgText(database_)}, "cutting connections");
    ASSERT_TRUE(cut.ok()) << cut.status();
    ASSERT_GE(cut->Int(0, 0), 1);
  }

  static PostgresTestServer* server_;
  static int databases_;
  std::string database_;
  std::unique_ptr<PgConnection> admin_;
};
PostgresTestServer* PostgresStoreTest::server_ = nullptr;
int PostgresStoreTest::databases_ = 0;

TEST_F(PostgresStoreTest, ASchemaFromANewerBuildIsRefused) {
  ASSERT_TRUE(Open().ok());
  ASSERT_TRUE(admin_->ExecScript("UPDATE fleetbench_schema SET version = 1000", "newer").ok());
  auto refused = Open();
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition) << refused.status();
  EXPECT_NE(refused.status().message().find("1000"), std::string::npos);
}

TEST_F(PostgresStoreTest, ControllersStartingAtOnceMigrateOnce) {
  std::vector<std::thread> controllers;
  std::atomic<int> opened = 0;
  for (int i = 0; i < 4; ++i) {
    controllers.emplace_back([&] {
      auto store = Open();
      EXPECT_TRUE(store.ok()) << store.status();
      if (store.ok()) ++opened;
    });
  }
  for (std::thread& t : controllers) t.join();
  EXPECT_EQ(opened, 4);
  auto rows = admin_->Exec("SELECT count(*), max(version) FROM fleetbench_schema", {}, "schema");
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ(rows->Int(0, 0), 1);
  EXPECT_EQ(rows->Int(0, 1), LatestPostgresSchemaVersion());
}

TEST_F(PostgresStoreTest, AConnectionLostBetweenCallsCostsAtMostOneCall) {
  auto store = Open();
  ASSERT_TRUE(store.ok()) << store.status();
  ASSERT_TRUE((*store)->UpsertNode(MakeNode("n1", "6.1", kT0)).ok());
  // A call in a transaction opens a new connection at its BEGIN.
  CutTheStoresConnections();
  EXPECT_TRUE((*store)->UpsertNode(MakeNode("n2", "6.1", kT0)).ok());
  // A single statement may have run before its connection went: it is
  // not sent again, and says UNAVAILABLE (the caller retries); the next
  // call reconnects.
  CutTheStoresConnections();
  absl::Status touched = (*store)->TouchNode("n1", kT0 + absl::Seconds(1));
  EXPECT_TRUE(touched.ok() || absl::IsUnavailable(touched)) << touched;
  EXPECT_TRUE((*store)->TouchNode("n1", kT0 + absl::Seconds(2)).ok());
  // The server itself goes away and comes back: UNAVAILABLE meanwhile,
  // then the same store goes on.
  ASSERT_TRUE(server_->Stop().ok());
  EXPECT_TRUE(absl::IsUnavailable((*store)->ListNodes().status()));
  ASSERT_TRUE(server_->Restart().ok());
  auto nodes = (*store)->ListNodes();
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  EXPECT_EQ(nodes->size(), 2u);
  // The admin's connection went with the server.
  auto admin = PgConnection::Open(server_->Url(database_), server_->password_file());
  ASSERT_TRUE(admin.ok());
  admin_ = std::move(*admin);
}

TEST_F(PostgresStoreTest, ACommitWhoseConnectionIsCutLeavesNothingBehind) {
  auto store = Open();
  ASSERT_TRUE(store.ok()) << store.status();
  ASSERT_TRUE((*store)->UpsertNode(MakeNode("n1", "6.1", kT0)).ok());
  TaskRecord task = MakeTask("r1-n1", "r1", "n1", kT0);
  ASSERT_TRUE((*store)->CreateRun(MakeRun("r1", kT0), {task}).ok());
  // The admin holds task_logs, so the commit stops there: after its
  // samples and its task's update, before its log.
  ASSERT_TRUE(admin_->Begin("holding task_logs").ok());
  ASSERT_TRUE(admin_->ExecScript("LOCK TABLE task_logs IN ACCESS EXCLUSIVE MODE", "lock").ok());
  Store::ReportWrite report;
  for (int i = 0; i < 100; ++i) {
    report.samples.push_back(
        MakeSample(absl::StrCat("s", i), "r1", "n1", kMetric, i, ToUnixMillis(kT0) + i));
  }
  task.state = v1::TASK_STATE_SUCCEEDED;
  report.task = &task;
  report.task_log = "the end of its output\n";
  absl::StatusOr<int> committed;
  std::thread commit([&] { committed = (*store)->CommitReports({report}); });
  // Until the commit waits on the lock (the server says so), then cut it.
  bool waiting = false;
  const absl::Time give_up = absl::Now() + absl::Seconds(30);
  while (!waiting && absl::Now() < give_up) {
    auto rows = admin_->Exec(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND "
        "application_name = 'fleetbench' AND wait_event_type = 'Lock'",
        {PgText(database_)}, "watching the commit");
    ASSERT_TRUE(rows.ok()) << rows.status();
    waiting = rows->Int(0, 0) > 0;
  }
  ASSERT_TRUE(waiting) << "the commit never waited on task_logs";
  CutTheStoresConnections();
  commit.join();
  admin_->Rollback();
  EXPECT_TRUE(absl::IsUnavailable(committed.status())) << committed.status();
  // Nothing of it: no sample, the task as it was, no log.
  EXPECT_EQ(*(*store)->CountSamples(), 0);
  EXPECT_EQ((*store)->GetTask("r1-n1")->state, v1::TASK_STATE_QUEUED);
  EXPECT_TRUE((*store)->TaskLogs({"r1-n1"})->empty());
  // Sent again (as the controller's retry does), it is stored whole.
  committed = (*store)->CommitReports({report});
  ASSERT_TRUE(committed.ok()) << committed.status();
  EXPECT_EQ(*committed, 100);
  EXPECT_EQ((*store)->GetTask("r1-n1")->state, v1::TASK_STATE_SUCCEEDED);
  EXPECT_EQ((*store)->TaskLogs({"r1-n1"})->at("r1-n1"), report.task_log);
}

// Polls `condition` until it holds or 30 s pass: for a state another
// thread reaches, never a fixed sleep.
bool Eventually(const std::function<bool()>& condition) {
  const absl::Time give_up = absl::Now() + absl::Seconds(30);
  while (!condition()) {
    if (absl::Now() > give_up) return false;
    absl::SleepFor(absl::Milliseconds(10));
  }
  return true;
}

TEST_F(PostgresStoreTest, OneLeadsAndAStandbyTakesOverOnlyOnceTheLeaderIsFenced) {
  PostgresOptions lead = Leading(absl::Milliseconds(600));
  std::atomic<int> lost = 0;
  lead.lost_lead = [&lost] { ++lost; };
  auto a = OpenPostgresStore(lead);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE((*a)->UpsertNode(MakeNode("n1", "6.1", kT0)).ok());

  // A second controller without --standby is refused, saying why.
  PostgresOptions second = lead;
  second.lost_lead = nullptr;
  auto refused = OpenPostgresStore(second);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition) << refused.status();
  EXPECT_NE(refused.status().message().find("--standby"), std::string::npos);

  // A standby waits, saying for whom.
  second.wait_for_lead = true;
  absl::Mutex mu;
  std::string holder;
  second.standing_by = [&](const std::string& who) {
    absl::MutexLock lock(&mu);
    holder = who;
  };
  absl::StatusOr<std::unique_ptr<Store>> b = absl::UnknownError("not yet");
  std::thread standby([&] { b = OpenPostgresStore(second); });
  ASSERT_TRUE(Eventually([&] {
    absl::MutexLock lock(&mu);
    return !holder.empty();
  }));
  EXPECT_NE(holder.find("pid"), std::string::npos) << holder;
  EXPECT_TRUE((*a)->UpsertNode(MakeNode("n2", "6.1", kT0)).ok()) << "the leader goes on";

  // The leader's connection is cut (the server ended it, as a failover or
  // a network cut does), and the lease is taken before the old leader can
  // take it again (here by the admin, then handed to the standby, so the
  // race for it has one outcome): the old leader finds it taken at its
  // next check, before the standby's grace is over.
  auto leader = admin_->Exec(
      "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND granted "
      "AND database = (SELECT oid FROM pg_database WHERE datname = $1)",
      {PgText(database_)}, "cutting the leader");
  ASSERT_TRUE(leader.ok()) << leader.status();
  ASSERT_EQ(leader->size(), 1);
  ASSERT_TRUE(admin_->Exec("SELECT pg_advisory_lock($1)", {PgInt(kLeaderLockForTests)},
                           "taking the lease").ok());
  ASSERT_TRUE(Eventually([&] { return lost == 1; })) << "the old leader never found out";
  ASSERT_TRUE(admin_->Exec("SELECT pg_advisory_unlock($1)", {PgInt(kLeaderLockForTests)},
                           "handing the lease on").ok());
  standby.join();
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(lost, 1) << "the old leader knew before the new one returned";
  absl::Status fenced = (*a)->UpsertNode(MakeNode("n3", "6.1", kT0));
  EXPECT_EQ(fenced.code(), absl::StatusCode::kFailedPrecondition) << fenced;
  EXPECT_NE(fenced.message().find("lost the lead"), std::string::npos) << fenced;
  EXPECT_EQ(lost, 1);
  ASSERT_TRUE((*b)->UpsertNode(MakeNode("n4", "6.1", kT0)).ok());
  auto nodes = (*b)->ListNodes();
  ASSERT_TRUE(nodes.ok());
  EXPECT_EQ(nodes->size(), 3u) << "n1, n2 and n4; nothing of the fenced leader's n3";
}

TEST_F(PostgresStoreTest, ALeaderThatCannotCheckItsLeaseStops) {
  PostgresOptions lead = Leading(absl::Milliseconds(10));
  std::atomic<int> lost = 0;
  lead.lost_lead = [&lost] { ++lost; };
  auto a = OpenPostgresStore(lead);
  ASSERT_TRUE(a.ok()) << a.status();
  // The database goes away: the leader cannot tell whether a standby holds
  // the lease by now, so past lease_timeout it stops, and stays stopped
  // when the database is back.
  ASSERT_TRUE(server_->Stop().ok());
  EXPECT_TRUE(Eventually([&] { return lost == 1; }));
  ASSERT_TRUE(server_->Restart().ok());
  EXPECT_EQ((*a)->ListNodes().status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(lost, 1);
  auto admin = PgConnection::Open(server_->Url(database_), server_->password_file());
  ASSERT_TRUE(admin.ok());
  admin_ = std::move(*admin);
}

TEST_F(PostgresStoreTest, BackupsAreTheServersOwnTools) {
  auto store = Open();
  ASSERT_TRUE(store.ok()) << store.status();
  absl::Status backup = (*store)->BackupTo(server_->dir() + "/copy.db", 100);
  EXPECT_EQ(backup.code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(backup.message().find("pg_dump"), std::string::npos);
}

}  // namespace
}  // namespace fleetbench::storage
