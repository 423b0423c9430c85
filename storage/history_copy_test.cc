// Moving a SQLite history into PostgreSQL (Store::ExportHistory and
// Store::ImportHistory): a history with something in every table, written
// through the store's calls, reads back the same through every read call
// on the copy; the copy goes on numbering after the copied keys; it goes
// only into an empty database, and one that fails leaves nothing.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "common/ulid.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/history_rows.h"
#include "storage/postgres_connection.h"
#include "storage/store.h"
#include "storage/store_test_util.h"

namespace fleetbench::storage {
namespace {

using ::testing::HasSubstr;

std::string TimeText(absl::Time t) { return absl::FormatTime(t, absl::UTCTimeZone()); }

// Everything the Store's read calls say about a history, as text, in an
// order of its own: two stores that read back the same give equal texts.
std::string Describe(Store& store) {
  std::vector<std::string> lines;
  auto add = [&](std::string line) { lines.push_back(std::move(line)); };
  auto nodes = store.ListNodes();
  EXPECT_TRUE(nodes.ok()) << nodes.status();
  std::vector<std::string> names = {"n1", "n2", "gone"};
  for (const NodeRecord& n : *nodes) {
    add(absl::StrCat("node ", n.name, " ", n.agent_version, " ", TimeText(n.first_seen), " ",
                     TimeText(n.last_seen), " removed=", n.removed, " facts=",
                     n.facts.ShortDebugString()));
    for (const auto& [k, v] : n.labels) add(absl::StrCat("label ", n.name, " ", k, "=", v));
  }
  for (const std::string& name : names) {
    auto versions = store.ListFactsVersions(name, 10);
    if (!versions.ok()) {
      add(absl::StrCat("facts of ", name, ": ", versions.status().code()));
      continue;
    }
    for (const FactsVersion& v : *versions) {
      add(absl::StrCat("facts ", name, " ", TimeText(v.seen), " ", v.facts.ShortDebugString()));
    }
    auto identity = store.GetNodeIdentity(name);
    EXPECT_TRUE(identity.ok()) << identity.status();
    if (identity->has_value()) {
      const NodeIdentityRecord& i = **identity;
      add(absl::StrCat("identity ", i.node, " ", i.serial, " ", i.fingerprint, " ",
                       TimeText(i.not_after), " ", TimeText(i.enrolled), " ", i.enrolled_by,
                       " revoked=", i.revoked ? TimeText(*i.revoked) : "no"));
    }
  }
  auto runs = store.ListRuns(0);
  EXPECT_TRUE(runs.ok()) << runs.status();
  for (const RunRecord& r : *runs) {
    std::vector<std::string> specs;
    for (const auto& b : r.benchmarks) specs.push_back(b.ShortDebugString());
    add(absl::StrCat("run ", r.run_id, " ", r.state, " ", TimeText(r.created), " ",
                     TimeText(r.finished), " ", absl::StrJoin(specs, ";"), " ", r.max_parallel,
                     " ", r.suite, " ", r.group.ShortDebugString(), " ",
                     absl::StrJoin(r.group_nodes, ",")));
    auto tasks = store.ListTasks(r.run_id);
    EXPECT_TRUE(tasks.ok()) << tasks.status();
    std::vector<std::string> task_ids;
    for (const TaskRecord& t : *tasks) {
      task_ids.push_back(t.task_id);
      std::vector<std::string> outcomes;
      for (const auto& o : t.outcomes) outcomes.push_back(o.ShortDebugString());
      add(absl::StrCat("task ", t.task_id, " ", t.run_id, " ", t.node, " ", t.state, " ",
                       t.reason, " ", absl::StrJoin(outcomes, ";"), " ", TimeText(t.updated),
                       " ", t.peer_task_id, " ", t.group_id, " ", t.group_rank, " ",
                       absl::StrJoin(t.group_members, ","), " ", t.group_pass, " ",
                       t.group_metric, " ", t.group_value));
    }
    auto logs = store.TaskLogs(task_ids);
    EXPECT_TRUE(logs.ok()) << logs.status();
    for (const auto& [task, log] : *logs) add(absl::StrCat("log ", task, " ", log));
    auto samples = store.ListSamplesForRun(r.run_id);
    EXPECT_TRUE(samples.ok()) << samples.status();
    for (const v1::Sample& s : *samples) add(absl::StrCat("sample ", s.ShortDebugString()));
  }
  auto count = store.CountSamples();
  EXPECT_TRUE(count.ok()) << count.status();
  add(absl::StrCat("samples ", *count));
  for (const char* metric : {"gemm.tflops", "disk.read_mib_per_s"}) {
    auto days = store.DaySummariesSince(metric, 0);
    EXPECT_TRUE(days.ok()) << days.status();
    for (const DaySummary& d : days->days) {
      add(absl::StrCat("day ", metric, " ", days->nodes[d.node], " ", d.day, " n=",
                       d.values.count(), " min=", d.values.min(), " max=", d.values.max(), " ",
                       TimeText(d.first), " ", TimeText(d.last)));
    }
  }
  auto descriptors = store.ListMetricDescriptors();
  EXPECT_TRUE(descriptors.ok()) << descriptors.status();
  for (const auto& d : *descriptors) add(absl::StrCat("descriptor ", d.ShortDebugString()));
  auto prices = store.ListPrices();
  EXPECT_TRUE(prices.ok()) << prices.status();
  for (const auto& p : *prices) add(absl::StrCat("price ", p.ShortDebugString()));
  auto schedules = store.ListSchedules();
  EXPECT_TRUE(schedules.ok()) << schedules.status();
  for (const auto& s : *schedules) {
    add(absl::StrCat("schedule ", s.schedule.ShortDebugString(), " ", TimeText(s.handled_until),
                     " ", s.last_run_id));
    auto firings = store.ListFirings(s.schedule.name(), 100);
    EXPECT_TRUE(firings.ok()) << firings.status();
    for (const auto& f : *firings) add(absl::StrCat("firing ", f.ShortDebugString()));
  }
  auto tokens = store.ListApiTokens();
  EXPECT_TRUE(tokens.ok()) << tokens.status();
  for (const ApiTokenRecord& t : *tokens) {
    add(absl::StrCat("token ", t.name, " ", t.token_id, " ", absl::CEscape(t.secret_hash), " ",
                     t.role, " ", TimeText(t.created), " ", TimeText(t.expires), " ",
                     TimeText(t.revoked), " ", TimeText(t.last_used)));
  }
  auto setting = store.GetSetting("shared_token");
  EXPECT_TRUE(setting.ok()) << setting.status();
  add(absl::StrCat("setting shared_token=", setting->value_or("(none)")));
  auto audit = store.ListAudit(absl::InfinitePast(), 100);
  EXPECT_TRUE(audit.ok()) << audit.status();
  for (const AuditRecord& a : *audit) {
    add(absl::StrCat("audit ", a.id, " ", TimeText(a.time), " ", a.principal, " ", a.role, " ",
                     a.rpc, " ", a.target, " ", a.code, " ", a.message));
  }
  auto uptime = store.UptimeSince(0);
  EXPECT_TRUE(uptime.ok()) << uptime.status();
  for (const auto& [node, ms] : *uptime) add(absl::StrCat("uptime ", node, " ", ms));
  auto interruptions = store.InterruptionsSince(absl::InfinitePast(), 100);
  EXPECT_TRUE(interruptions.ok()) << interruptions.status();
  for (const InterruptionRecord& i : *interruptions) {
    add(absl::StrCat("interruption ", i.node, " ", TimeText(i.time), " ", i.kind, " ",
                     i.detail));
  }
  std::sort(lines.begin(), lines.end());
  return absl::StrJoin(lines, "\n");
}

class HistoryCopyTest : public SqliteStoreTest {
 protected:
  void SetUp() override {
    SqliteStoreTest::SetUp();
    for (const StoreBackend& backend : StoreBackends()) {
      if (backend.name == kPostgresBackend) open_postgres_ = backend.open;
    }
    ASSERT_TRUE(open_postgres_) << "this build has no PostgreSQL backend";
    auto pg = open_postgres_(pg_dir_.path());
    ASSERT_TRUE(pg.ok()) << pg.status();
    pg_ = *std::move(pg);
  }

  // A history with rows in every table a copy carries, written through the
  // store's own calls: labels, two facts versions, a removed node, runs
  // with group fields, task logs, samples with text and measured params
  // and a NaN, pruned samples whose days stay, points not yet folded,
  // every other kind of record.
  void FillSqlite() {
    NodeRecord n1 = MakeNode("n1", "6.1", kT0);
    n1.agent_version = "1.2.3";
    ASSERT_TRUE(store_->UpsertNode(n1).ok());
    n1.facts.set_kernel("6.2");
    n1.last_seen = kT0 + absl::Hours(1);
    ASSERT_TRUE(store_->UpsertNode(n1).ok());
    ASSERT_TRUE(store_->UpsertNode(MakeNode("n2", "6.1", kT0)).ok());
    ASSERT_TRUE(store_->UpsertNode(MakeNode("gone", "5.10", kT0)).ok());

    RunRecord old_run = MakeRun("r-old", kT0 - absl::Hours(72));
    RunRecord run = MakeRun("r1", kT0);
    run.suite = "nightly";
    run.max_parallel = 2;
    run.group.set_threshold(0.9);
    run.group.set_bisect(true);
    run.group_nodes = {"n1", "n2"};
    TaskRecord t1 = MakeTask("t1", "r1", "n1", kT0);
    t1.group_id = "g1";
    t1.group_rank = 0;
    t1.group_members = {"n1", "n2"};
    t1.group_pass = 1;
    t1.group_metric = "gemm.tflops";
    t1.group_value = 12.5;
    TaskRecord t2 = MakeTask("t2", "r1", "n2", kT0);
    t2.peer_task_id = "t1";
    ASSERT_TRUE(store_->CreateRun(old_run, {MakeTask("t0", "r-old", "gone", kT0)}).ok());
    ASSERT_TRUE(store_->CreateRun(run, {t1, t2}).ok());

    // Old samples (pruned below: their day summary stays) and new ones.
    std::vector<v1::Sample> old_samples;
    for (int i = 0; i < 5; ++i) {
      old_samples.push_back(MakeSample(NewUlid(kT0 - absl::Hours(72)), "r-old", "gone",
                                       "gemm.tflops", 3 + i,
                                       absl::ToUnixMillis(kT0 - absl::Hours(72)) + i));
    }
    ASSERT_TRUE(store_->CommitReports({{old_samples}}).ok());
    std::vector<v1::Sample> samples;
    for (int i = 0; i < 20; ++i) {
      v1::Sample s = MakeSample(NewUlid(kT0), "r1", i % 2 ? "n2" : "n1", "gemm.tflops",
                                10 + i * 0.25, absl::ToUnixMillis(kT0) + i);
      (*s.mutable_params())["dtype"] = "fp32";
      (*s.mutable_params())["runs"] = absl::StrCat(5 + i);
      (*s.mutable_params())["min_tflops"] = absl::StrCat(9 + i * 0.25);
      samples.push_back(s);
    }
    v1::Sample text_id = MakeSample("not-a-ulid", "r1", "n1", "disk.read_mib_per_s",
                                    std::numeric_limits<double>::quiet_NaN(),
                                    absl::ToUnixMillis(kT0) + 50);
    text_id.set_unit("MiB/s");
    samples.push_back(text_id);
    TaskRecord done = t1;
    done.state = v1::TASK_STATE_SUCCEEDED;
    done.updated = kT0 + absl::Minutes(5);
    ASSERT_TRUE(store_->CommitReports({{samples, &done, "line one\nline \"two\" \\ three\n"}}).ok());
    auto pruned = store_->PruneSamplesBefore(kT0 - absl::Hours(24), 100);
    ASSERT_TRUE(pruned.ok()) << pruned.status();
    ASSERT_EQ(*pruned, 5);
    ASSERT_TRUE(store_->SetRunState("r1", "succeeded", kT0 + absl::Minutes(6)).ok());

    v1::MetricDescriptor d;
    d.set_name("gemm.tflops");
    d.set_unit("TFLOP/s");
    d.set_direction(v1::METRIC_DIRECTION_HIGHER_IS_BETTER);
    d.set_description("dense fp32");
    d.set_benchmark("gemm");
    ASSERT_TRUE(store_->UpsertMetricDescriptors({d}).ok());
    v1::CatalogPrice p;
    p.set_provider("acme");
    p.set_region("us-east");
    p.set_instance_type("c7i.large");
    p.set_effective_from_unix_ms(absl::ToUnixMillis(kT0));
    p.set_price_per_hour(0.5);
    p.set_spot_price_per_hour(0.2);
    p.set_currency("USD");
    ASSERT_TRUE(store_->ImportPrices({p}, kT0).ok());

    Store::ScheduleRecord schedule;
    schedule.schedule.set_name("nightly");
    schedule.schedule.set_cron("0 3 * * *");
    schedule.schedule.set_timezone("Europe/Paris");
    schedule.schedule.mutable_run()->add_benchmarks()->set_name("gemm");
    schedule.schedule.set_created_unix_ms(absl::ToUnixMillis(kT0));
    schedule.handled_until = kT0;
    ASSERT_TRUE(store_->CreateSchedule(schedule).ok());
    v1::ScheduleFiring firing;
    firing.set_schedule("nightly");
    firing.set_slot_unix_ms(absl::ToUnixMillis(kT0));
    firing.set_fired_unix_ms(absl::ToUnixMillis(kT0) + 100);
    firing.set_outcome(v1::FIRING_OUTCOME_STARTED);
    firing.set_run_id("r1");
    firing.set_manual(true);
    firing.add_offline_nodes("gone");
    ASSERT_TRUE(store_->RecordFiring(firing, kT0).ok());

    NodeIdentityRecord identity{"n1", "0a1b", "sha256:ab", kT0 + absl::Hours(24 * 90), kT0,
                                "enroll-token", std::nullopt};
    ASSERT_TRUE(store_->EnrollNodeIdentity(identity).ok());
    identity.node = "n2";
    ASSERT_TRUE(store_->EnrollNodeIdentity(identity).ok());
    ASSERT_TRUE(store_->RevokeNodeIdentity("n2", kT0 + absl::Hours(2)).ok());
    ApiTokenRecord token;
    token.name = "ops";
    token.token_id = "tid1";
    token.secret_hash = std::string("\x00\x01\xff", 3) + std::string(29, 'h');
    token.role = "operator";
    token.created = kT0;
    token.expires = kT0 + absl::Hours(24);
    ASSERT_TRUE(store_->CreateApiToken(token, kT0).ok());
    ASSERT_TRUE(store_->TouchApiToken("ops", kT0 + absl::Minutes(1)).ok());
    ASSERT_TRUE(store_->PutSetting("shared_token", "off").ok());
    ASSERT_TRUE(
        store_->AppendAudit({0, kT0, "ops", "operator", "StartRun", "r1", 0, ""}, 100).ok());
    ASSERT_TRUE(store_
                    ->AppendAudit({0, kT0 + absl::Seconds(1), "ops", "operator", "CancelRun",
                                   "r1", 9, "already finished"},
                                  100)
                    .ok());
    ASSERT_TRUE(store_
                    ->RecordReliability({{"n1", UtcDayOf(absl::ToUnixMillis(kT0)), 3'600'000},
                                         {"gone", UtcDayOf(absl::ToUnixMillis(kT0)), 60'000}},
                                        {{"gone", kT0 + absl::Minutes(1), "offline", "past grace"}})
                    .ok());
    auto removed = store_->RemoveNode("gone", kT0 + absl::Hours(3));
    ASSERT_TRUE(removed.ok()) << removed.status();
  }

  absl::StatusOr<std::map<std::string, int64_t>> Copy() {
    return pg_->ImportHistory(
        [this](const HistorySink& sink) { return store_->ExportHistory(sink, 7); });
  }

  // The database's indexes, by name, as the server lists them.
  std::vector<std::string> PostgresIndexes() {
    auto options = PostgresOptionsIn(pg_dir_.path());
    EXPECT_TRUE(options.ok()) << options.status();
    auto conn = PgConnection::Open(options->url, options->password_file);
    EXPECT_TRUE(conn.ok()) << conn.status();
    auto rows = (*conn)->Exec(
        "SELECT indexdef FROM pg_indexes WHERE schemaname = current_schema() ORDER BY indexname",
        {}, "listing indexes");
    EXPECT_TRUE(rows.ok()) << rows.status();
    std::vector<std::string> indexes;
    for (int i = 0; i < rows->size(); ++i) indexes.push_back(rows->Text(i, 0));
    return indexes;
  }

  std::function<absl::StatusOr<std::unique_ptr<Store>>(const std::string&)> open_postgres_;
  TempDir pg_dir_;
  std::unique_ptr<Store> pg_;
};

TEST_F(HistoryCopyTest, TheCopyReadsBackAsTheOriginalThroughEveryCall) {
  FillSqlite();
  const std::string original = Describe(*store_);
  const std::vector<std::string> indexes = PostgresIndexes();
  ASSERT_GE(indexes.size(), 20u);
  auto copied = Copy();
  ASSERT_TRUE(copied.ok()) << copied.status();
  EXPECT_EQ((*copied)["samples"], 21);
  EXPECT_EQ((*copied)["nodes"], 3);
  EXPECT_EQ((*copied)["settings"], 1) << "SQLite's own settings stay behind";
  EXPECT_EQ(Describe(*pg_), original);
  EXPECT_EQ(PostgresIndexes(), indexes) << "every index the copy dropped is built again";
  // What was read is what a controller reads after a restart, too.
  pg_.reset();
  auto reopened = open_postgres_(pg_dir_.path());
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  EXPECT_EQ(Describe(**reopened), original);
  ASSERT_TRUE((*reopened)->CheckIntegrity().ok());
}

TEST_F(HistoryCopyTest, TheCopyGoesOnNumberingAfterTheCopiedKeys) {
  FillSqlite();
  ASSERT_TRUE(Copy().ok());
  // Each numbered table takes a new row without a key clash.
  ASSERT_TRUE(pg_->UpsertNode(MakeNode("n3", "6.1", kT0 + absl::Hours(4))).ok());
  ASSERT_TRUE(pg_->CreateRun(MakeRun("r2", kT0 + absl::Hours(4)),
                             {MakeTask("t3", "r2", "n3", kT0 + absl::Hours(4))})
                  .ok());
  auto stored = pg_->CommitReports({{{MakeSample(NewUlid(kT0 + absl::Hours(4)), "r2", "n3",
                                                  "new.metric", 1, absl::ToUnixMillis(kT0) + 1)}}});
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_EQ(*stored, 1);
  auto id = pg_->AppendAudit({0, kT0 + absl::Hours(4), "ops", "operator", "StartRun", "r2", 0, ""},
                             100);
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_EQ(*id, 3) << "after the two copied audit rows";
  ASSERT_TRUE(pg_->RecordReliability({}, {{"n3", kT0 + absl::Hours(5), "offline", "x"}}).ok());
  v1::ScheduleFiring firing;
  firing.set_schedule("nightly");
  firing.set_slot_unix_ms(absl::ToUnixMillis(kT0 + absl::Hours(24)));
  firing.set_fired_unix_ms(absl::ToUnixMillis(kT0 + absl::Hours(24)));
  firing.set_outcome(v1::FIRING_OUTCOME_SKIPPED);
  ASSERT_TRUE(pg_->RecordFiring(firing, std::nullopt).ok());
  auto firings = pg_->ListFirings("nightly", 10);
  ASSERT_TRUE(firings.ok()) << firings.status();
  EXPECT_EQ(firings->size(), 2u);
  auto facts = pg_->ListFactsVersions("n3", 10);
  ASSERT_TRUE(facts.ok()) << facts.status();
  EXPECT_EQ(facts->size(), 1u);
  auto samples = pg_->ListSamplesForRun("r2");
  ASSERT_TRUE(samples.ok()) << samples.status();
  ASSERT_EQ(samples->size(), 1u);
  EXPECT_EQ((*samples)[0].node(), "n3");
}

TEST_F(HistoryCopyTest, ACopyGoesOnlyIntoAnEmptyDatabase) {
  FillSqlite();
  ASSERT_TRUE(pg_->UpsertNode(MakeNode("elsewhere", "6.1", kT0)).ok());
  auto copied = Copy();
  ASSERT_FALSE(copied.ok());
  EXPECT_EQ(copied.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(copied.status().message(), HasSubstr("nodes has rows"));
  auto nodes = pg_->ListNodes();
  ASSERT_TRUE(nodes.ok());
  ASSERT_EQ(nodes->size(), 1u);
  EXPECT_EQ((*nodes)[0].name, "elsewhere");
}

TEST_F(HistoryCopyTest, ACopyThatFailsLeavesTheDatabaseEmpty) {
  FillSqlite();
  int batches = 0;
  auto failed = pg_->ImportHistory([&](const HistorySink& sink) {
    return store_->ExportHistory(
        [&](const HistoryBatch& batch) -> absl::Status {
          if (std::string(batch.table->name) == "samples" && ++batches == 2) {
            return absl::UnavailableError("the source went away");
          }
          return sink(batch);
        },
        7);
  });
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kUnavailable);
  auto count = pg_->CountSamples();
  ASSERT_TRUE(count.ok());
  EXPECT_EQ(*count, 0);
  auto nodes = pg_->ListNodes();
  ASSERT_TRUE(nodes.ok());
  EXPECT_TRUE(nodes->empty());
  EXPECT_GE(PostgresIndexes().size(), 20u) << "the dropped indexes came back with the rollback";
  // And a second copy then goes through.
  auto copied = Copy();
  ASSERT_TRUE(copied.ok()) << copied.status();
  EXPECT_EQ(Describe(*pg_), Describe(*store_));
}

TEST_F(HistoryCopyTest, AValueOfTheWrongKindIsRefusedWithItsColumn) {
  const HistoryTable* nodes = &HistoryTables()[0];
  auto refused = pg_->ImportHistory([&](const HistorySink& sink) {
    HistoryBatch batch{nodes, {{std::string("x"), std::string("n"), std::string(""), int64_t{0},
                                int64_t{0}, HistoryNull{}}}};
    return sink(batch);
  });
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.status().message(), HasSubstr("nodes.id"));
}

}  // namespace
}  // namespace fleetbench::storage
