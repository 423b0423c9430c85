// The price catalog end to end: a real controller process on a real SQLite
// file, real agents, the CLI importing a CSV file over gRPC, ranking and
// costing at the catalog's prices, and refusing a bad file whole.
#include <signal.h>

#include <cmath>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "fleetbench/v1/price.pb.h"
#include "fleetbench/v1/rank.pb.h"
#include "fleetbench/v1/run.pb.h"
#include "gtest/gtest.h"
#include "tests/fleet_fixture.h"

namespace fleetbench::testing {
namespace {

constexpr char kHeader[] =
    "provider,region,instance_type,price_per_hour,spot_price_per_hour,currency,effective_from\n";

// An old price of the acme offer, superseded long before any test runs,
// and the current one; the zeta offer has no spot price.
const std::string kCatalog = absl::StrCat("# prices as of 2026\n", kHeader,
                                          "acme,here,c6.large,0.50,0.20,USD,2020-01-01\n",
                                          "acme,here,c6.large,0.40,0.10,USD,2021-06-01\n",
                                          "zeta,here,z2.std,0.30,,USD,2020-01-01T00:00:00Z\n");

class PricesTest : public FleetTest {
 protected:
  std::string WriteFile(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  v1::ListPricesResponse Listed() {
    v1::ListPricesResponse listed;
    EXPECT_TRUE(CliJson({"prices", "list"}, &listed));
    return listed;
  }
  std::map<std::string, v1::RankRow> Rows(const v1::RankResponse& rank) {
    std::map<std::string, v1::RankRow> rows;
    for (const v1::RankRow& r : rank.rows()) rows[r.group()] = r;
    return rows;
  }
};

TEST_F(PricesTest, ImportedPricesRankAndCostEachOfferAndLabelsOverrideThem) {
  StartController();
  StartAgent("listed", {"provider=acme", "region=here", "instance_type=c6.large"});
  StartAgent("no-spot", {"provider=zeta", "region=here", "instance_type=z2.std"});
  StartAgent("labelled", {"provider=acme", "region=here", "instance_type=c6.large",
                          "price_per_hour=2"});
  ASSERT_TRUE(WaitForOnlineNodes(3, absl::Seconds(30)));

  CommandResult imported = Cli({"prices", "import", WriteFile("prices.csv", kCatalog)});
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  EXPECT_NE(imported.out.find("3 rows (3 added, 0 replaced, 0 unchanged)"), std::string::npos)
      << imported.out;
  ASSERT_EQ(Listed().prices_size(), 3);
  CommandResult list = Cli({"prices", "list"});
  EXPECT_NE(list.out.find("superseded"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("in force"), std::string::npos) << list.out;

  // One GEMM sample per node, one node at a time (they share the cores).
  v1::Run run;
  int code = -1;
  ASSERT_TRUE(CliJson({"run", "--bench", "gemm", "--param", "gemm.sizes=256", "--param",
                       "gemm.min_seconds=0.2", "--param", "gemm.threads=1", "--max-parallel",
                       "1", "--wait"},
                      &run, &code));
  ASSERT_EQ(code, 0);

  v1::RankResponse rank;
  ASSERT_TRUE(CliJson({"rank", "--metric", "gemm.cpu.fp32.tflops"}, &rank));
  EXPECT_EQ(rank.price(), v1::PRICE_KIND_ON_DEMAND);
  std::map<std::string, v1::RankRow> rows = Rows(rank);
  ASSERT_EQ(rows.size(), 3u);
  // The row in force now (2021-06-01), not the one it superseded.
  EXPECT_EQ(rows["listed"].price_per_hour(), 0.40);
  EXPECT_EQ(rows["listed"].price_source(), "catalog");
  EXPECT_EQ(rows["listed"].price_effective_from_unix_ms(), 1'622'505'600'000);
  EXPECT_EQ(rows["no-spot"].price_per_hour(), 0.30);
  EXPECT_EQ(rows["labelled"].price_per_hour(), 2);
  EXPECT_EQ(rows["labelled"].price_source(), "label");
  for (const auto& [name, r] : rows) {
    EXPECT_TRUE(r.priced()) << name;
    EXPECT_NEAR(r.cost_per_unit(), r.price_per_hour() / r.median(), 1e-12) << name;
  }
  // The human table says where each price came from.
  CommandResult table = Cli({"rank", "--metric", "gemm.cpu.fp32.tflops"});
  EXPECT_NE(table.out.find("catalog 2021-06-01"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("0.4000 USD"), std::string::npos) << table.out;

  v1::RankResponse spot;
  ASSERT_TRUE(CliJson({"rank", "--metric", "gemm.cpu.fp32.tflops", "--price", "spot"}, &spot));
  EXPECT_EQ(spot.price(), v1::PRICE_KIND_SPOT);
  rows = Rows(spot);
  // The on-demand label does not price spot; the catalog's spot price does.
  EXPECT_EQ(rows["labelled"].price_per_hour(), 0.10);
  EXPECT_EQ(rows["listed"].price_per_hour(), 0.10);
  EXPECT_FALSE(rows["no-spot"].priced());
  EXPECT_NE(rows["no-spot"].price_note().find("no spot price for zeta/here/z2.std"),
            std::string::npos)
      << rows["no-spot"].price_note();

  // 1e15 FLOP at each node's measured rate.
  v1::CostResponse cost;
  ASSERT_TRUE(CliJson({"cost", "--metric", "gemm.cpu.fp32.tflops", "--work", "1e15"}, &cost));
  EXPECT_EQ(cost.work_unit(), "FLOP");
  ASSERT_EQ(cost.rows_size(), 3);
  for (const v1::CostRow& r : cost.rows()) {
    EXPECT_NEAR(r.seconds(), 1e15 / (r.median() * 1e12), 1e-9 * r.seconds()) << r.group();
    EXPECT_NEAR(r.cost(), r.seconds() / 3600 * r.price_per_hour(), 1e-12) << r.group();
  }
  for (int i = 1; i < cost.rows_size(); ++i) {
    EXPECT_LE(cost.rows(i - 1).cost(), cost.rows(i).cost());
  }
  CommandResult cost_text = Cli({"cost", "--metric", "gemm.cpu.fp32.tflops", "--work", "1e15"});
  EXPECT_NE(cost_text.out.find("cost of 1e+15 FLOP"), std::string::npos) << cost_text.out;
  EXPECT_NE(cost_text.out.find("RATE_FLOP_PER_S"), std::string::npos) << cost_text.out;
  EXPECT_EQ(Cli({"cost", "--metric", "gemm.cpu.fp32.tflops", "--work", "lots"}).exit_code, 2);
  EXPECT_EQ(Cli({"rank", "--metric", "gemm.cpu.fp32.tflops", "--price", "reserved"}).exit_code,
            2);
}

TEST_F(PricesTest, ABadFileIsRefusedWholeNamingEveryBadRowAndTheCatalogSurvivesARestart) {
  StartController();
  ASSERT_EQ(Cli({"prices", "import", WriteFile("prices.csv", kCatalog)}).exit_code, 0);
  const v1::ListPricesResponse before = Listed();
  ASSERT_EQ(before.prices_size(), 3);

  const std::string bad = WriteFile(
      "bad.csv", absl::StrCat(kHeader,
                              "acme,here,c6.large,0.35,,USD,2026-01-01\n",  // 2: good
                              "acme,here,c6.large,cheap,,USD,2026-02-01\n",  // 3
                              "acme,here,l4,1,,USD,last week\n",            // 4
                              "acme,here,c6.large,0.30,,USD,2026-01-01\n",  // 5: line 2's key
                              "zeta,here,z2.std,0.30,,dollars,2026-01-01\n"));  // 6
  CommandResult refused = Cli({"prices", "import", bad});
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  for (const std::string& line :
       {std::string("4 bad rows, nothing imported"), absl::StrCat(bad, ":3: price_per_hour"),
        absl::StrCat(bad, ":4: effective_from 'last week'"),
        absl::StrCat(bad, ":5: acme/here/c6.large from 2026-01-01T00:00:00+00:00 is already on "
                          "line 2"),
        absl::StrCat(bad, ":6: currency 'dollars'")}) {
    EXPECT_NE(refused.err.find(line), std::string::npos) << line << "\n" << refused.err;
  }
  // Nothing of it, not even its good row.
  v1::ListPricesResponse after = Listed();
  ASSERT_EQ(after.prices_size(), before.prices_size());
  for (int i = 0; i < after.prices_size(); ++i) {
    EXPECT_EQ(after.prices(i).DebugString(), before.prices(i).DebugString());
  }

  // Too big to send: refused before reading it.
  CommandResult big = Cli(
      {"prices", "import", WriteFile("big.csv", std::string((1 << 20) + 1, '#'))});
  EXPECT_EQ(big.exit_code, 2);
  EXPECT_NE(big.err.find("more than the 1048576 a price catalog may have"), std::string::npos)
      << big.err;
  EXPECT_EQ(Cli({"prices", "import", dir_ + "/missing.csv"}).exit_code, 1);
  EXPECT_EQ(Cli({"prices", "export"}).exit_code, 2);

  // A later file that supersedes from its date, then a restart: both kept.
  ASSERT_EQ(Cli({"prices", "import",
                 WriteFile("march.csv",
                           absl::StrCat(kHeader, "acme,here,c6.large,0.35,,USD,2026-03-01\n"))})
                .exit_code,
            0);
  KillController(SIGKILL);
  StartController();
  v1::ListPricesResponse restarted = Listed();
  ASSERT_EQ(restarted.prices_size(), 4);
  EXPECT_EQ(restarted.prices(2).price_per_hour(), 0.35);

  // The RPC needs the token like every other.
  env_["FLEETBENCH_TOKEN"] = "not-the-token";
  CommandResult denied = Cli({"prices", "list"});
  EXPECT_EQ(denied.exit_code, 1);
  EXPECT_NE(denied.err.find("token"), std::string::npos) << denied.err;
}

TEST_F(PricesTest, AProfileRanksByItsMixWithEachComponentShown) {
  StartController();
  StartAgent("p1", {"price_per_hour=1"});
  StartAgent("p2", {"price_per_hour=2"});
  ASSERT_TRUE(WaitForOnlineNodes(2, absl::Seconds(30)));
  v1::Run run;
  int code = -1;
  // The cpu profile's three metrics, each measured briefly.
  ASSERT_TRUE(CliJson({"run", "--bench", "gemm,mem,disk", "--param", "gemm.sizes=256",
                       "--param", "gemm.min_seconds=0.2", "--param", "gemm.threads=1",
                       "--param", "mem.array_mib=16", "--param", "mem.repetitions=3",
                       "--param", "mem.threads=1", "--param", "disk.workloads=seq_read",
                       "--param", "disk.file_mib=16", "--param", "disk.ramp_seconds=0",
                       "--param", "disk.runtime_seconds=0.3", "--max-parallel", "1", "--wait"},
                      &run, &code));
  ASSERT_EQ(code, 0) << run.DebugString();
  v1::RankResponse rank;
  ASSERT_TRUE(CliJson({"rank", "--profile", "cpu"}, &rank));
  EXPECT_EQ(rank.profile(), "cpu");
  ASSERT_EQ(rank.profile_metrics_size(), 3);
  ASSERT_EQ(rank.rows_size(), 2);
  for (const v1::RankRow& r : rank.rows()) {
    ASSERT_EQ(r.components_size(), 3) << r.group();
    double log_mix = 0;
    double weights = 0;
    for (int i = 0; i < 3; ++i) {
      const v1::ProfileComponent& c = r.components(i);
      const v1::ProfileMetric& m = rank.profile_metrics(i);
      EXPECT_TRUE(c.present()) << r.group() << " " << c.metric();
      EXPECT_NEAR(c.score(), c.median() / m.fleet_median(), 1e-12) << c.metric();
      log_mix += m.weight() * std::log(c.score());
      weights += m.weight();
    }
    EXPECT_NEAR(r.median(), std::exp(log_mix / weights), 1e-12) << r.group();
    EXPECT_TRUE(r.priced()) << r.group();
    EXPECT_NEAR(r.cost_per_unit(), r.price_per_hour() / r.median(), 1e-12) << r.group();
  }
  CommandResult table = Cli({"rank", "--profile", "cpu"});
  EXPECT_NE(table.out.find("mem.triad.GBps"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("COST_PER_H_PER_SCORE"), std::string::npos) << table.out;
  // A profile whose metrics this CPU-only fleet does not measure: said, not
  // ranked silently wrong.
  v1::RankResponse training;
  ASSERT_TRUE(CliJson({"rank", "--profile", "training"}, &training));
  for (const v1::RankRow& r : training.rows()) {
    EXPECT_FALSE(r.priced()) << r.group();
    EXPECT_NE(r.price_note().find("not scored, missing gemm.gpu.bf16.tflops"), std::string::npos)
        << r.price_note();
  }
  CommandResult unknown = Cli({"rank", "--profile", "gaming"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("known: cpu, io, training"), std::string::npos) << unknown.err;
}

}  // namespace
}  // namespace fleetbench::testing
