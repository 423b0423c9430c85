// Schedules fired by the core on the injected clock (docs/schedules.md): at the cron
// time, skipped while the previous run is going, a missed cron time caught
// up once after a restart, offline nodes recorded, and the DST rules in a
// named time zone.
#include <map>
#include <string>
#include <vector>

#include "controller/core/fleet_core_fixture.h"
#include "gmock/gmock.h"

namespace fleetbench::controller {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class ScheduleTest : public FleetCoreTest {
 protected:
  void SetUp() override {
    FleetCoreTest::SetUp();
    RestartCore(ScheduleOptions());
  }
  // Nodes stay online across the long clock jumps these tests make.
  static FleetOptions ScheduleOptions() {
    FleetOptions options = Options();
    options.heartbeat_timeout = absl::Hours(24 * 365);
    return options;
  }
  // The fixture's clock starts at 2027-01-15 08:00 UTC.
  absl::Time Utc(int y, int mo, int d, int h, int mi) {
    return absl::FromCivil(absl::CivilMinute(y, mo, d, h, mi), absl::UTCTimeZone());
  }
  void AdvanceTo(absl::Time t) {
    ASSERT_GE(t, clock_.Now());
    AdvanceAndSweep(t - clock_.Now());
  }

  std::shared_ptr<RecordingLink> ConnectLabelled(const std::string& name,
                                                 std::map<std::string, std::string> labels) {
    v1::Hello hello = MakeHello(name);
    for (const auto& [k, v] : labels) (*hello.mutable_labels())[k] = v;
    return ConnectWith(hello);
  }

  absl::StatusOr<v1::Schedule> Add(const std::string& name, const std::string& cron,
                                   const std::string& zone = "",
                                   std::map<std::string, std::string> select = {}) {
    v1::AddScheduleRequest request;
    v1::Schedule* s = request.mutable_schedule();
    s->set_name(name);
    s->set_cron(cron);
    s->set_timezone(zone);
    s->mutable_run()->add_benchmarks()->set_name("gemm");
    s->mutable_run()->set_suite("nightly-test");
    for (const auto& [k, v] : select) (*s->mutable_run()->mutable_select_labels())[k] = v;
    absl::StatusOr<v1::AddScheduleResponse> added = core_->AddSchedule(request);
    if (!added.ok()) return added.status();
    return added->schedule();
  }

  std::vector<v1::ScheduleFiring> Firings(const std::string& name) {
    v1::ListScheduleFiringsRequest request;
    request.set_name(name);
    auto firings = core_->ListScheduleFirings(request);
    EXPECT_TRUE(firings.ok()) << firings.status();
    if (!firings.ok()) return {};
    // Oldest first reads better in the tests.
    return std::vector<v1::ScheduleFiring>(firings->firings().rbegin(), firings->firings().rend());
  }
  std::vector<v1::FiringOutcome> Outcomes(const std::string& name) {
    std::vector<v1::FiringOutcome> out;
    for (const auto& f : Firings(name)) out.push_back(f.outcome());
    return out;
  }
  v1::Schedule Listed(const std::string& name) {
    auto listed = core_->ListSchedules();
    EXPECT_TRUE(listed.ok()) << listed.status();
    for (const v1::Schedule& s : listed->schedules()) {
      if (s.name() == name) return s;
    }
    ADD_FAILURE() << "no schedule " << name;
    return {};
  }
  int RunCount() {
    auto runs = core_->ListRuns(v1::ListRunsRequest());
    EXPECT_TRUE(runs.ok()) << runs.status();
    return runs.ok() ? runs->runs_size() : -1;
  }
};

TEST_F(ScheduleTest, FiresAtItsCronTimeOnTheInjectedClock) {
  auto a = Connect("a");
  auto added = Add("nightly", "0 9 * * *");
  ASSERT_TRUE(added.ok()) << added.status();
  EXPECT_EQ(added->next_firing_unix_ms(), absl::ToUnixMillis(Utc(2027, 1, 15, 9, 0)));
  AdvanceTo(Utc(2027, 1, 15, 8, 59) + absl::Seconds(59));
  EXPECT_EQ(RunCount(), 0);
  EXPECT_FALSE(Listed("nightly").has_last_firing());
  AdvanceTo(Utc(2027, 1, 15, 9, 0));
  ASSERT_THAT(Outcomes("nightly"), ElementsAre(v1::FIRING_OUTCOME_STARTED));
  const v1::ScheduleFiring f = Firings("nightly")[0];
  EXPECT_EQ(f.slot_unix_ms(), absl::ToUnixMillis(Utc(2027, 1, 15, 9, 0)));
  EXPECT_FALSE(f.manual());
  ASSERT_EQ(a->RunTasks().size(), 1u);
  EXPECT_EQ(a->RunTasks()[0].run_id(), f.run_id());
  v1::GetRunRequest get;
  get.set_run_id(f.run_id());
  EXPECT_EQ(core_->GetRun(get)->suite(), "nightly-test");
  const v1::Schedule listed = Listed("nightly");
  EXPECT_EQ(listed.last_firing().run_id(), f.run_id());
  EXPECT_EQ(listed.next_firing_unix_ms(), absl::ToUnixMillis(Utc(2027, 1, 16, 9, 0)));
  EXPECT_EQ(core_->GetStats().schedule_firings.at({"nightly", "started"}), 1);
  // Nothing more until tomorrow's 09:00.
  AdvanceTo(Utc(2027, 1, 16, 8, 0));
  EXPECT_EQ(RunCount(), 1);
}

TEST_F(ScheduleTest, IsSkippedWhileItsPreviousRunIsStillGoing) {
  auto a = Connect("a");
  ASSERT_TRUE(Add("often", "*/10 * * * *").ok());
  AdvanceTo(Utc(2027, 1, 15, 8, 10));
  AdvanceTo(Utc(2027, 1, 15, 8, 20));
  ASSERT_THAT(Outcomes("often"),
              ElementsAre(v1::FIRING_OUTCOME_STARTED, v1::FIRING_OUTCOME_SKIPPED));
  const std::string first_run = Firings("often")[0].run_id();
  EXPECT_THAT(Firings("often")[1].reason(),
              HasSubstr("the previous run " + first_run + " is still"));
  EXPECT_EQ(RunCount(), 1);
  EXPECT_EQ(core_->GetStats().schedule_firings.at({"often", "skipped"}), 1);
  // Once it ended the next cron time starts a run again.
  Finish(a, a->RunTasks()[0]);
  AdvanceTo(Utc(2027, 1, 15, 8, 30));
  EXPECT_THAT(Outcomes("often"), ElementsAre(v1::FIRING_OUTCOME_STARTED, v1::FIRING_OUTCOME_SKIPPED,
                                             v1::FIRING_OUTCOME_STARTED));
  EXPECT_EQ(RunCount(), 2);
}

TEST_F(ScheduleTest, AMissedCronTimeWithinTheGraceWindowRunsOnceAfterARestart) {
  Connect("a");
  ASSERT_TRUE(Add("hourly", "0 * * * *").ok());
  // Down from 08:00 to 13:30: 09:00 .. 13:00 passed; 13:00 is within the
  // hour of grace.
  core_.reset();
  clock_.Advance(absl::Minutes(5 * 60 + 30));
  RestartCore(ScheduleOptions());
  Connect("a");
  // The restarted core waits for agents to come back first.
  AdvanceAndSweep(absl::Seconds(5));
  EXPECT_TRUE(Firings("hourly").empty());
  AdvanceAndSweep(absl::Seconds(10));
  ASSERT_THAT(Outcomes("hourly"),
              ElementsAre(v1::FIRING_OUTCOME_MISSED, v1::FIRING_OUTCOME_STARTED));
  const std::vector<v1::ScheduleFiring> f = Firings("hourly");
  EXPECT_EQ(f[0].slots(), 4);
  EXPECT_EQ(f[0].slot_unix_ms(), absl::ToUnixMillis(Utc(2027, 1, 15, 9, 0)));
  EXPECT_THAT(f[0].reason(), HasSubstr("4 cron times from 2027-01-15 09:00 UTC"));
  EXPECT_EQ(f[1].slot_unix_ms(), absl::ToUnixMillis(Utc(2027, 1, 15, 13, 0)));
  EXPECT_EQ(RunCount(), 1);
  // And not again at the next sweep or the next restart.
  AdvanceAndSweep(absl::Minutes(1));
  core_.reset();
  RestartCore(ScheduleOptions());
  AdvanceAndSweep(absl::Seconds(20));
  EXPECT_EQ(Firings("hourly").size(), 2u);
  EXPECT_EQ(RunCount(), 1);
  EXPECT_EQ(Listed("hourly").next_firing_unix_ms(), absl::ToUnixMillis(Utc(2027, 1, 15, 14, 0)));
}

TEST_F(ScheduleTest, ACronTimePastTheGraceWindowIsRecordedMissedAndNotRun) {
  Connect("a");
  ASSERT_TRUE(Add("nightly", "0 9 * * *").ok());
  core_.reset();
  clock_.Advance(absl::Hours(3));  // 11:00: 09:00 is two hours old
  RestartCore(ScheduleOptions());
  Connect("a");
  AdvanceAndSweep(absl::Seconds(20));
  ASSERT_THAT(Outcomes("nightly"), ElementsAre(v1::FIRING_OUTCOME_MISSED));
  EXPECT_THAT(Firings("nightly")[0].reason(), HasSubstr("longer ago than the grace window (1h)"));
  EXPECT_EQ(RunCount(), 0);
  EXPECT_EQ(Listed("nightly").next_firing_unix_ms(), absl::ToUnixMillis(Utc(2027, 1, 16, 9, 0)));
  EXPECT_EQ(core_->GetStats().schedule_firings.at({"nightly", "missed"}), 1);
}

TEST_F(ScheduleTest, WithoutGraceALateFiringStillRunsButNothingIsCaughtUp) {
  FleetOptions options = ScheduleOptions();
  options.schedule_grace = absl::ZeroDuration();
  RestartCore(options);
  Connect("a");
  ASSERT_TRUE(Add("often", "*/5 * * * *").ok());
  // Late by a second (a busy controller): still run.
  AdvanceTo(Utc(2027, 1, 15, 8, 5) + absl::Seconds(1));
  ASSERT_THAT(Outcomes("often"), ElementsAre(v1::FIRING_OUTCOME_STARTED));
  core_.reset();
  clock_.Advance(absl::Minutes(7));  // down over 08:10
  RestartCore(options);
  Connect("a");
  AdvanceAndSweep(absl::Seconds(20));
  EXPECT_THAT(Outcomes("often"),
              ElementsAre(v1::FIRING_OUTCOME_STARTED, v1::FIRING_OUTCOME_MISSED));
  EXPECT_EQ(RunCount(), 1);
}

TEST_F(ScheduleTest, OfflineNodesOfTheSelectionAreRecorded) {
  ConnectLabelled("a", {{"pool", "x"}});
  ConnectLabelled("b", {{"pool", "y"}});
  ConnectLabelled("c", {{"pool", "x"}});
  // After a restart only a comes back.
  RestartCore(ScheduleOptions());
  auto a = ConnectLabelled("a", {{"pool", "x"}});
  ASSERT_TRUE(Add("pool-x", "*/5 * * * *", "", {{"pool", "x"}}).ok());
  AdvanceTo(Utc(2027, 1, 15, 8, 5));
  ASSERT_THAT(Outcomes("pool-x"), ElementsAre(v1::FIRING_OUTCOME_STARTED));
  EXPECT_THAT(Firings("pool-x")[0].offline_nodes(), ElementsAre("c"));
  EXPECT_EQ(a->RunTasks().size(), 1u);
  // The run says so too.
  v1::GetRunRequest get;
  get.set_run_id(Firings("pool-x")[0].run_id());
  auto run = core_->GetRun(get);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->schedule(), "pool-x");
  EXPECT_THAT(run->offline_nodes(), ElementsAre("c"));
}

TEST_F(ScheduleTest, AFiringNoNodeCanTakeIsRecordedFailed) {
  Connect("a");
  ASSERT_TRUE(Add("pool-z", "*/5 * * * *", "", {{"pool", "z"}}).ok());
  AdvanceTo(Utc(2027, 1, 15, 8, 5));
  ASSERT_THAT(Outcomes("pool-z"), ElementsAre(v1::FIRING_OUTCOME_FAILED));
  EXPECT_THAT(Firings("pool-z")[0].reason(), HasSubstr("no online node matches"));
}

TEST_F(ScheduleTest, RunNowFiresWithoutMovingTheCron) {
  auto a = Connect("a");
  ASSERT_TRUE(Add("nightly", "0 9 * * *").ok());
  auto now = core_->RunSchedule("nightly");
  ASSERT_TRUE(now.ok()) << now.status();
  EXPECT_EQ(now->firing().outcome(), v1::FIRING_OUTCOME_STARTED);
  EXPECT_TRUE(now->firing().manual());
  EXPECT_EQ(Listed("nightly").next_firing_unix_ms(), absl::ToUnixMillis(Utc(2027, 1, 15, 9, 0)));
  // Asked again while that run goes: skipped, with the reason.
  auto again = core_->RunSchedule("nightly");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->firing().outcome(), v1::FIRING_OUTCOME_SKIPPED);
  EXPECT_EQ(core_->RunSchedule("weekly").status().code(), absl::StatusCode::kNotFound);
}

TEST_F(ScheduleTest, BadSchedulesAreRefusedWithOneLine) {
  auto code = [&](const absl::StatusOr<v1::Schedule>& s) { return s.status().code(); };
  EXPECT_THAT(Add("bad name", "0 3 * * *").status().message(), HasSubstr("schedule name 'bad name'"));
  auto cron = Add("n", "0 3 * * mo");
  EXPECT_EQ(code(cron), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(cron.status().message(), HasSubstr("day-of-week field: 'mo'"));
  auto zone = Add("n", "0 3 * * *", "Europe/Pariss");
  EXPECT_EQ(code(zone), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(zone.status().message(), HasSubstr("unknown time zone 'Europe/Pariss'"));
  ASSERT_TRUE(Add("n", "0 3 * * *", "Europe/Paris").ok());
  auto twice = Add("n", "0 4 * * *");
  EXPECT_EQ(code(twice), absl::StatusCode::kAlreadyExists);
  v1::AddScheduleRequest named;
  named.mutable_schedule()->set_name("m");
  named.mutable_schedule()->set_cron("0 3 * * *");
  EXPECT_THAT(core_->AddSchedule(named).status().message(), HasSubstr("needs a suite or benchmarks"));
  named.mutable_schedule()->mutable_run()->add_benchmarks()->set_name("gemm");
  named.mutable_schedule()->mutable_run()->add_nodes("a");
  EXPECT_THAT(core_->AddSchedule(named).status().message(), HasSubstr("not by name"));
  EXPECT_TRUE(core_->RemoveSchedule("n").ok());
  EXPECT_EQ(core_->RemoveSchedule("n").code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(core_->ListSchedules()->schedules().empty());
}

// Europe/Paris springs forward on 2027-03-28 (02:00 CET -> 03:00 CEST) and
// falls back on 2027-10-31 (03:00 CEST -> 02:00 CET).
TEST_F(ScheduleTest, DaylightSavingTimeInANamedZone) {
  clock_.Advance(Utc(2027, 3, 27, 12, 0) - clock_.Now());
  auto a = Connect("a");
  ASSERT_TRUE(Add("paris", "30 2 * * *", "Europe/Paris").ok());
  // 02:30 does not exist on the 28th: it runs once, at 03:00 CEST.
  EXPECT_EQ(Listed("paris").next_firing_unix_ms(), absl::ToUnixMillis(Utc(2027, 3, 28, 1, 0)));
  AdvanceTo(Utc(2027, 3, 28, 0, 59));
  EXPECT_TRUE(Firings("paris").empty());
  AdvanceTo(Utc(2027, 3, 28, 1, 0));
  ASSERT_THAT(Outcomes("paris"), ElementsAre(v1::FIRING_OUTCOME_STARTED));
  Finish(a, a->RunTasks().back());
  AdvanceTo(Utc(2027, 3, 28, 12, 0));
  EXPECT_EQ(Firings("paris").size(), 1u);
  // Then 02:30 CEST, 00:30 UTC.
  EXPECT_EQ(Listed("paris").next_firing_unix_ms(), absl::ToUnixMillis(Utc(2027, 3, 29, 0, 30)));
  ASSERT_TRUE(core_->RemoveSchedule("paris").ok());

  clock_.Advance(Utc(2027, 10, 30, 12, 0) - clock_.Now());
  ASSERT_TRUE(Add("paris", "30 2 * * *", "Europe/Paris").ok());
  // 02:30 happens twice on the 31st: it runs at the first, 02:30 CEST.
  AdvanceTo(Utc(2027, 10, 31, 0, 30));
  ASSERT_THAT(Outcomes("paris"), ElementsAre(v1::FIRING_OUTCOME_STARTED));
  Finish(a, a->RunTasks().back());
  AdvanceTo(Utc(2027, 10, 31, 1, 30));  // 02:30 CET, the second time
  AdvanceTo(Utc(2027, 10, 31, 12, 0));
  EXPECT_EQ(Firings("paris").size(), 1u);
  EXPECT_EQ(Listed("paris").next_firing_unix_ms(), absl::ToUnixMillis(Utc(2027, 11, 1, 1, 30)));
}

}  // namespace
}  // namespace fleetbench::controller
