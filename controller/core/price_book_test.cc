// The price catalog through FleetCore on a real SQLite file: a file imported
// whole or not at all, its rows' dates pricing each result as measured,
// labels overriding it, profiles and the cost of work.
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "controller/core/fleet_core_fixture.h"
#include "controller/ranking/price_catalog.h"
#include "gmock/gmock.h"

namespace fleetbench::controller {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr char kHeader[] =
    "provider,region,instance_type,price_per_hour,spot_price_per_hour,currency,effective_from\n";

class FleetCorePricesTest : public FleetCoreTest {
 protected:
  // The fixture's clock stands at 2027-01-15T08:00:00Z.
  absl::StatusOr<v1::ImportPricesResponse> Import(const std::string& csv) {
    v1::ImportPricesRequest request;
    request.set_csv(csv);
    request.set_source("prices.csv");
    return core_->ImportPrices(request);
  }
  std::vector<v1::CatalogPrice> Stored() {
    auto listed = core_->ListPrices();
    EXPECT_TRUE(listed.ok()) << listed.status();
    return listed.ok() ? std::vector<v1::CatalogPrice>(listed->prices().begin(),
                                                       listed->prices().end())
                       : std::vector<v1::CatalogPrice>{};
  }
  // A node of acme/us-east/`type`, priced by the catalog unless `labels`
  // say otherwise.
  void ConnectOffer(const std::string& name, const std::string& type,
                    std::map<std::string, std::string> labels = {}) {
    v1::Hello hello = MakeHello(name);
    hello.mutable_labels()->erase("price_per_hour");
    (*hello.mutable_labels())["provider"] = "acme";
    (*hello.mutable_labels())["region"] = "us-east";
    (*hello.mutable_labels())["instance_type"] = type;
    for (const auto& [k, v] : labels) (*hello.mutable_labels())[k] = v;
    ConnectWith(hello);
  }
  // One gemm sample of `value` per node, measured at `when`.
  void StoreGemm(const std::string& run_id, const std::vector<std::string>& nodes, double value,
                 absl::Time when) {
    storage::Store::ReportWrite write;
    for (const std::string& node : nodes) {
      v1::Report report;
      v1::Sample* s = AddGemmSample(&report, value);
      s->set_run_id(run_id);
      s->set_node(node);
      s->set_time_unix_ms(absl::ToUnixMillis(when));
      write.samples.push_back(*s);
    }
    auto stored = store_->CommitReports({write});
    ASSERT_TRUE(stored.ok()) << stored.status();
  }
  absl::StatusOr<v1::RankResponse> RankGemm(v1::PriceKind price = v1::PRICE_KIND_UNSPECIFIED) {
    v1::RankRequest request;
    request.set_metric("gemm.cpu.fp32.tflops");
    request.set_by(v1::RANK_GROUPING_NODE);
    request.set_price(price);
    return core_->Rank(request);
  }
};

TEST_F(FleetCorePricesTest, AGoodFileIsStoredAndReimportingItChangesNothing) {
  const std::string csv = absl::StrCat(kHeader, "acme,us-east,h100x8,26,9.5,USD,2027-01-01\n",
                                       "acme,us-east,a10,1.1,,USD,2027-01-01\n");
  auto imported = Import(csv);
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_EQ(imported->rows(), 2u);
  EXPECT_EQ(imported->added(), 2u);
  std::vector<v1::CatalogPrice> stored = Stored();
  ASSERT_EQ(stored.size(), 2u);
  EXPECT_EQ(stored[0].instance_type(), "a10");
  EXPECT_EQ(stored[1].spot_price_per_hour(), 9.5);
  EXPECT_EQ(stored[1].imported_unix_ms(), absl::ToUnixMillis(clock_.Now()));
  auto again = Import(csv);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->unchanged(), 2u);
  EXPECT_EQ(again->added(), 0u);
}

TEST_F(FleetCorePricesTest, AFileWithBadRowsImportsNothingAndNamesEachLine) {
  ASSERT_TRUE(Import(absl::StrCat(kHeader, "acme,us-east,h100x8,26,,USD,2027-01-01\n")).ok());
  const std::vector<v1::CatalogPrice> before = Stored();
  auto refused = Import(absl::StrCat(kHeader,
                                     "acme,us-east,h100x8,24,,USD,2027-01-10\n",   // good
                                     "acme,us-east,a10,free,,USD,2027-01-01\n",    // 3
                                     "acme,us-east,a10,1.1,,USD,someday\n",        // 4
                                     "acme,us-east,l4,0.8,,USD,2027-01-01\n",      // good
                                     "acme,us-east,l4,0.7,,USD,2027-01-01\n"));    // 6
  ASSERT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument) << refused.status();
  const std::string message(refused.status().message());
  EXPECT_THAT(message, StartsWith("prices.csv: 3 bad rows, nothing imported\n"));
  EXPECT_THAT(message, HasSubstr("\nprices.csv:3: price_per_hour 'free' is not a number"));
  EXPECT_THAT(message, HasSubstr("\nprices.csv:4: effective_from 'someday' is not a date"));
  EXPECT_THAT(message, HasSubstr("\nprices.csv:6: acme/us-east/l4 from 2027-01-01T00:00:00+00:00 "
                                 "is already on line 5"));
  // Not even the good rows of that file.
  const std::vector<v1::CatalogPrice> after = Stored();
  ASSERT_EQ(after.size(), before.size());
  EXPECT_EQ(after[0].DebugString(), before[0].DebugString());
}

TEST_F(FleetCorePricesTest, AFileOverTheBoundsIsRefusedWhole) {
  auto refused = Import(absl::StrCat(kHeader, std::string(kMaxCatalogBytes, '#')));
  ASSERT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.status().message(),
              HasSubstr("more than the 1048576 allowed; split it into several files; nothing "
                        "imported"));
  EXPECT_TRUE(Stored().empty());
}

// Overlapping dates: a later file's row supersedes the earlier price from
// its date on; results measured before it keep the price of their time.
TEST_F(FleetCorePricesTest, ALaterRowSupersedesFromItsDateAndOlderResultsKeepTheirPrice) {
  ASSERT_TRUE(Import(absl::StrCat(kHeader, "acme,us-east,h100x8,26,,USD,2027-01-01\n")).ok());
  ConnectOffer("early", "h100x8");
  ConnectOffer("late", "h100x8");
  const std::string run = Start("gemm");
  const absl::Time jan10 = absl::FromCivil(absl::CivilDay(2027, 1, 10), absl::UTCTimeZone());
  StoreGemm(run, {"early"}, 2, jan10);
  StoreGemm(run, {"late"}, 2, clock_.Now());
  // Both at 26 until the new price arrives.
  auto before = RankGemm();
  ASSERT_TRUE(before.ok()) << before.status();
  for (const v1::RankRow& r : before->rows()) EXPECT_EQ(r.price_per_hour(), 26) << r.group();

  ASSERT_TRUE(Import(absl::StrCat(kHeader, "acme,us-east,h100x8,20,,USD,2027-01-12\n")).ok());
  EXPECT_EQ(Stored().size(), 2u);  // the history: both rows kept
  auto after = RankGemm();
  ASSERT_TRUE(after.ok()) << after.status();
  ASSERT_EQ(after->rows_size(), 2);
  EXPECT_EQ(after->rows(0).group(), "late");
  EXPECT_EQ(after->rows(0).price_per_hour(), 20);
  EXPECT_EQ(after->rows(0).price_source(), "catalog");
  EXPECT_EQ(after->rows(0).price_effective_from_unix_ms(),
            absl::ToUnixMillis(absl::FromCivil(absl::CivilDay(2027, 1, 12), absl::UTCTimeZone())));
  EXPECT_EQ(after->rows(1).group(), "early");
  EXPECT_EQ(after->rows(1).price_per_hour(), 26);
  EXPECT_EQ(after->rows(1).cost_per_unit(), 13);
}

TEST_F(FleetCorePricesTest, LabelsOverrideTheCatalogAndSpotUsesSpotPrices) {
  ASSERT_TRUE(Import(absl::StrCat(kHeader, "acme,us-east,h100x8,26,8,USD,2027-01-01\n")).ok());
  ConnectOffer("listed", "h100x8");
  ConnectOffer("labelled", "h100x8", {{"price_per_hour", "30"}});
  const std::string run = Start("gemm");
  StoreGemm(run, {"listed", "labelled"}, 2, clock_.Now());
  auto on_demand = RankGemm(v1::PRICE_KIND_ON_DEMAND);
  ASSERT_TRUE(on_demand.ok()) << on_demand.status();
  EXPECT_EQ(on_demand->price(), v1::PRICE_KIND_ON_DEMAND);
  ASSERT_EQ(on_demand->rows_size(), 2);
  EXPECT_EQ(on_demand->rows(0).group(), "listed");
  EXPECT_EQ(on_demand->rows(1).price_per_hour(), 30);
  EXPECT_EQ(on_demand->rows(1).price_source(), "label");
  auto spot = RankGemm(v1::PRICE_KIND_SPOT);
  ASSERT_TRUE(spot.ok()) << spot.status();
  EXPECT_EQ(spot->price(), v1::PRICE_KIND_SPOT);
  for (const v1::RankRow& r : spot->rows()) {
    EXPECT_EQ(r.price_per_hour(), 8) << r.group();  // no spot label: the catalog's
  }
  v1::RankRequest bad;
  bad.set_metric("gemm.cpu.fp32.tflops");
  bad.set_price(static_cast<v1::PriceKind>(7));
  EXPECT_EQ(core_->Rank(bad).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(FleetCorePricesTest, AProfileRanksByItsMixAndSaysWhatIsMissing) {
  Connect("a");
  Connect("b");
  const std::string run = Start("gemm");
  StoreGemm(run, {"a"}, 2, clock_.Now());
  StoreGemm(run, {"b"}, 4, clock_.Now());
  v1::RankRequest request;
  request.set_profile("cpu");
  auto ranked = core_->Rank(request);
  ASSERT_TRUE(ranked.ok()) << ranked.status();
  EXPECT_EQ(ranked->profile(), "cpu");
  ASSERT_EQ(ranked->profile_metrics_size(), 3);
  EXPECT_EQ(ranked->profile_metrics(0).metric(), "gemm.cpu.fp32.tflops");
  EXPECT_EQ(ranked->profile_metrics(0).fleet_median(), 3);
  ASSERT_EQ(ranked->rows_size(), 2);
  for (const v1::RankRow& r : ranked->rows()) {
    // Only GEMM was measured: not scored, and the row says so.
    EXPECT_FALSE(r.priced()) << r.group();
    EXPECT_THAT(r.price_note(), HasSubstr("missing mem.triad.GBps, disk.seq_read.MBps"));
    EXPECT_TRUE(r.components(0).present());
    EXPECT_FALSE(r.components(1).present());
  }
  request.set_metric("gemm.cpu.fp32.tflops");
  EXPECT_EQ(core_->Rank(request).status().code(), absl::StatusCode::kInvalidArgument);
  request.clear_metric();
  request.set_profile("nope");
  EXPECT_THAT(core_->Rank(request).status().message(), HasSubstr("known: cpu, io, training"));
}

TEST_F(FleetCorePricesTest, CostSaysHowLongAndHowMuchWorkTakes) {
  ASSERT_TRUE(Import(absl::StrCat(kHeader, "acme,us-east,h100x8,36,,USD,2027-01-01\n")).ok());
  ConnectOffer("n", "h100x8");
  const std::string run = Start("gemm");
  StoreGemm(run, {"n"}, 2, clock_.Now());
  v1::CostRequest request;
  request.set_metric("gemm.cpu.fp32.tflops");
  request.set_work(7.2e15);  // 3600 s at 2 TFLOP/s
  auto cost = core_->Cost(request);
  ASSERT_TRUE(cost.ok()) << cost.status();
  EXPECT_EQ(cost->work_unit(), "FLOP");
  ASSERT_EQ(cost->rows_size(), 1);
  EXPECT_NEAR(cost->rows(0).seconds(), 3600, 1e-9);
  EXPECT_NEAR(cost->rows(0).cost(), 36, 1e-9);
  EXPECT_EQ(cost->rows(0).price_source(), "catalog");
  request.set_work(0);
  EXPECT_EQ(core_->Cost(request).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace fleetbench::controller
