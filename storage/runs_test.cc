// Tests of the SQLite store's runs and tasks.
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "fleetbench/v1/result.pb.h"
#include "gtest/gtest.h"
#include "storage/store.h"
#include "storage/store_test_util.h"

namespace fleetbench::storage {
namespace {

TEST_P(StoreContractTest, RunAndTasksRoundTrip) {
  ASSERT_TRUE(store_->UpsertNode(MakeNode("n1", "6.1", kT0)).ok());
  ASSERT_TRUE(store_->UpsertNode(MakeNode("n2", "6.1", kT0)).ok());
  RunRecord run = MakeRun("r1", kT0);
  ASSERT_TRUE(store_
                  ->CreateRun(run, {MakeTask("t1", "r1", "n1", kT0),
                                    MakeTask("t2", "", "n2", kT0)})
                  .ok());
  Reopen();

  auto got = store_->GetRun("r1");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->run_id, "r1");
  EXPECT_EQ(got->state, "queued");
  EXPECT_EQ(got->created, kT0);
  EXPECT_EQ(got->finished, absl::InfinitePast());
  ASSERT_EQ(got->benchmarks.size(), 2u);
  EXPECT_EQ(got->benchmarks[0].name(), "gemm");
  EXPECT_EQ(got->benchmarks[0].params().at("size"), "4096");
  EXPECT_EQ(got->benchmarks[1].name(), "stream");
  EXPECT_EQ(got->max_parallel, 2u);
  EXPECT_EQ(got->suite, "quick");

  auto tasks = store_->ListTasks("r1");
  ASSERT_TRUE(tasks.ok()) << tasks.status();
  ASSERT_EQ(tasks->size(), 2u);
  EXPECT_EQ((*tasks)[0].task_id, "t1");
  EXPECT_EQ((*tasks)[1].task_id, "t2");
  EXPECT_EQ((*tasks)[1].run_id, "r1");  // filled from the run
  EXPECT_EQ((*tasks)[1].node, "n2");
  EXPECT_EQ((*tasks)[1].state, v1::TASK_STATE_QUEUED);

  TaskRecord t1 = (*tasks)[0];
  t1.state = v1::TASK_STATE_FAILED;
  t1.reason = "gemm: out of memory";
  t1.updated = kT0 + absl::Seconds(30);
  v1::BenchmarkOutcome& outcome = t1.outcomes.emplace_back();
  outcome.set_benchmark("gemm");
  outcome.set_state(v1::TASK_STATE_FAILED);
  outcome.set_reason("out of memory");
  t1.outcomes.emplace_back().set_benchmark("stream");
  ASSERT_TRUE(store_->UpdateTask(t1).ok());
  ASSERT_TRUE(store_->SetRunState("r1", "failed", kT0 + absl::Minutes(1)).ok());

  Reopen();
  tasks = store_->ListTasks("r1");
  ASSERT_TRUE(tasks.ok()) << tasks.status();
  const TaskRecord& back = (*tasks)[0];
  EXPECT_EQ(back.state, v1::TASK_STATE_FAILED);
  EXPECT_EQ(back.reason, "gemm: out of memory");
  EXPECT_EQ(back.updated, kT0 + absl::Seconds(30));
  ASSERT_EQ(back.outcomes.size(), 2u);
  EXPECT_EQ(back.outcomes[0].reason(), "out of memory");
  EXPECT_EQ(back.outcomes[1].benchmark(), "stream");
  got = store_->GetRun("r1");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->state, "failed");
  EXPECT_EQ(got->finished, kT0 + absl::Minutes(1));

  auto queued = store_->ListTasksInStates(
      {v1::TASK_STATE_QUEUED, v1::TASK_STATE_RUNNING});
  ASSERT_TRUE(queued.ok()) << queued.status();
  ASSERT_EQ(queued->size(), 1u);
  EXPECT_EQ((*queued)[0].task_id, "t2");
  EXPECT_EQ((*queued)[0].run_id, "r1");
  EXPECT_TRUE(store_->ListTasksInStates({})->empty());
}

TEST_P(StoreContractTest, ATaskLogIsStoredWithItsFinalReportAndLeavesWithRetention) {
  ASSERT_TRUE(store_->UpsertNode(MakeNode("n1", "6.1", kT0)).ok());
  ASSERT_TRUE(store_->UpsertNode(MakeNode("n2", "6.1", kT0)).ok());
  ASSERT_TRUE(store_
                  ->CreateRun(MakeRun("r1", kT0), {MakeTask("t1", "r1", "n1", kT0),
                                                   MakeTask("t2", "r1", "n2", kT0)})
                  .ok());
  auto sizes = store_->TaskLogSizesOfRun("r1");
  ASSERT_TRUE(sizes.ok()) << sizes.status();
  EXPECT_TRUE(sizes->empty());
  EXPECT_TRUE(absl::IsNotFound(store_->TaskLogSizesOfRun("nope").status()));

  TaskRecord t1 = MakeTask("t1", "r1", "n1", kT0);
  t1.state = v1::TASK_STATE_SUCCEEDED;
  t1.updated = kT0 + absl::Hours(1);
  TaskRecord t2 = MakeTask("t2", "r1", "n2", kT0);
  t2.state = v1::TASK_STATE_FAILED;
  t2.updated = kT0 + absl::Hours(3);
  Store::ReportWrite w1;
  w1.task = &t1;
  w1.task_log = "epoch 1 loss 0.5\n\xc3\xa9t\xc3\xa9\n";  // 2-byte characters count as 2
  Store::ReportWrite w2;
  w2.task = &t2;
  w2.task_log = std::string(64 * 1024, 'x');
  Store::ReportWrite progress;  // samples only: no task, no log
  progress.samples.push_back(
      MakeSample("s1", "r1", "n1", kMetric, 1.0, absl::ToUnixMillis(kT0)));
  ASSERT_TRUE(store_->CommitReports({w1, w2, progress}).ok());
  Reopen();
  sizes = store_->TaskLogSizesOfRun("r1");
  ASSERT_TRUE(sizes.ok()) << sizes.status();
  ASSERT_EQ(sizes->size(), 2u);
  EXPECT_EQ(sizes->at("t1"), static_cast<int64_t>(w1.task_log.size())) << "bytes, not characters";
  EXPECT_EQ(sizes->at("t2"), 64 * 1024);
  auto logs = store_->TaskLogs({"t1", "nope"});
  ASSERT_TRUE(logs.ok()) << logs.status();
  ASSERT_EQ(logs->size(), 1u);
  EXPECT_EQ(logs->at("t1"), w1.task_log);

  // Retention takes the logs of tasks that ended before its cutoff, a
  // batch at a time.
  auto pruned = store_->PruneTaskLogsBefore(kT0 + absl::Hours(2), 10);
  ASSERT_TRUE(pruned.ok()) << pruned.status();
  EXPECT_EQ(*pruned, 1);
  EXPECT_EQ(*store_->PruneTaskLogsBefore(kT0 + absl::Hours(2), 10), 0);
  sizes = store_->TaskLogSizesOfRun("r1");
  ASSERT_TRUE(sizes.ok()) << sizes.status();
  EXPECT_FALSE(sizes->contains("t1"));
  EXPECT_TRUE(sizes->contains("t2"));
  EXPECT_TRUE(store_->CheckIntegrity().ok());
}

TEST_P(StoreContractTest, PairTasksKeepTheirOwnBenchmarksAndPartner) {
  TaskRecord server = MakeTask("ts", "r1", "n1", kT0);
  TaskRecord client = MakeTask("tc", "r1", "n2", kT0);
  v1::BenchmarkSpec spec;
  spec.set_name("net");
  (*spec.mutable_params())["role"] = "server";
  server.benchmarks = {spec};
  (*spec.mutable_params())["role"] = "client";
  client.benchmarks = {spec};
  server.peer_task_id = "tc";
  client.peer_task_id = "ts";
  ASSERT_TRUE(store_->CreateRun(MakeRun("r1", kT0), {server, client}).ok());

  // The client learns its peer once the server listens.
  (*client.benchmarks[0].mutable_params())["peer"] = "10.0.0.1:4000";
  ASSERT_TRUE(store_->UpdateTask(client).ok());
  Reopen();
  auto tasks = store_->ListTasks("r1");
  ASSERT_TRUE(tasks.ok()) << tasks.status();
  ASSERT_EQ(tasks->size(), 2u);
  EXPECT_EQ((*tasks)[0].peer_task_id, "tc");
  EXPECT_EQ((*tasks)[0].benchmarks.at(0).params().at("role"), "server");
  EXPECT_EQ((*tasks)[1].peer_task_id, "ts");
  EXPECT_EQ((*tasks)[1].benchmarks.at(0).params().at("peer"), "10.0.0.1:4000");
}

TEST_P(StoreContractTest, MissingAndDuplicateRunsAndTasks) {
  EXPECT_EQ(store_->GetRun("nope").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->ListTasks("nope").status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->ListSamplesForRun("nope").status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->SetRunState("nope", "failed", kT0).code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->UpdateTask(MakeTask("nope", "r", "n", kT0)).code(),
            absl::StatusCode::kNotFound);

  ASSERT_TRUE(store_->CreateRun(MakeRun("r1", kT0), {}).ok());
  EXPECT_EQ(store_->CreateRun(MakeRun("r1", kT0), {}).code(),
            absl::StatusCode::kAlreadyExists);
  // A duplicate task id rolls back its whole run.
  EXPECT_EQ(store_
                ->CreateRun(MakeRun("r2", kT0), {MakeTask("t", "r2", "n", kT0),
                                                 MakeTask("t", "r2", "n", kT0)})
                .code(),
            absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(store_->GetRun("r2").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->CreateRun(MakeRun("r3", kT0), {MakeTask("t", "other", "n", kT0)})
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->CreateRun(RunRecord{}, {}).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_P(StoreContractTest, ListRunsNewestFirstWithLimit) {
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(store_
                    ->CreateRun(MakeRun(absl::StrCat("r", i),
                                        kT0 + absl::Minutes(i)),
                                {})
                    .ok());
  }
  auto runs = store_->ListRuns(3);
  ASSERT_TRUE(runs.ok()) << runs.status();
  ASSERT_EQ(runs->size(), 3u);
  EXPECT_EQ((*runs)[0].run_id, "r4");
  EXPECT_EQ((*runs)[2].run_id, "r2");
  EXPECT_EQ(store_->ListRuns(0)->size(), 5u);  // 0: no limit
}

TEST_P(StoreContractTest, ListRunsPagesAfterARunWithoutLossOrRepeat) {
  // Three runs share one millisecond: the page boundary falls among them.
  const absl::Time times[] = {kT0, kT0 + absl::Minutes(1), kT0 + absl::Minutes(1),
                              kT0 + absl::Minutes(1), kT0 + absl::Minutes(2)};
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(store_->CreateRun(MakeRun(absl::StrCat("r", i), times[i]), {}).ok());
  }
  std::vector<std::string> seen;
  std::string after;
  for (int page = 0; page < 5; ++page) {
    auto runs = store_->ListRuns(2, after);
    ASSERT_TRUE(runs.ok()) << runs.status();
    if (runs->empty()) break;
    for (const RunRecord& r : *runs) seen.push_back(r.run_id);
    after = runs->back().run_id;
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"r4", "r3", "r2", "r1", "r0"}));
  EXPECT_EQ(store_->ListRuns(2, "no-such-run").status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace fleetbench::storage
