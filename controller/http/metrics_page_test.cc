// MetricsPage over a real FleetCore on a real SQLite file: what a scrape
// shows after an agent's report, read through the core's public calls.
#include "controller/http/metrics_page.h"

#include "controller/core/fleet_core_fixture.h"
#include "gmock/gmock.h"

namespace fleetbench::controller {
namespace {

using ::testing::HasSubstr;

class MetricsPageTest : public FleetCoreTest {};

TEST_F(MetricsPageTest, AScrapeShowsTheNewestRunAndTheCommitThatStoredIt) {
  auto a = Connect("a");
  Start("gemm", {"a"});
  ASSERT_EQ(a->RunTasks().size(), 1u);
  Finish(a, a->RunTasks()[0], /*samples=*/1);  // 1.0 tflops
  Start("gemm", {"a"});
  ASSERT_EQ(a->RunTasks().size(), 2u);
  Finish(a, a->RunTasks()[1], /*samples=*/2);  // 1.0 and 2.0 tflops, one series

  MetricsPageOptions options;
  options.db_path = dir_ + "/h.db";
  MetricsPage page(core_.get(), options);
  const std::string text = page.Render();
  // The newest run's first sample (newest first: 2.0 was stored last, with
  // the same time and a later id).
  EXPECT_THAT(text, HasSubstr("fleetbench_gemm_cpu_fp32_flop_per_second{"
                              "metric=\"gemm.cpu.fp32.tflops\",node=\"a\"} 2e+12\n"));
  EXPECT_THAT(text, HasSubstr("fleetbench_node_online{node=\"a\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("fleetbench_node_rank{metric=\"gemm.cpu.fp32.tflops\",node=\"a\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("fleetbench_agents_connected 1\n"));
  EXPECT_THAT(text, HasSubstr("fleetbench_runs{state=\"succeeded\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("fleetbench_samples_ingested_total 3\n"));
  // Two reports, two commits timed.
  EXPECT_THAT(text, HasSubstr("fleetbench_ingest_batch_duration_seconds_count 2\n"));
  EXPECT_THAT(text, HasSubstr("fleetbench_store_size_bytes "));
  EXPECT_THAT(text, HasSubstr("fleetbench_store_failures_total 0\n"));
}

TEST_F(MetricsPageTest, TheCostlyPartsAreKeptForTheCacheTtl) {
  auto a = Connect("a");
  Start("gemm", {"a"});
  Finish(a, a->RunTasks()[0], 1);
  MetricsPageOptions options;
  options.cache_ttl = absl::Hours(1);
  MetricsPage page(core_.get(), options);
  EXPECT_THAT(page.Render(), HasSubstr("fleetbench_runs{state=\"succeeded\"} 1\n"));
  Start("gemm", {"a"});
  Finish(a, a->RunTasks()[1], 1);
  const std::string cached = page.Render();
  // Runs by state come from the cache; the counters are read every time.
  EXPECT_THAT(cached, HasSubstr("fleetbench_runs{state=\"succeeded\"} 1\n"));
  EXPECT_THAT(cached, HasSubstr("fleetbench_samples_ingested_total 2\n"));
}

// The history is read again only after a commit: what reached the store
// some other way waits for max_age; a report committed shows at once (TTL 0).
TEST_F(MetricsPageTest, TheHistoryIsReadAgainAfterACommitOrMaxAge) {
  auto a = Connect("a");
  const std::string run = Start("gemm", {"a"});
  Finish(a, a->RunTasks()[0], 1);  // 1.0 tflops
  MetricsPageOptions options;
  options.cache_ttl = absl::ZeroDuration();
  options.max_age = absl::Hours(1);
  MetricsPage page(core_.get(), options);
  const std::string one = "node=\"a\"} 1e+12\n";
  EXPECT_THAT(page.Render(), HasSubstr(one));
  // Behind the core's back, a newer sample of the same run: no commit
  // counted, no read.
  storage::Store::ReportWrite write;
  v1::Sample* s = &write.samples.emplace_back();
  s->set_id(NewUlid());
  s->set_run_id(run);
  s->set_node("a");
  s->set_benchmark("gemm");
  s->set_metric("gemm.cpu.fp32.tflops");
  s->set_unit("tflops");
  s->set_value(5);
  s->set_time_unix_ms(absl::ToUnixMillis(clock_.Now()) + 1000);
  ASSERT_TRUE(store_->CommitReports({write}).ok());
  EXPECT_THAT(page.Render(), HasSubstr(one));
  // A report through the core: read again.
  Start("gemm", {"a"});
  Finish(a, a->RunTasks()[1], 1);
  EXPECT_THAT(page.Render(), HasSubstr("node=\"a\"} 5e+12\n"));
}

}  // namespace
}  // namespace fleetbench::controller

namespace fleetbench::controller {
namespace {

TEST_F(MetricsPageTest, ScheduleFiringsAreCountedBySchedulesAndOutcome) {
  Connect("a");
  v1::AddScheduleRequest add;
  add.mutable_schedule()->set_name("nightly");
  add.mutable_schedule()->set_cron("0 3 * * *");
  add.mutable_schedule()->mutable_run()->add_benchmarks()->set_name("gemm");
  ASSERT_TRUE(core_->AddSchedule(add).ok());
  ASSERT_EQ(core_->RunSchedule("nightly")->firing().outcome(), v1::FIRING_OUTCOME_STARTED);
  ASSERT_EQ(core_->RunSchedule("nightly")->firing().outcome(), v1::FIRING_OUTCOME_SKIPPED);
  MetricsPageOptions options;
  options.db_path = dir_ + "/h.db";
  MetricsPage page(core_.get(), options);
  const std::string text = page.Render();
  EXPECT_THAT(text, HasSubstr("fleetbench_schedule_firings_total{outcome=\"started\","
                              "schedule=\"nightly\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("fleetbench_schedule_firings_total{outcome=\"skipped\","
                              "schedule=\"nightly\"} 1\n"));
}

}  // namespace
}  // namespace fleetbench::controller
