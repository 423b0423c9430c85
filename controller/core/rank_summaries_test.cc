// Ranking from the day summaries against the exact computation it replaced
// (docs/ranking.md, Summaries): on a generated history in a real SQLite
// file, with folds, label and catalog prices, a catalog change in the
// middle of a day and windows that start mid-day, FleetCore::Rank must
// give the same groups, node and run counts and prices as ranking every
// raw value, and medians/p10/p90/costs within the sketch's bound.
#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/value_sketch.h"
#include "controller/core/fleet_core_fixture.h"
#include "controller/ranking/price_catalog.h"
#include "controller/ranking/ranking.h"
#include "gtest/gtest.h"

namespace fleetbench::controller {
namespace {

constexpr char kMetric[] = "gemm.cpu.fp32.tflops";
constexpr double kBound = ValueSketch::kRelativeAccuracy;

class RankSummariesTest : public FleetCoreTest {
 protected:
  // 120 nodes (3 instance types, 2 regions; every other node priced by its
  // label, the rest by the catalog), 300 runs over the last 10 days, one
  // commit per run: a few folds into chunks (and so summaries) and a tail
  // of recent points.
  void FillHistory() {
    v1::MetricDescriptor d;
    d.set_name(kMetric);
    d.set_unit("tflops");
    d.set_direction(v1::METRIC_DIRECTION_HIGHER_IS_BETTER);
    d.set_benchmark("gemm");
    ASSERT_TRUE(store_->UpsertMetricDescriptors({d}).ok());
    const absl::Time now = clock_.Now();
    const std::vector<std::string> types = {"t.small", "t.medium", "t.large"};
    std::vector<v1::CatalogPrice> catalog;
    for (const char* region : {"r-east", "r-west"}) {
      for (size_t t = 0; t < types.size(); ++t) {
        v1::CatalogPrice p;
        p.set_provider("cloud");
        p.set_region(region);
        p.set_instance_type(types[t]);
        p.set_currency("USD");
        p.set_price_per_hour(1.0 + static_cast<double>(t));
        p.set_spot_price_per_hour(0.4 + 0.3 * static_cast<double>(t));
        p.set_effective_from_unix_ms(absl::ToUnixMillis(now - absl::Hours(24 * 40)));
        catalog.push_back(p);
        // A change in the middle of a day 3.4 days ago (RFC 3339 import),
        // and one at midnight 6 days ago.
        p.set_price_per_hour(p.price_per_hour() * 1.5);
        p.set_effective_from_unix_ms(
            absl::ToUnixMillis(now - absl::Hours(24 * 3) - absl::Hours(10) - absl::Minutes(7)));
        catalog.push_back(p);
        if (t == 1) {
          p.set_price_per_hour(p.price_per_hour() * 0.8);
          const int64_t day = storage::UtcDayOf(absl::ToUnixMillis(now - absl::Hours(24 * 6)));
          p.set_effective_from_unix_ms(day * storage::kMillisPerDay);
          catalog.push_back(p);
        }
      }
    }
    ASSERT_TRUE(store_->ImportPrices(catalog, now).ok());
    std::mt19937_64 rng(42);
    std::normal_distribution<double> noise(0, 0.03);
    std::vector<std::string> nodes;
    for (int n = 0; n < 120; ++n) {
      storage::NodeRecord node;
      node.name = absl::StrCat("node-", n);
      node.labels = {{"provider", "cloud"},
                     {"region", n % 2 ? "r-east" : "r-west"},
                     {"instance_type", types[static_cast<size_t>(n % 3)]}};
      if (n % 4 == 0) node.labels["price_per_hour"] = absl::StrCat(1 + n % 5);
      node.first_seen = node.last_seen = now - absl::Hours(24 * 11);
      ASSERT_TRUE(store_->UpsertNode(node).ok());
      nodes.push_back(node.name);
    }
    int id = 0;
    for (int r = 0; r < 300; ++r) {
      const absl::Time t = now - absl::Hours(24 * 10) + absl::Minutes(48) * r;
      storage::RunRecord run;
      run.run_id = absl::StrCat("run-", r);
      run.created = t;
      run.state = "succeeded";
      ASSERT_TRUE(store_->CreateRun(run, {}).ok());
      storage::Store::ReportWrite report;
      for (size_t n = 0; n < nodes.size(); ++n) {
        v1::Sample s;
        s.set_id(absl::StrCat("s-", id++));
        s.set_run_id(run.run_id);
        s.set_node(nodes[n]);
        s.set_benchmark("gemm");
        s.set_metric(kMetric);
        s.set_unit("tflops");
        // Each node its own level, and a slow few: rankings differ.
        s.set_value((1.0 + 0.05 * static_cast<double>(n % 17)) * (1 + noise(rng)));
        s.set_time_unix_ms(absl::ToUnixMillis(t + absl::Seconds(static_cast<int64_t>(n))));
        report.samples.push_back(s);
      }
      ASSERT_TRUE(store_->CommitReports({report}).ok());
    }
  }

  // Today's exact path: every raw value in the window, with its time.
  absl::StatusOr<v1::RankResponse> Exact(v1::RankGrouping by, absl::Duration window,
                                         v1::PriceKind kind) {
    auto table = store_->MetricPointTableSince(kMetric, clock_.Now() - window);
    if (!table.ok()) return table.status();
    auto nodes = store_->ListNodes();
    if (!nodes.ok()) return nodes.status();
    std::map<std::string, NodeSeries> series;
    for (const storage::NodeRecord& n : *nodes) {
      series[n.name].node = n.name;
      series[n.name].labels = n.labels;
    }
    for (const auto& p : table->points) {
      NodeSeries& s = series[table->nodes[p.node]];
      s.values.push_back(p.value);
      s.times.push_back(p.time);
    }
    std::vector<NodeSeries> list;
    for (auto& [name, s] : series) {
      if (!s.values.empty()) list.push_back(std::move(s));
    }
    auto prices = store_->ListPrices();
    if (!prices.ok()) return prices.status();
    const PriceCatalog catalog(*prices);
    auto metric = store_->GetMetricDescriptor(kMetric);
    if (!metric.ok()) return metric.status();
    return RankByCostPerThroughput(*metric, by, list, {kind, &catalog});
  }
};

void ExpectWithin(double got, double exact, double bound, const std::string& what) {
  EXPECT_LE(std::fabs(got - exact), bound * std::fabs(exact) * (1 + 1e-9) + 1e-12)
      << what << ": " << got << " against exact " << exact;
}

TEST_F(RankSummariesTest, MatchesTheExactRankingWithinTheSketchBound) {
  ASSERT_NO_FATAL_FAILURE(FillHistory());
  int compared = 0;
  for (absl::Duration window : {absl::Hours(24 * 7), absl::Hours(60), absl::Hours(24 * 30)}) {
    for (v1::RankGrouping by : {v1::RANK_GROUPING_NODE, v1::RANK_GROUPING_INSTANCE_TYPE,
                                v1::RANK_GROUPING_REGION}) {
      for (v1::PriceKind kind : {v1::PRICE_KIND_ON_DEMAND, v1::PRICE_KIND_SPOT}) {
        const std::string where =
            absl::StrCat(absl::FormatDuration(window), " by ", by, " price ", kind);
        auto exact = Exact(by, window, kind);
        ASSERT_TRUE(exact.ok()) << exact.status();
        v1::RankRequest request;
        request.set_metric(kMetric);
        request.set_by(by);
        request.set_window_ms(absl::ToInt64Milliseconds(window));
        request.set_price(kind);
        auto got = core_->Rank(request, absl::InfiniteFuture());
        ASSERT_TRUE(got.ok()) << got.status();
        ASSERT_EQ(got->rows_size(), exact->rows_size()) << where;
        std::map<std::string, const v1::RankRow*> exact_rows;
        for (const v1::RankRow& row : exact->rows()) exact_rows[row.group()] = &row;
        for (const v1::RankRow& row : got->rows()) {
          const std::string at = absl::StrCat(where, " group ", row.group());
          ASSERT_TRUE(exact_rows.contains(row.group())) << at;
          const v1::RankRow& e = *exact_rows[row.group()];
          EXPECT_EQ(row.node_count(), e.node_count()) << at;
          EXPECT_EQ(row.run_count(), e.run_count()) << at;
          ExpectWithin(row.median(), e.median(), kBound, at + " median");
          ExpectWithin(row.p10(), e.p10(), kBound, at + " p10");
          ExpectWithin(row.p90(), e.p90(), kBound, at + " p90");
          EXPECT_EQ(row.priced(), e.priced()) << at;
          EXPECT_DOUBLE_EQ(row.price_per_hour(), e.price_per_hour()) << at;
          EXPECT_EQ(row.price_source(), e.price_source()) << at;
          EXPECT_EQ(row.price_note(), e.price_note()) << at;
          EXPECT_EQ(row.price_effective_from_unix_ms(), e.price_effective_from_unix_ms()) << at;
          ExpectWithin(row.cost_per_unit(), e.cost_per_unit(), 2.1 * kBound, at + " cost");
          ++compared;
        }
        // The order: only rows whose exact costs are within the bound of
        // each other may swap.
        for (int i = 1; i < got->rows_size(); ++i) {
          const v1::RankRow& a = *exact_rows[got->rows(i - 1).group()];
          const v1::RankRow& b = *exact_rows[got->rows(i).group()];
          if (a.priced() && b.priced()) {
            EXPECT_LE(a.cost_per_unit(), b.cost_per_unit() * (1 + 4.2 * kBound)) << where;
          }
        }
      }
    }
  }
  EXPECT_GT(compared, 500);
}

}  // namespace
}  // namespace fleetbench::controller
