// StoreRetry on its own: the episode's start and end, the retry's backoff,
// the held reports' order and their bound, and the links owed a resend.
// The core's use of it (a full disk end to end through FleetCore) is in
// fleet_core_ingest_test.cc and tests/faults_e2e_test.cc.
#include "controller/core/store_retry.h"

#include <memory>
#include <string>
#include <vector>

#include "controller/core/fleet_core_fixture.h"
#include "gmock/gmock.h"

namespace fleetbench::controller {
namespace {

const absl::Time kNow = absl::FromUnixSeconds(1'700'000'000);

PendingReport ReportOf(std::shared_ptr<AgentLink> link, const std::string& task_id,
                       int samples) {
  PendingReport p;
  p.link = std::move(link);
  p.report.set_task_id(task_id);
  for (int i = 0; i < samples; ++i) p.report.add_samples();
  return p;
}

TEST(StoreRetryTest, AFailureStartsAnEpisodeAndTheRetryBacksOffToTheMaximum) {
  StoreRetry retry({absl::Milliseconds(100), absl::Milliseconds(350)});
  EXPECT_FALSE(retry.failing());
  EXPECT_EQ(retry.next_retry(), absl::InfiniteFuture());
  retry.NoteFailure(absl::ResourceExhaustedError("disk full"), "committing 3 reports", kNow);
  EXPECT_TRUE(retry.failing());
  EXPECT_EQ(retry.next_retry(), kNow + absl::Milliseconds(100));
  StoreRetry::Snapshot shown = retry.snapshot();
  EXPECT_TRUE(shown.failing);
  EXPECT_EQ(shown.error, "committing 3 reports: disk full");
  EXPECT_EQ(shown.failing_since, kNow);
  EXPECT_EQ(shown.failures, 1);

  retry.StartRetry(kNow + absl::Milliseconds(100));
  EXPECT_EQ(retry.next_retry(), kNow + absl::Milliseconds(300));
  retry.StartRetry(kNow + absl::Milliseconds(300));
  EXPECT_EQ(retry.next_retry(), kNow + absl::Milliseconds(650)) << "capped at the maximum";
  // A later failure in the same episode keeps its start and its schedule.
  retry.NoteFailure(absl::ResourceExhaustedError("still full"), "finishing task t1",
                    kNow + absl::Seconds(1));
  EXPECT_EQ(retry.snapshot().failing_since, kNow);
  EXPECT_EQ(retry.snapshot().failures, 2);
  EXPECT_EQ(retry.next_retry(), kNow + absl::Milliseconds(650));
}

TEST(StoreRetryTest, TheEpisodeEndsOnlyWhenNothingWaits) {
  StoreRetry retry({});
  auto link = std::make_shared<RecordingLink>();
  retry.NoteFailure(absl::ResourceExhaustedError("disk full"), "committing", kNow);
  std::vector<PendingReport> reports;
  reports.push_back(ReportOf(link, "t1", 2));
  retry.Hold(reports, kNow);
  EXPECT_TRUE(reports.empty());
  retry.NoteOk(/*backlog_left=*/false, kNow);
  EXPECT_TRUE(retry.failing()) << "a report is still held";
  std::vector<PendingReport> held = retry.TakeHeld();
  ASSERT_EQ(held.size(), 1u);
  retry.NoteOk(/*backlog_left=*/true, kNow);
  EXPECT_TRUE(retry.failing()) << "the core still has a task end to store";
  retry.NoteOk(/*backlog_left=*/false, kNow + absl::Seconds(3));
  EXPECT_FALSE(retry.failing());
  EXPECT_EQ(retry.next_retry(), absl::InfiniteFuture());
  EXPECT_EQ(retry.snapshot().error, "");
  EXPECT_EQ(retry.snapshot().failing_since, absl::InfinitePast());
}

TEST(StoreRetryTest, HeldReportsKeepTheirOrderAndPastTheBoundTheirLinksAreOwedAResend) {
  StoreRetry retry({});
  auto early = std::make_shared<RecordingLink>();
  auto late = std::make_shared<RecordingLink>();
  retry.NoteFailure(absl::ResourceExhaustedError("disk full"), "committing", kNow);
  std::vector<PendingReport> reports;
  reports.push_back(ReportOf(early, "t1", 1));
  reports.push_back(ReportOf(early, "t2", StoreRetry::kMaxHeldSamples - 1));
  retry.Hold(reports, kNow);
  reports.push_back(ReportOf(late, "t3", 1));  // one past the bound
  retry.Hold(reports, kNow);
  EXPECT_EQ(retry.snapshot().reports_held, 2);

  std::vector<PendingReport> held = retry.TakeHeld();
  ASSERT_EQ(held.size(), 2u);
  EXPECT_EQ(held[0].report.task_id(), "t1");
  EXPECT_EQ(held[1].report.task_id(), "t2");
  EXPECT_EQ(retry.snapshot().reports_held, 0);
  EXPECT_FALSE(late->closed()) << "closed only once the store has recovered";
  retry.NoteOk(/*backlog_left=*/false, kNow);
  EXPECT_TRUE(late->closed()) << "its agent reconnects and resends from its spool";
  EXPECT_FALSE(early->closed());
}

}  // namespace
}  // namespace fleetbench::controller
