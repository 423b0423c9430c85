// Tests of the SQLite store's schedules: definitions and their marks survive
// reopening, names are unique, firings come back newest first and go with
// their schedule, and a version-6 file upgrades to take them.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "fleetbench/v1/schedule.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/migrations.h"
#include "storage/sqlite_store.h"
#include "storage/store.h"
#include "storage/store_test_util.h"

namespace fleetbench::storage {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Store::ScheduleRecord MakeSchedule(const std::string& name) {
  Store::ScheduleRecord r;
  r.schedule.set_name(name);
  r.schedule.set_cron("0 3 * * *");
  r.schedule.set_timezone("Europe/Paris");
  r.schedule.mutable_run()->add_benchmarks()->set_name("gemm");
  r.schedule.mutable_run()->set_suite("full");
  r.schedule.mutable_run()->set_max_parallel(2);
  (*r.schedule.mutable_run()->mutable_select_labels())["pool"] = "a";
  r.schedule.set_created_unix_ms(absl::ToUnixMillis(kT0));
  r.handled_until = kT0;
  return r;
}

v1::ScheduleFiring Firing(const std::string& schedule, absl::Time slot, v1::FiringOutcome outcome,
                          const std::string& run_id = "") {
  v1::ScheduleFiring f;
  f.set_schedule(schedule);
  f.set_slot_unix_ms(absl::ToUnixMillis(slot));
  f.set_fired_unix_ms(absl::ToUnixMillis(slot) + 100);
  f.set_outcome(outcome);
  f.set_run_id(run_id);
  return f;
}

TEST_P(StoreContractTest, SchedulesAndTheirMarksSurviveReopening) {
  ASSERT_TRUE(store_->CreateSchedule(MakeSchedule("nightly")).ok());
  ASSERT_TRUE(store_->CreateSchedule(MakeSchedule("hourly")).ok());
  v1::ScheduleFiring started = Firing("nightly", kT0 + absl::Hours(1), v1::FIRING_OUTCOME_STARTED, "r1");
  started.add_offline_nodes("n2");
  started.add_offline_nodes("n3");
  ASSERT_TRUE(store_->RecordFiring(started, kT0 + absl::Hours(1)).ok());
  // A skip moves the mark but keeps the run that is still going.
  ASSERT_TRUE(store_
                  ->RecordFiring(Firing("nightly", kT0 + absl::Hours(2), v1::FIRING_OUTCOME_SKIPPED),
                                 kT0 + absl::Hours(2))
                  .ok());
  // A manual firing leaves the mark alone; the mark never moves back.
  v1::ScheduleFiring manual = Firing("nightly", kT0 + absl::Hours(3), v1::FIRING_OUTCOME_STARTED, "r2");
  manual.set_manual(true);
  ASSERT_TRUE(store_->RecordFiring(manual, std::nullopt).ok());
  ASSERT_TRUE(store_->RecordFiring(Firing("nightly", kT0, v1::FIRING_OUTCOME_MISSED), kT0).ok());
  Reopen();

  auto schedules = store_->ListSchedules();
  ASSERT_TRUE(schedules.ok()) << schedules.status();
  ASSERT_EQ(schedules->size(), 2u);
  EXPECT_EQ((*schedules)[0].schedule.name(), "hourly");
  const Store::ScheduleRecord& nightly = (*schedules)[1];
  EXPECT_EQ(nightly.schedule.cron(), "0 3 * * *");
  EXPECT_EQ(nightly.schedule.timezone(), "Europe/Paris");
  EXPECT_EQ(nightly.schedule.run().suite(), "full");
  EXPECT_EQ(nightly.schedule.run().max_parallel(), 2u);
  EXPECT_EQ(nightly.schedule.run().select_labels().at("pool"), "a");
  EXPECT_EQ(nightly.schedule.created_unix_ms(), absl::ToUnixMillis(kT0));
  EXPECT_EQ(nightly.handled_until, kT0 + absl::Hours(2));
  EXPECT_EQ(nightly.last_run_id, "r2");
  EXPECT_EQ((*schedules)[0].handled_until, kT0);

  auto firings = store_->ListFirings("nightly", 10);
  ASSERT_TRUE(firings.ok()) << firings.status();
  ASSERT_EQ(firings->size(), 4u);
  EXPECT_EQ((*firings)[0].outcome(), v1::FIRING_OUTCOME_MISSED);
  EXPECT_TRUE((*firings)[1].manual());
  EXPECT_EQ((*firings)[2].outcome(), v1::FIRING_OUTCOME_SKIPPED);
  EXPECT_EQ((*firings)[3].run_id(), "r1");
  EXPECT_THAT((*firings)[3].offline_nodes(), ElementsAre("n2", "n3"));
  EXPECT_EQ((*firings)[3].fired_unix_ms(), absl::ToUnixMillis(kT0 + absl::Hours(1)) + 100);
  EXPECT_EQ((*firings)[3].slots(), 1);
  EXPECT_EQ(store_->ListFirings("nightly", 1)->size(), 1u);
  auto of_run = store_->FiringOfRun("r1");
  ASSERT_TRUE(of_run.ok()) << of_run.status();
  ASSERT_TRUE(of_run->has_value());
  EXPECT_EQ((*of_run)->schedule(), "nightly");
  EXPECT_THAT((*of_run)->offline_nodes(), ElementsAre("n2", "n3"));
  EXPECT_FALSE(store_->FiringOfRun("r9")->has_value());
  EXPECT_FALSE(store_->FiringOfRun("")->has_value());
  EXPECT_TRUE(store_->ListFirings("hourly", 10)->empty());
  EXPECT_TRUE(store_->CheckIntegrity().ok());
}

TEST_P(StoreContractTest, ScheduleNamesAreUniqueAndUnknownOnesAreNotFound) {
  ASSERT_TRUE(store_->CreateSchedule(MakeSchedule("nightly")).ok());
  absl::Status again = store_->CreateSchedule(MakeSchedule("nightly"));
  EXPECT_EQ(again.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(again.message(), HasSubstr("'nightly' exists"));
  EXPECT_EQ(store_->CreateSchedule(MakeSchedule("")).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->RemoveSchedule("weekly").code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->ListFirings("weekly", 5).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->RecordFiring(Firing("weekly", kT0, v1::FIRING_OUTCOME_MISSED), kT0).code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->ListFirings("nightly", 0).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_P(StoreContractTest, RemovingAScheduleRemovesItsFirings) {
  ASSERT_TRUE(store_->CreateSchedule(MakeSchedule("nightly")).ok());
  ASSERT_TRUE(store_->RecordFiring(Firing("nightly", kT0, v1::FIRING_OUTCOME_MISSED), kT0).ok());
  ASSERT_TRUE(store_->RemoveSchedule("nightly").ok());
  EXPECT_TRUE(store_->ListSchedules()->empty());
  // A schedule made again under the name starts with no history.
  ASSERT_TRUE(store_->CreateSchedule(MakeSchedule("nightly")).ok());
  EXPECT_TRUE(store_->ListFirings("nightly", 10)->empty());
  EXPECT_TRUE(store_->CheckIntegrity().ok());
}

TEST_F(SqliteStoreTest, AVersionSixFileUpgradesAndTakesSchedules) {
  store_.reset();
  std::filesystem::remove(path_);
  SqliteOptions options;
  options.path = path_;
  {
    std::vector<SchemaMigration> v6(SchemaMigrations().begin(), SchemaMigrations().begin() + 6);
    auto old = OpenSqliteStoreWithMigrations(options, v6);
    ASSERT_TRUE(old.ok()) << old.status();
    ASSERT_TRUE((*old)->UpsertNode(MakeNode("n1", "6.1", kT0)).ok());
    EXPECT_FALSE((*old)->ListSchedules().ok());
  }
  Reopen();
  EXPECT_EQ(store_->ListNodes()->size(), 1u);
  ASSERT_TRUE(store_->CreateSchedule(MakeSchedule("nightly")).ok());
  EXPECT_EQ(store_->ListSchedules()->size(), 1u);
  EXPECT_TRUE(store_->CheckIntegrity().ok());
}

}  // namespace
}  // namespace fleetbench::storage
