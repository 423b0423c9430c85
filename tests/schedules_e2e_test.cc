// Schedules end to end (docs/schedules.md): a real controller process on a real
// SQLite file, a real agent, and a schedule set through the CLI to the next
// minute in a named time zone; the controller fires it by the wall clock and
// the run's results come back. Then `schedule run` now, skipped while that
// run goes, `history` and `rm`.
#include <signal.h>

#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "fleetbench/v1/run.pb.h"
#include "fleetbench/v1/schedule.pb.h"
#include "gtest/gtest.h"
#include "tests/fleet_fixture.h"
#include "tests/process.h"

namespace fleetbench::testing {
namespace {

class SchedulesTest : public FleetTest {
 protected:
  v1::ListSchedulesResponse Listed() {
    v1::ListSchedulesResponse listed;
    EXPECT_TRUE(CliJson({"schedule", "list"}, &listed));
    return listed;
  }
  // Waits for the run to end; its final state.
  v1::RunState WaitForRunEnd(const std::string& run_id) {
    v1::Run run;
    const bool ended = WaitFor(
        [&] {
          return CliJson({"results", run_id}, &run) && run.state() != v1::RUN_STATE_QUEUED &&
                 run.state() != v1::RUN_STATE_RUNNING;
        },
        absl::Minutes(2));
    EXPECT_TRUE(ended) << "run " << run_id << " still " << run.state();
    return run.state();
  }
};

TEST_F(SchedulesTest, AScheduleForTheNextMinuteFiresAndItsRunCompletes) {
  StartController();
  Process* agent = StartAgent("n1", {"pool=e2e"});
  ASSERT_TRUE(WaitForOnlineNodes(1, absl::Seconds(30)));

  // The controller fires nothing until 15 s (its schedule_settle) after it
  // loaded the schedules, which it did before it served the agent: a slot
  // earlier than that is reported, rightly, as the settle's end instead.
  const absl::Time settled = absl::Now() + absl::Seconds(15);

  // The next whole minute at least 10 s away and past the settle, as Paris'
  // wall clock has it.
  const absl::TimeZone paris = [] {
    absl::TimeZone z;
    EXPECT_TRUE(absl::LoadTimeZone("Europe/Paris", &z));
    return z;
  }();
  absl::Time due = absl::FromUnixSeconds((absl::ToUnixSeconds(absl::Now()) / 60 + 1) * 60);
  while (due - absl::Now() < absl::Seconds(10) || due < settled) due += absl::Minutes(1);
  const absl::CivilMinute wall(absl::ToCivilSecond(due, paris));
  const std::string cron = absl::StrCat(wall.minute(), " ", wall.hour(), " * * *");
  const std::vector<std::string> add = {
      "schedule", "add",      "--name",   "e2e",        "--cron",       cron,
      "--bench",  "gemm",     "--param",  "gemm.sizes=128", "--param",  "gemm.min_seconds=0.1",
      "--param",  "gemm.threads=1", "--select", "pool=e2e", "--timezone", "Europe/Paris"};
  v1::AddScheduleResponse added;
  int code = -1;
  ASSERT_TRUE(CliJson(add, &added, &code));
  ASSERT_EQ(code, 0);
  EXPECT_EQ(added.schedule().next_firing_unix_ms(), absl::ToUnixMillis(due));

  // Refused at the door: a name taken, a zone tzdata does not know, a cron
  // expression with a bad field.
  CommandResult twice = Cli(add);
  EXPECT_EQ(twice.exit_code, 2);
  EXPECT_NE(twice.err.find("'e2e' exists"), std::string::npos) << twice.err;
  CommandResult zone = Cli({"schedule", "add", "--name", "z", "--cron", "0 3 * * *", "--suite",
                            "quick", "--timezone", "Europe/Nowhere"});
  EXPECT_EQ(zone.exit_code, 2);
  EXPECT_NE(zone.err.find("unknown time zone 'Europe/Nowhere'"), std::string::npos) << zone.err;
  CommandResult bad = Cli({"schedule", "add", "--name", "z", "--cron", "0 3 * 13 *", "--suite",
                           "quick"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("month field: '13' is out of range"), std::string::npos) << bad.err;

  // The controller fires it by the wall clock.
  v1::Schedule fired;
  ASSERT_TRUE(WaitFor(
      [&] {
        v1::ListSchedulesResponse listed = Listed();
        if (listed.schedules_size() != 1) return false;
        fired = listed.schedules(0);
        return fired.has_last_firing();
      },
      due - absl::Now() + absl::Seconds(30)))
      << "no firing by " << absl::FormatTime(due + absl::Seconds(30));
  const v1::ScheduleFiring& firing = fired.last_firing();
  ASSERT_EQ(firing.outcome(), v1::FIRING_OUTCOME_STARTED) << firing.reason();
  EXPECT_EQ(firing.slot_unix_ms(), absl::ToUnixMillis(due));
  EXPECT_GE(firing.fired_unix_ms(), absl::ToUnixMillis(due));
  EXPECT_GT(fired.next_firing_unix_ms(), absl::ToUnixMillis(due));
  EXPECT_EQ(WaitForRunEnd(firing.run_id()), v1::RUN_STATE_SUCCEEDED);
  v1::Run run;
  ASSERT_TRUE(CliJson({"results", firing.run_id()}, &run));
  ASSERT_EQ(run.tasks_size(), 1);
  EXPECT_EQ(run.tasks(0).node(), "n1");
  EXPECT_EQ(run.schedule(), "e2e");
  CommandResult results = Cli({"results", firing.run_id()});
  EXPECT_NE(results.out.find("(schedule e2e)"), std::string::npos) << results.out;

  // Now, by hand; and again while that run goes: skipped, exit 1. The
  // agent is stopped meanwhile so that the run is still going (it stays
  // online for the heartbeat timeout, 15 s).
  agent->Signal(SIGSTOP);
  CommandResult now = Cli({"schedule", "run", "e2e"});
  ASSERT_EQ(now.exit_code, 0) << now.err;
  const std::string manual_run(absl::StripAsciiWhitespace(now.out));
  CommandResult again = Cli({"schedule", "run", "e2e"});
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_NE(again.err.find("skipped: the previous run " + manual_run + " is still"),
            std::string::npos)
      << again.err;
  agent->Signal(SIGCONT);
  EXPECT_EQ(WaitForRunEnd(manual_run), v1::RUN_STATE_SUCCEEDED);

  v1::ListScheduleFiringsResponse history;
  ASSERT_TRUE(CliJson({"schedule", "history", "e2e"}, &history));
  ASSERT_EQ(history.firings_size(), 3);
  EXPECT_EQ(history.firings(0).outcome(), v1::FIRING_OUTCOME_SKIPPED);
  EXPECT_TRUE(history.firings(1).manual());
  EXPECT_EQ(history.firings(2).run_id(), firing.run_id());
  CommandResult table = Cli({"schedule", "history", "e2e"});
  EXPECT_EQ(table.exit_code, 0);
  EXPECT_NE(table.out.find("skipped (manual)"), std::string::npos) << table.out;
  CommandResult list = Cli({"schedule", "list"});
  EXPECT_NE(list.out.find("Europe/Paris"), std::string::npos) << list.out;

  CommandResult rm = Cli({"schedule", "rm", "e2e"});
  EXPECT_EQ(rm.exit_code, 0) << rm.err;
  EXPECT_EQ(Listed().schedules_size(), 0);
  EXPECT_EQ(Cli({"schedule", "rm", "e2e"}).exit_code, 2);
}

}  // namespace
}  // namespace fleetbench::testing
