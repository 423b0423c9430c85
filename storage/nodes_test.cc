// Tests of the SQLite store's nodes: labels, facts history, touch.
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/store.h"
#include "storage/store_test_util.h"

namespace fleetbench::storage {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

TEST_P(StoreContractTest, FactsHistoryGrowsOnlyWhenFactsChange) {
  ASSERT_TRUE(store_->UpsertNode(MakeNode("n1", "6.1", kT0)).ok());
  EXPECT_EQ(*store_->CountFactsVersions("n1"), 1);
  // Same facts at a later hello: no new version.
  ASSERT_TRUE(
      store_->UpsertNode(MakeNode("n1", "6.1", kT0 + absl::Hours(1))).ok());
  EXPECT_EQ(*store_->CountFactsVersions("n1"), 1);
  // A new kernel: a second version, and ListNodes shows the newest.
  ASSERT_TRUE(
      store_->UpsertNode(MakeNode("n1", "6.5", kT0 + absl::Hours(2))).ok());
  EXPECT_EQ(*store_->CountFactsVersions("n1"), 2);
  auto nodes = store_->ListNodes();
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  ASSERT_EQ(nodes->size(), 1u);
  EXPECT_EQ((*nodes)[0].facts.kernel(), "6.5");
  EXPECT_EQ((*nodes)[0].first_seen, kT0);
  EXPECT_EQ((*nodes)[0].last_seen, kT0 + absl::Hours(2));
  EXPECT_EQ(store_->CountFactsVersions("nope").status().code(),
            absl::StatusCode::kNotFound);
}

TEST_P(StoreContractTest, ListFactsVersionsNewestFirstWithWhenEachWasSeen) {
  ASSERT_TRUE(store_->UpsertNode(MakeNode("n1", "6.1", kT0)).ok());
  ASSERT_TRUE(store_->UpsertNode(MakeNode("n1", "6.1", kT0 + absl::Hours(1))).ok());
  ASSERT_TRUE(store_->UpsertNode(MakeNode("n1", "6.5", kT0 + absl::Hours(2))).ok());
  ASSERT_TRUE(store_->UpsertNode(MakeNode("n1", "6.8", kT0 + absl::Hours(3))).ok());
  auto all = store_->ListFactsVersions("n1", 0);
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0].facts.kernel(), "6.8");
  EXPECT_EQ((*all)[0].seen, kT0 + absl::Hours(3));
  EXPECT_EQ((*all)[1].facts.kernel(), "6.5");
  EXPECT_EQ((*all)[2].facts.kernel(), "6.1");
  EXPECT_EQ((*all)[2].seen, kT0);  // the first hello with it, not the last
  auto newest = store_->ListFactsVersions("n1", 2);
  ASSERT_TRUE(newest.ok());
  ASSERT_EQ(newest->size(), 2u);
  EXPECT_EQ((*newest)[1].facts.kernel(), "6.5");
  EXPECT_EQ(store_->ListFactsVersions("nope", 0).status().code(), absl::StatusCode::kNotFound);
}

TEST_P(StoreContractTest, ListNodesRoundTripsLabelsFactsAndTouch) {
  NodeRecord a = MakeNode("b-node", "6.1", kT0);
  a.facts.add_nics()->set_name("eth0");
  ASSERT_TRUE(store_->UpsertNode(a).ok());
  NodeRecord b = MakeNode("a-node", "6.1", kT0);
  b.labels = {{"provider", "gcp"}};
  ASSERT_TRUE(store_->UpsertNode(b).ok());
  // Labels are replaced, not merged.
  b.labels = {{"provider", "aws"}, {"region", "us-east-1"}};
  b.agent_version = "0.2.0";
  ASSERT_TRUE(store_->UpsertNode(b).ok());
  ASSERT_TRUE(store_->TouchNode("b-node", kT0 + absl::Minutes(5)).ok());
  EXPECT_EQ(store_->TouchNode("missing", kT0).code(), absl::StatusCode::kNotFound);

  Reopen();
  auto nodes = store_->ListNodes();
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  ASSERT_EQ(nodes->size(), 2u);
  const NodeRecord& first = (*nodes)[0];
  EXPECT_EQ(first.name, "a-node");
  EXPECT_THAT(first.labels,
              ElementsAre(Pair("provider", "aws"), Pair("region", "us-east-1")));
  EXPECT_EQ(first.agent_version, "0.2.0");
  const NodeRecord& second = (*nodes)[1];
  EXPECT_EQ(second.name, "b-node");
  EXPECT_EQ(second.facts.nics(0).name(), "eth0");
  EXPECT_EQ(second.facts.cpu().flags_of_interest(0), "avx2");
  EXPECT_EQ(second.last_seen, kT0 + absl::Minutes(5));
  EXPECT_EQ(store_->UpsertNode(NodeRecord{}).code(),
            absl::StatusCode::kInvalidArgument);
}

// Regression: every hello with a new name made a permanent node.
TEST_P(StoreContractTest, RemovingANodeWithoutHistoryDeletesItWhole) {
  ASSERT_TRUE(store_->UpsertNode(MakeNode("bogus", "6.1", kT0)).ok());
  auto kept = store_->RemoveNode("bogus", kT0 + absl::Hours(1));
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_FALSE(*kept);
  EXPECT_TRUE(store_->ListNodes()->empty());
  EXPECT_EQ(store_->CountFactsVersions("bogus").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->RemoveNode("bogus", kT0).status().code(), absl::StatusCode::kNotFound);
  // The name is free for a new node.
  ASSERT_TRUE(store_->UpsertNode(MakeNode("bogus", "6.1", kT0 + absl::Hours(2))).ok());
  EXPECT_EQ(store_->ListNodes()->size(), 1u);
}

TEST_P(StoreContractTest, RemovingANodeWithHistoryKeepsItsResultsAndLabels) {
  AddNodeAndRun("n1", "r1");
  ASSERT_TRUE(store_
                  ->CommitReports({{{MakeSample("s1", "r1", "n1", kMetric, 2.5,
                                                absl::ToUnixMillis(kT0))}}})
                  .ok());
  auto kept = store_->RemoveNode("n1", kT0 + absl::Hours(1));
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_TRUE(*kept);
  Reopen();
  auto nodes = store_->ListNodes();
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  ASSERT_EQ(nodes->size(), 1u);
  EXPECT_TRUE((*nodes)[0].removed);
  EXPECT_EQ((*nodes)[0].labels.at("region"), "eu-west-1");  // for its rankings
  EXPECT_EQ(*store_->CountFactsVersions("n1"), 0);           // the facts history is gone
  EXPECT_EQ(store_->ListSamplesForRun("r1")->size(), 1u);
  EXPECT_EQ(store_->History("n1", kMetric, 10)->size(), 1u);
  EXPECT_EQ(store_->MetricPointTableSince(kMetric, absl::InfinitePast())->nodes.size(), 1u);
  EXPECT_EQ(store_->RemoveNode("n1", kT0).status().code(), absl::StatusCode::kNotFound);
  // Its hello brings it back.
  ASSERT_TRUE(store_->UpsertNode(MakeNode("n1", "6.1", kT0 + absl::Hours(2))).ok());
  EXPECT_FALSE((*store_->ListNodes())[0].removed);
  EXPECT_TRUE(store_->CheckIntegrity().ok());
}

}  // namespace
}  // namespace fleetbench::storage
