// Tests of the store's reliability record: time online adds up per node
// and day, interruptions are counted per node and kind from a time on,
// a bad record stores nothing, and all of it survives a reopen.
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/store.h"
#include "storage/store_test_util.h"

namespace fleetbench::storage {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

InterruptionRecord Interruption(const std::string& node, absl::Time time,
                                const std::string& kind) {
  return {node, time, kind, "what happened to " + node};
}

class ReliabilityTest : public StoreContractTest {};
FLEETBENCH_STORE_CONTRACT(ReliabilityTest);

TEST_P(ReliabilityTest, TimeOnlineAddsUpPerNodeAndDay) {
  const int64_t day = UtcDayOf(absl::ToUnixMillis(kT0));
  ASSERT_TRUE(store_->RecordReliability({{"a", day, 1000}, {"b", day, 500}}, {}).ok());
  ASSERT_TRUE(store_->RecordReliability({{"a", day, 250}, {"a", day + 1, 4000}}, {}).ok());
  EXPECT_THAT(*store_->UptimeSince(day), ElementsAre(Pair("a", 5250), Pair("b", 500)));
  EXPECT_THAT(*store_->UptimeSince(day + 1), ElementsAre(Pair("a", 4000)));
  EXPECT_TRUE(store_->UptimeSince(day + 2)->empty());
}

TEST_P(ReliabilityTest, InterruptionsCountedPerNodeAndKindFromATime) {
  ASSERT_TRUE(store_
                  ->RecordReliability({}, {Interruption("a", kT0, "offline"),
                                           Interruption("a", kT0 + absl::Hours(1), "offline"),
                                           Interruption("a", kT0 + absl::Hours(2), "preempted"),
                                           Interruption("b", kT0 + absl::Hours(3), "revoked")})
                  .ok());
  auto all = store_->InterruptionCountsSince(kT0);
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_THAT((*all)["a"], ElementsAre(Pair("offline", 2), Pair("preempted", 1)));
  EXPECT_THAT((*all)["b"], ElementsAre(Pair("revoked", 1)));
  auto later = store_->InterruptionCountsSince(kT0 + absl::Hours(1));
  EXPECT_THAT((*later)["a"], ElementsAre(Pair("offline", 1), Pair("preempted", 1)));

  auto newest = store_->InterruptionsSince(kT0 + absl::Hours(1), 2);
  ASSERT_TRUE(newest.ok()) << newest.status();
  ASSERT_EQ(newest->size(), 2u);
  EXPECT_EQ((*newest)[0].node, "b");
  EXPECT_EQ((*newest)[0].kind, "revoked");
  EXPECT_EQ((*newest)[0].time, kT0 + absl::Hours(3));
  EXPECT_EQ((*newest)[0].detail, "what happened to b");
  EXPECT_EQ((*newest)[1].kind, "preempted");
  EXPECT_TRUE(absl::IsInvalidArgument(store_->InterruptionsSince(kT0, 0).status()));
}

TEST_P(ReliabilityTest, ABadRecordStoresNothingOfTheCall) {
  const int64_t day = UtcDayOf(absl::ToUnixMillis(kT0));
  EXPECT_TRUE(absl::IsInvalidArgument(
      store_->RecordReliability({{"a", day, 10}, {"", day, 10}}, {Interruption("a", kT0, "x")})));
  EXPECT_TRUE(absl::IsInvalidArgument(store_->RecordReliability({{"a", day, -1}}, {})));
  EXPECT_TRUE(absl::IsInvalidArgument(
      store_->RecordReliability({{"a", day, 10}}, {Interruption("a", kT0, "")})));
  EXPECT_TRUE(store_->UptimeSince(0)->empty());
  EXPECT_TRUE(store_->InterruptionCountsSince(absl::InfinitePast())->empty());
}

TEST_P(ReliabilityTest, SurvivesAReopenAndOutlivesTheNode) {
  AddNodeAndRun("a", "run-1");
  const int64_t day = UtcDayOf(absl::ToUnixMillis(kT0));
  ASSERT_TRUE(store_->RecordReliability({{"a", day, 3'600'000}},
                                        {Interruption("a", kT0, "agent_restart")})
                  .ok());
  ASSERT_TRUE(store_->RemoveNode("a", kT0 + absl::Hours(1)).ok());
  Reopen();
  EXPECT_THAT(*store_->UptimeSince(day), ElementsAre(Pair("a", 3'600'000)));
  EXPECT_THAT((*store_->InterruptionCountsSince(kT0))["a"], ElementsAre(Pair("agent_restart", 1)));
}

}  // namespace
}  // namespace fleetbench::storage
