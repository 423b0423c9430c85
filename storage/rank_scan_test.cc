// Tests of the SQLite store's ranking scan (MetricPointsSince,
// MetricPointTableSince) and of the ranking points it reads, which History
// reads too, whatever stage of folding they are in.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "fleetbench/v1/result.pb.h"
#include "gtest/gtest.h"
#include "storage/store.h"
#include "storage/store_test_util.h"

namespace fleetbench::storage {
namespace {

TEST_P(StoreContractTest, MetricPointsSinceFiltersByWindowAndMetric) {
  AddNodeAndRun("n1", "r1");
  ASSERT_TRUE(store_->UpsertNode(MakeNode("n2", "6.1", kT0)).ok());
  ASSERT_TRUE(store_->CreateRun(MakeRun("r2", kT0), {}).ok());
  const int64_t t0 = ToUnixMillis(kT0);
  Store::ReportWrite report;
  report.samples = {
      MakeSample("a", "r1", "n1", kMetric, 1.0, t0 - 10'000),  // too old
      MakeSample("b", "r1", "n2", kMetric, 2.0, t0),           // on the edge
      MakeSample("c", "r2", "n1", kMetric, 3.0, t0 + 1),
      MakeSample("d", "r2", "n2", "stream.triad.GBps", 4.0, t0 + 2)};
  ASSERT_TRUE(store_->CommitReports({report}).ok());
  Reopen();  // cold key caches

  auto points = store_->MetricPointsSince(kMetric, kT0);
  ASSERT_TRUE(points.ok()) << points.status();
  ASSERT_EQ(points->size(), 2u);
  EXPECT_EQ((*points)[0].node, "n2");
  EXPECT_EQ((*points)[0].run_id, "r1");
  EXPECT_EQ((*points)[0].value, 2.0);
  EXPECT_EQ((*points)[0].time, kT0);
  EXPECT_EQ((*points)[1].node, "n1");
  EXPECT_EQ((*points)[1].run_id, "r2");
  EXPECT_EQ(store_->MetricPointsSince(kMetric, absl::InfinitePast())->size(), 3u);
  EXPECT_TRUE(store_->MetricPointsSince("no.such.metric", kT0)->empty());
}

// Ranking points are staged per commit and folded into per-metric chunks in
// the background of later commits; every read must see exactly the stored
// samples whatever stage their points are in.
TEST_P(StoreContractTest, RankingPointsAndHistoryStayExactAcrossFolds) {
  const std::vector<std::string> nodes = {"n0", "n1", "n2", "n3"};
  const std::vector<std::string> metrics = {kMetric, "stream.triad.GBps",
                                            "fio.randread.iops"};
  for (const std::string& node : nodes) {
    ASSERT_TRUE(store_->UpsertNode(MakeNode(node, "6.1", kT0)).ok());
  }
  for (int r = 0; r < 5; ++r) {
    ASSERT_TRUE(store_->CreateRun(MakeRun(absl::StrCat("r", r), kT0), {}).ok());
  }
  std::vector<v1::Sample> stored;
  int next_id = 0;
  auto make = [&](int metric, int node, int run, int64_t time_ms) {
    const int id = next_id++;
    return MakeSample(absl::StrFormat("S%08d", id), absl::StrCat("r", run),
                      nodes[node], metrics[metric], id * 0.5, time_ms);
  };
  // Many small commits (folded by row count), a resend of old ids (no new
  // points), then one commit big enough to fold by point count.
  for (int commit = 0; commit < 600; ++commit) {
    Store::ReportWrite report;
    for (int i = 0; i < 1 + commit % 5; ++i) {
      // Times go mostly forward with some stragglers from the past.
      const int64_t t = commit * 10 + (i % 2 == 0 ? i : -500);
      report.samples.push_back(make((commit + i) % 3, (commit * 7 + i) % 4,
                                    commit % 5, t));
    }
    if (commit % 50 == 49) report.samples.push_back(stored[commit]);
    auto added = store_->CommitReports({report});
    ASSERT_TRUE(added.ok()) << added.status();
    for (const v1::Sample& s : report.samples) {
      if (std::find_if(stored.begin(), stored.end(), [&](const v1::Sample& x) {
            return x.id() == s.id();
          }) == stored.end()) {
        stored.push_back(s);
      }
    }
  }
  {
    Store::ReportWrite big;
    for (int i = 0; i < 70'000; ++i) {
      big.samples.push_back(make(i % 2, i % 4, i % 5, 6000 + i / 10));
    }
    ASSERT_EQ(*store_->CommitReports({big}), 70'000);
    stored.insert(stored.end(), big.samples.begin(), big.samples.end());
  }

  auto check = [&] {
    EXPECT_EQ(*store_->CountSamples(), static_cast<int64_t>(stored.size()));
    for (const std::string& metric : metrics) {
      for (int64_t since : {int64_t{-1'000'000}, int64_t{3000}, int64_t{9000}}) {
        std::multiset<std::tuple<std::string, std::string, double, int64_t>>
            want, got;
        for (const v1::Sample& s : stored) {
          if (s.metric() == metric && s.time_unix_ms() >= since) {
            want.emplace(s.node(), s.run_id(), s.value(), s.time_unix_ms());
          }
        }
        auto points = store_->MetricPointsSince(metric, absl::FromUnixMillis(since));
        ASSERT_TRUE(points.ok()) << points.status();
        for (const MetricPoint& p : *points) {
          got.emplace(p.node, p.run_id, p.value, absl::ToUnixMillis(p.time));
        }
        EXPECT_EQ(got, want) << metric << " since " << since;
        // The compact form, read directly and through Store's default.
        for (bool use_default : {false, true}) {
          auto table = use_default ? store_->Store::MetricPointTableSince(
                                         metric, absl::FromUnixMillis(since))
                                   : store_->MetricPointTableSince(
                                         metric, absl::FromUnixMillis(since));
          ASSERT_TRUE(table.ok()) << table.status();
          got.clear();
          for (const MetricPointTable::Point& p : table->points) {
            got.emplace(table->nodes.at(p.node), table->run_ids.at(p.run),
                        p.value, absl::ToUnixMillis(p.time));
          }
          EXPECT_EQ(got, want) << metric << " since " << since;
          EXPECT_LE(table->nodes.size(), nodes.size());
          EXPECT_LE(table->run_ids.size(), 5u);
        }
      }
      for (const std::string& node : nodes) {
        std::vector<v1::Sample> want;
        for (const v1::Sample& s : stored) {
          if (s.metric() == metric && s.node() == node) want.push_back(s);
        }
        std::sort(want.begin(), want.end(), [](const auto& a, const auto& b) {
          return std::make_pair(a.time_unix_ms(), a.id()) >
                 std::make_pair(b.time_unix_ms(), b.id());
        });
        for (int limit : {1, 7, 0}) {
          auto history = store_->History(node, metric, limit);
          ASSERT_TRUE(history.ok()) << history.status();
          const size_t n = limit > 0 ? std::min<size_t>(limit, want.size())
                                     : want.size();
          ASSERT_EQ(history->size(), n) << node << " " << metric;
          for (size_t i = 0; i < n; ++i) {
            EXPECT_EQ((*history)[i].id(), want[i].id());
            EXPECT_EQ((*history)[i].run_id(), want[i].run_id());
          }
        }
      }
    }
    EXPECT_TRUE(store_->CheckIntegrity().ok()) << store_->CheckIntegrity();
  };
  check();
  Reopen();
  check();
}

// A judging read holds each node's newest runs only, whatever the history
// holds (findings, variance and exposition read this way).
TEST_P(StoreContractTest, TheNewestRunsReadKeepsEachNodesNewestRunsWhole) {
  for (const char* node : {"n0", "n1", "n2"}) {
    ASSERT_TRUE(store_->UpsertNode(MakeNode(node, "6.1", kT0)).ok());
  }
  // 300 runs, one commit each (past the 256 staged rows that make a fold):
  // n0 and n1 have two samples in every run, n2 only in the first five.
  constexpr int kRuns = 300;
  for (int r = 0; r < kRuns; ++r) {
    const std::string run = absl::StrFormat("r%03d", r);
    ASSERT_TRUE(store_->CreateRun(MakeRun(run, kT0), {}).ok());
    Store::ReportWrite report;
    for (const char* node : {"n0", "n1", "n2"}) {
      if (std::string(node) == "n2" && r >= 5) continue;
      for (int i = 0; i < 2; ++i) {
        report.samples.push_back(MakeSample(absl::StrCat(run, node, i), run, node, kMetric,
                                            r + i / 10.0, ToUnixMillis(kT0) + r * 1000 + i));
      }
    }
    ASSERT_EQ(*store_->CommitReports({report}), static_cast<int>(report.samples.size()));
  }
  // Each node's (run -> points) in a table.
  auto runs_by_node = [](const MetricPointTable& t) {
    std::map<std::string, std::map<std::string, int>> out;
    for (const MetricPointTable::Point& p : t.points) ++out[t.nodes[p.node]][t.run_ids[p.run]];
    return out;
  };
  std::map<std::string, int> newest10;
  for (int r = kRuns - 10; r < kRuns; ++r) newest10[absl::StrFormat("r%03d", r)] = 2;
  std::map<std::string, int> first5;
  for (int r = 0; r < 5; ++r) first5[absl::StrFormat("r%03d", r)] = 2;
  for (size_t fleet_nodes : {size_t{0}, size_t{3}}) {
    auto table = store_->MetricPointTableOfNewestRuns(kMetric, absl::InfinitePast(), 10, fleet_nodes);
    ASSERT_TRUE(table.ok()) << table.status();
    auto got = runs_by_node(*table);
    EXPECT_EQ(got["n0"], newest10) << fleet_nodes;
    EXPECT_EQ(got["n1"], newest10) << fleet_nodes;
    EXPECT_EQ(got["n2"], first5) << fleet_nodes;  // fewer runs than asked: all of them
    EXPECT_EQ(table->points.size(), 50u);
  }
  // The window still applies, and a late sample of an old run is met first
  // (the documented approximation): it takes one of n0's ten places.
  auto windowed =
      store_->MetricPointTableOfNewestRuns(kMetric, kT0 + absl::Seconds(kRuns - 3), 10, 3);
  ASSERT_TRUE(windowed.ok());
  EXPECT_EQ(runs_by_node(*windowed)["n0"].size(), 3u);
  Store::ReportWrite late;
  late.samples = {MakeSample("late", "r007", "n0", kMetric, 7, ToUnixMillis(kT0) + 7000 + 5)};
  ASSERT_EQ(*store_->CommitReports({late}), 1);
  auto after = store_->MetricPointTableOfNewestRuns(kMetric, absl::InfinitePast(), 10, 3);
  ASSERT_TRUE(after.ok());
  auto n0 = runs_by_node(*after)["n0"];
  EXPECT_EQ(n0.size(), 10u);
  EXPECT_EQ(n0["r007"], 3);  // all of its points, once it is kept
  EXPECT_FALSE(n0.contains("r290"));
  EXPECT_EQ(store_->MetricPointTableOfNewestRuns(kMetric, absl::InfinitePast(), 0, 3)
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(store_->MetricPointTableOfNewestRuns("no.such.metric", kT0, 10, 3)->points.empty());
}

}  // namespace
}  // namespace fleetbench::storage
