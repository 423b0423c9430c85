// The web dashboard end to end (docs/dashboard.md): a real controller process with
// real agents and real results, a real headless Chromium (chromedriver)
// that logs in through the form and loads every page; the figures in the
// DOM must be the ones the CLI prints (its --json in the same test, each
// value formatted as its tables format it), the console must stay free of
// errors, and a screenshot of each page is kept under the build folder.
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/number_text.h"
#include "fleetbench/v1/history.pb.h"
#include "fleetbench/v1/node.pb.h"
#include "fleetbench/v1/rank.pb.h"
#include "fleetbench/v1/run.pb.h"
#include "fleetbench/v1/reliability.pb.h"
#include "fleetbench/v1/variance.pb.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "tests/fleet_fixture.h"
#include "tests/webdriver.h"

namespace fleetbench::testing {
namespace {

constexpr char kGemmMetric[] = "gemm.cpu.fp32.tflops";

const std::vector<std::string> kQuickGemm = {
    "run", "--bench", "gemm", "--param", "gemm.sizes=256", "--param", "gemm.min_seconds=0.3",
    "--param", "gemm.max_runs=100000", "--param", "gemm.threads=1", "--param", "gemm.dtypes=fp32",
    "--timeout", "120s", "--wait"};
const std::vector<std::string> kQuickNet = {
    "run", "--bench", "net", "--param", "net.pairing=all", "--param", "net.duration_s=1",
    "--param", "net.warmup_s=0.2", "--param", "net.reverse=0", "--param",
    "net.latency_count=100", "--timeout", "120s", "--wait"};

std::string ScreenshotDir() {
  const std::string dir = std::string(FLEETBENCH_BINARY_DIR) + "/dashboard-screenshots";
  std::filesystem::create_directories(dir);
  return dir;
}

class DashboardEndToEndTest : public FleetTest {
 protected:
  void SetUp() override {
    FleetTest::SetUp();
    http_port_ = PickFreePort();
    token_ = env_["FLEETBENCH_TOKEN"];
    base_ = absl::StrCat("http://127.0.0.1:", http_port_);
  }

  // Loads `path`, checks the console stayed clean and keeps a screenshot.
  // An error page (`http_error`, 400 or 404) logs its status, and only that.
  void Load(WebDriver& browser, const std::string& path, const std::string& shot,
            int http_error = 0) {
    ASSERT_TRUE(browser.Navigate(base_ + path).ok()) << path;
    const std::string file = ScreenshotDir() + "/" + shot + ".png";
    ASSERT_TRUE(browser.Screenshot(file).ok()) << file;
    std::cout << "screenshot: " << file << std::endl;
    absl::StatusOr<std::vector<std::string>> console = browser.ConsoleErrors();
    ASSERT_TRUE(console.ok()) << console.status();
    if (http_error == 0) {
      EXPECT_TRUE(console->empty()) << path << ": " << (*console)[0];
      return;
    }
    ASSERT_EQ(console->size(), 1u) << path;
    EXPECT_TRUE(absl::StrContains((*console)[0], absl::StrCat("status of ", http_error)))
        << (*console)[0];
  }
  // A script's string value ("" for anything else).
  static std::string Text(WebDriver& browser, const std::string& script) {
    absl::StatusOr<google::protobuf::Value> v = browser.Execute(script);
    EXPECT_TRUE(v.ok()) << v.status() << "\n" << script;
    return v.ok() ? v->string_value() : "";
  }
  static double Number(WebDriver& browser, const std::string& script) {
    absl::StatusOr<google::protobuf::Value> v = browser.Execute(script);
    EXPECT_TRUE(v.ok()) << v.status() << "\n" << script;
    return v.ok() ? v->number_value() : std::nan("");
  }
  // Whether `script` answers `want` within 10 s (the page after a click
  // loads on the browser's time, not the test's).
  static bool WaitFor(WebDriver& browser, const std::string& script, const std::string& want) {
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    while (absl::Now() < deadline) {
      absl::StatusOr<google::protobuf::Value> v = browser.Execute(script);
      if (v.ok() && v->string_value() == want) return true;
      absl::SleepFor(absl::Milliseconds(50));
    }
    return false;
  }
  // The text of the cell with these data-* attributes.
  static std::string Cell(WebDriver& browser, const std::string& selector) {
    return Text(browser, absl::StrCat("const e = document.querySelector('", selector,
                                      "'); return e ? e.textContent : 'MISSING';"));
  }

  int http_port_ = 0;
  std::string token_;
  std::string base_;
};

TEST_F(DashboardEndToEndTest, EveryPageShowsWhatTheCliPrintsAfterALoginThroughTheForm) {
  StartController({"--http-listen", absl::StrCat("127.0.0.1:", http_port_)});
  StartAgent("n1", {"provider=lab", "region=eu-west", "instance_type=small", "price_per_hour=1"});
  StartAgent("n2", {"provider=lab", "region=eu-west", "instance_type=large", "price_per_hour=3",
                    "note=<b>x</b>"});
  ASSERT_TRUE(WaitForOnlineNodes(2, absl::Seconds(30)));
  v1::Run gemm_run, net_run;
  int code = -1;
  ASSERT_TRUE(CliJson(kQuickGemm, &gemm_run, &code));
  ASSERT_EQ(code, 0);
  ASSERT_TRUE(CliJson(kQuickNet, &net_run, &code));
  ASSERT_EQ(code, 0);
  v1::Run gemm, net;
  ASSERT_TRUE(CliJson({"results", gemm_run.run_id()}, &gemm));
  ASSERT_TRUE(CliJson({"results", net_run.run_id()}, &net));
  v1::ListNodesResponse nodes;
  ASSERT_TRUE(CliJson({"nodes"}, &nodes));
  v1::RankResponse rank;
  ASSERT_TRUE(CliJson({"rank", "--metric", kGemmMetric, "--by", "node"}, &rank));
  ASSERT_EQ(rank.rows_size(), 2);
  const CommandResult rank_text = Cli({"rank", "--metric", kGemmMetric, "--by", "node"});
  v1::HistoryResponse history;
  ASSERT_TRUE(CliJson({"history", "--node", "n1", "--metric", kGemmMetric}, &history));
  ASSERT_GT(history.samples_size(), 0);

  absl::StatusOr<std::unique_ptr<WebDriver>> started = WebDriver::Start(dir_);
  ASSERT_TRUE(started.ok()) << started.status();
  WebDriver& browser = **started;

  // Anonymous: sent to the form, and no fleet data on the way.
  Load(browser, "/node?name=n1", "01-login");
  absl::StatusOr<std::string> url = browser.CurrentUrl();
  ASSERT_TRUE(url.ok());
  EXPECT_TRUE(absl::StartsWith(*url, base_ + "/login?next=")) << *url;
  EXPECT_EQ(Text(browser, "return document.body.innerText.includes('n2') ? 'leak' : 'none';"),
            "none");
  // A wrong token: the form again, with the reason.
  absl::StatusOr<std::string> field = browser.Find("input[name=token]");
  ASSERT_TRUE(field.ok()) << field.status();
  ASSERT_TRUE(browser.Type(*field, "not-the-token").ok());
  absl::StatusOr<std::string> submit = browser.Find("button[type=submit]");
  ASSERT_TRUE(submit.ok()) << submit.status();
  ASSERT_TRUE(browser.Click(*submit).ok());
  // The click returns before the form's answer has loaded.
  EXPECT_TRUE(WaitFor(browser, "return document.querySelector('#error') ? 'yes' : 'no';", "yes"));
  // The 401 of the refused login is the one console entry: drain it.
  (void)browser.ConsoleErrors();
  field = browser.Find("input[name=token]");
  ASSERT_TRUE(field.ok());
  ASSERT_TRUE(browser.Type(*field, token_).ok());
  submit = browser.Find("button[type=submit]");
  ASSERT_TRUE(submit.ok()) << submit.status();
  ASSERT_TRUE(browser.Click(*submit).ok());
  // Back where it was going, once the redirect has loaded.
  EXPECT_TRUE(WaitFor(browser, "return location.pathname + location.search;", "/node?name=n1"));
  url = browser.CurrentUrl();
  ASSERT_TRUE(url.ok());
  EXPECT_EQ(*url, base_ + "/node?name=n1");
  EXPECT_EQ(Text(browser, "return document.cookie;"), "");  // HttpOnly: no script reads it

  // Fleet overview: every node, online, its memory as `nodes` prints it;
  // labels escaped, not markup.
  Load(browser, "/", "02-fleet");
  EXPECT_EQ(Number(browser, "return document.querySelectorAll('#nodes tbody tr').length;"), 2);
  for (const v1::Node& n : nodes.nodes()) {
    EXPECT_EQ(Cell(browser, absl::StrCat("#nodes td[data-node=\"", n.name(), "\"][data-col=memory]")),
              FormatForPeople(static_cast<double>(n.facts().memory_total_bytes()) / (1 << 30)));
  }
  EXPECT_EQ(Number(browser, "return document.querySelectorAll('#nodes .online').length;"), 2);
  EXPECT_EQ(Number(browser, "return document.querySelectorAll('#nodes b').length;"), 0);
  EXPECT_TRUE(absl::StrContains(Text(browser, "return document.body.innerText;"), "note=<b>x</b>"));
  EXPECT_NE(Cell(browser, absl::StrCat("a[href=\"/run?id=", net.run_id(), "\"]")), "MISSING");

  // Ranking: median, p10, p90 and cost per unit as `rank` prints them.
  Load(browser, absl::StrCat("/rank?metric=", kGemmMetric, "&by=node&price=on_demand"), "03-rank");
  for (const v1::RankRow& r : rank.rows()) {
    const std::string row = absl::StrCat("#ranking td[data-group=\"", r.group(), "\"]");
    const std::string median = Cell(browser, row + "[data-col=median]");
    EXPECT_EQ(median, FormatForPeople(r.median())) << r.group();
    EXPECT_TRUE(absl::StrContains(rank_text.out, median)) << rank_text.out;
    EXPECT_EQ(Cell(browser, row + "[data-col=p10]"), FormatForPeople(r.p10()));
    EXPECT_EQ(Cell(browser, row + "[data-col=p90]"), FormatForPeople(r.p90()));
    EXPECT_EQ(Cell(browser, row + "[data-col=cost]"), FormatForPeople(r.cost_per_unit()));
  }
  EXPECT_EQ(Number(browser, "return document.querySelectorAll('svg.bars .whisker').length;"), 2);
  // A bad parameter is a page saying which, not a crash.
  Load(browser, "/rank?metric=x&by=galaxy", "04-rank-bad", 400);
  EXPECT_TRUE(absl::StrContains(Cell(browser, "#error"), "galaxy"));

  // A node: facts, one marker per history sample, findings.
  Load(browser, "/node?name=n1", "05-node");
  EXPECT_NE(Cell(browser, "#facts"), "MISSING");
  EXPECT_EQ(Number(browser, absl::StrCat("return document.querySelectorAll('.history[data-metric=\"",
                                         kGemmMetric, "\"] circle.point').length;")),
            history.samples_size());
  EXPECT_EQ(Text(browser, absl::StrCat("return document.querySelector('.history[data-metric=\"",
                                       kGemmMetric, "\"] circle.point').dataset.value;")),
            FormatForPeople(history.samples(0).value()));
  // An unknown node is a 404 page naming it, escaped.
  Load(browser, "/node?name=%3Cimg%20src%3Dx%3E", "06-node-unknown", 404);
  EXPECT_TRUE(absl::StrContains(Cell(browser, "#error"), "<img src=x>"));
  EXPECT_EQ(Number(browser, "return document.querySelectorAll('main img').length;"), 0);

  // The GEMM run: every sample's value as `results` prints it.
  Load(browser, "/run?id=" + gemm.run_id(), "07-run-gemm");
  EXPECT_EQ(Text(browser, "return document.querySelector('#state').dataset.state;"), "succeeded");
  for (const v1::Sample& s : gemm.samples()) {
    if (s.metric() != kGemmMetric) continue;
    EXPECT_EQ(Cell(browser, absl::StrCat("#samples td[data-node=\"", s.node(), "\"][data-metric=\"",
                                         s.metric(), "\"]")),
              FormatForPeople(s.value()));
  }
  // The network run: the pair matrix as a heatmap, a cell per pair.
  Load(browser, "/run?id=" + net.run_id(), "08-run-net");
  int pairs = 0;
  for (const v1::Sample& s : net.samples()) {
    auto peer = s.params().find("peer_node");
    if (s.metric() != "net.tcp.Gbps" || peer == s.params().end()) continue;
    ++pairs;
    EXPECT_EQ(Text(browser, absl::StrCat("const c = document.querySelector('.matrix[data-metric=\"net.tcp.Gbps\"] "
                                         "g.cell[data-row=\"", peer->second, "\"][data-column=\"",
                                         s.node(), "\"]'); return c ? c.dataset.value : 'MISSING';")),
              FormatForPeople(s.value()));
  }
  EXPECT_GE(pairs, 1);  // one direction per pair (net.reverse=0)
  EXPECT_EQ(Number(browser, "return document.querySelectorAll("
                            "'.matrix[data-metric=\"net.tcp.Gbps\"] g.cell').length;"),
            pairs);

  // Time of day: a heatmap row per node.
  v1::VarianceResponse variance;
  ASSERT_TRUE(CliJson({"variance", "--metric", kGemmMetric}, &variance));
  Load(browser, absl::StrCat("/timeofday?metric=", kGemmMetric), "09-timeofday");
  EXPECT_EQ(Number(browser, "return new Set([...document.querySelectorAll('svg.heatmap g.cell')]"
                            ".map(c => c.dataset.row)).size;"),
            variance.groups_size());
  // Each hour's median, as `variance --json` has it.
  int hours = 0;
  for (const v1::VarianceGroup& g : variance.groups()) {
    for (const v1::HourProfile& p : g.profiles()) {
      if (p.time_zone() != "UTC") continue;
      for (const v1::HourStat& h : p.hours()) {
        if (h.count() == 0) continue;
        ++hours;
        EXPECT_EQ(Text(browser, absl::StrCat("const c = document.querySelector('svg.heatmap "
                                             "g.cell[data-row=\"", g.group(), "\"][data-column=\"",
                                             absl::StrFormat("%02d", h.hour()),
                                             "\"]'); return c ? c.dataset.value : 'MISSING';")),
                  FormatForPeople(h.median()))
            << g.group() << " hour " << h.hour();
      }
    }
  }
  EXPECT_GE(hours, 2);

  // Reliability: a row per node with its interruptions as `reliability`
  // prints them (none here: no node went away).
  v1::ReliabilityResponse reliability;
  ASSERT_TRUE(CliJson({"reliability", "--by", "node"}, &reliability));
  Load(browser, "/reliability?by=node", "09b-reliability");
  EXPECT_EQ(Number(browser, "return document.querySelectorAll('#reliability tbody tr').length;"),
            reliability.groups_size());
  for (const v1::ReliabilityGroup& g : reliability.groups()) {
    EXPECT_EQ(Cell(browser, absl::StrCat("#reliability td[data-group=\"", g.group(),
                                         "\"][data-col=interruptions]")),
              std::to_string(g.interruptions()))
        << g.group();
  }
  EXPECT_GE(reliability.groups_size(), 2);

  // Logging out ends the session: pages send the browser to the form again.
  Load(browser, "/logout", "10-logout");
  Load(browser, "/", "11-after-logout");
  url = browser.CurrentUrl();
  ASSERT_TRUE(url.ok());
  EXPECT_TRUE(absl::StartsWith(*url, base_ + "/login")) << *url;
}

TEST_F(DashboardEndToEndTest, MetricsOpenServesOnlyMetricsWithoutAToken) {
  StartController({"--http-listen", absl::StrCat("127.0.0.1:", http_port_), "--metrics-open"});
  httplib::Client client("127.0.0.1", http_port_);
  auto metrics = client.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->status, 200);
  EXPECT_TRUE(absl::StrContains(metrics->body, "fleetbench_agents_connected 0"));
  auto page = client.Get("/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 303);
  EXPECT_EQ(page->get_header_value("Location"), "/login?next=/");
  KillController(SIGTERM);
  CommandResult bad = RunCommand({FLEETBENCH_BINARY, "controller", "--listen", "127.0.0.1:0",
                                  "--db", dir_ + "/other.db", "--metrics-open"},
                                 env_);
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_TRUE(absl::StrContains(bad.err, "--metrics-open needs --http-listen")) << bad.err;
}

}  // namespace
}  // namespace fleetbench::testing
