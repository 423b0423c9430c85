// /metrics end to end (Prometheus, docs/operations.md): a real controller process
// serving HTTP on loopback, real agents measuring a GEMM, the body checked
// by `promtool check metrics`, and a real Prometheus server scraping the
// controller with the bearer token, whose HTTP API must give the values the
// CLI shows.
#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "fleetbench/v1/rank.pb.h"
#include "fleetbench/v1/run.pb.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "tests/fleet_fixture.h"

namespace fleetbench::testing {
namespace {

const std::vector<std::string> kQuickGemm = {
    "--bench", "gemm", "--param", "gemm.sizes=256", "--param", "gemm.min_seconds=0.5",
    "--param", "gemm.max_runs=100000", "--param", "gemm.threads=1", "--param",
    "gemm.dtypes=fp32"};

constexpr char kFamily[] = "fleetbench_gemm_cpu_fp32_flop_per_second";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

// The value of the first series of `family` whose labels include
// node="NODE", parsed from an exposition body; NaN when there is none.
double SeriesValue(const std::string& body, const std::string& family, const std::string& node) {
  for (absl::string_view line : absl::StrSplit(body, '\n')) {
    if (!absl::StartsWith(line, absl::StrCat(family, "{"))) continue;
    if (line.find(absl::StrCat("node=\"", node, "\"")) == absl::string_view::npos) continue;
    double value = 0;
    if (absl::SimpleAtod(line.substr(line.rfind(' ') + 1), &value)) return value;
  }
  return std::nan("");
}

class MetricsEndToEndTest : public FleetTest {
 protected:
  void SetUp() override {
    FleetTest::SetUp();
    http_port_ = PickFreePort();
    token_ = env_["FLEETBENCH_TOKEN"];
    StartController({"--http-listen", absl::StrCat("127.0.0.1:", http_port_)});
  }

  httplib::Result Get(const std::string& path, const std::string& token) {
    httplib::Client client("127.0.0.1", http_port_);
    client.set_connection_timeout(5);
    client.set_read_timeout(30);
    httplib::Headers headers;
    if (!token.empty()) headers.emplace("Authorization", "Bearer " + token);
    return client.Get(path.c_str(), headers);
  }
  std::string Scrape() {
    auto res = Get("/metrics", token_);
    EXPECT_TRUE(res) << "no answer from /metrics";
    if (!res) return "";
    EXPECT_EQ(res->status, 200) << res->body;
    EXPECT_EQ(res->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
    return res->body;
  }
  // Two labelled agents, one GEMM run on both; returns the run as
  // `fleetbench results --json` shows it.
  v1::Run MeasureTwoNodes() {
    StartAgent("n1", {"provider=lab", "region=eu-west", "instance_type=small", "price_per_hour=1"});
    StartAgent("n2", {"provider=lab", "region=eu-west", "instance_type=large", "price_per_hour=3"});
    EXPECT_TRUE(WaitForOnlineNodes(2, absl::Seconds(30)));
    std::vector<std::string> args = {"run"};
    args.insert(args.end(), kQuickGemm.begin(), kQuickGemm.end());
    for (const char* a : {"--timeout", "120s", "--wait"}) args.push_back(a);
    v1::Run run;
    int code = -1;
    EXPECT_TRUE(CliJson(args, &run, &code));
    EXPECT_EQ(code, 0);
    v1::Run results;
    EXPECT_TRUE(CliJson({"results", run.run_id()}, &results));
    return results;
  }
  // The CLI's value of gemm.cpu.fp32.tflops on `node`.
  static double CliValue(const v1::Run& run, const std::string& node) {
    for (const v1::Sample& s : run.samples()) {
      if (s.node() == node && s.metric() == "gemm.cpu.fp32.tflops") return s.value();
    }
    return std::nan("");
  }

  int http_port_ = 0;
  std::string token_;
};

TEST_F(MetricsEndToEndTest, NobodyWithoutTheTokenReadsAndOnlyGetIsServed) {
  auto none = Get("/metrics", "");
  ASSERT_TRUE(none);
  EXPECT_EQ(none->status, 401);
  EXPECT_EQ(none->get_header_value("WWW-Authenticate"), "Bearer realm=\"fleetbench\"");
  EXPECT_EQ(none->body.find("fleetbench_"), std::string::npos);
  auto wrong = Get("/metrics", token_ + "x");
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->status, 401);
  // Unknown pages are 404 even with the token; without it, 401 first.
  auto unknown = Get("/nope", token_);
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->status, 404);
  EXPECT_EQ(Get("/nope", "")->status, 401);

  httplib::Client client("127.0.0.1", http_port_);
  httplib::Headers headers = {{"Authorization", "Bearer " + token_}};
  auto post = client.Post("/metrics", headers, "x=1", "application/x-www-form-urlencoded");
  ASSERT_TRUE(post);
  EXPECT_EQ(post->status, 405);
  // A request past the bounds is refused, not read.
  auto big = client.Get(("/metrics?" + std::string(20000, 'a')).c_str(), headers);
  ASSERT_TRUE(big);
  EXPECT_EQ(big->status, 414);
  auto head = client.Head("/metrics", headers);
  ASSERT_TRUE(head);
  EXPECT_EQ(head->status, 200);
}

TEST_F(MetricsEndToEndTest, ABadHttpAddressIsAUsageError) {
  for (const std::string bad : {"nonsense", "127.0.0.1:99999", "unix:/tmp/x.sock"}) {
    CommandResult r = RunCommand({FLEETBENCH_BINARY, "controller", "--listen", "127.0.0.1:0",
                                  "--db", dir_ + "/other.db", "--http-listen", bad},
                                 env_);
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.err;
    EXPECT_NE(r.err.find("--http-listen"), std::string::npos) << r.err;
  }
  // A port already taken (by this test's controller): the controller says
  // so and stops. cpp-httplib's default SO_REUSEPORT let it share the port.
  // As a Process, so a controller that does start fails the test instead of
  // hanging it.
  const std::string err_path = dir_ + "/taken.err";
  Process taken({FLEETBENCH_BINARY, "controller", "--listen", "127.0.0.1:0", "--db",
                 dir_ + "/other.db", "--http-listen", absl::StrCat("127.0.0.1:", http_port_)},
                env_, err_path);
  std::optional<int> code = taken.WaitFor(absl::Seconds(30));
  ASSERT_TRUE(code.has_value()) << "a second controller serves the same HTTP port";
  EXPECT_EQ(*code, 1);
  const std::string err = ReadFile(err_path);
  EXPECT_NE(err.find("cannot listen on 127.0.0.1:"), std::string::npos) << err;
}

TEST_F(MetricsEndToEndTest, ARealScrapePassesPromtoolAndShowsWhatTheCliShows) {
  const v1::Run run = MeasureTwoNodes();
  ASSERT_EQ(run.state(), v1::RUN_STATE_SUCCEEDED);
  const std::string body = Scrape();
  const std::string path = dir_ + "/scrape.txt";
  WriteFile(path, body);
  CommandResult check = RunCommand(
      {"/bin/sh", "-c", absl::StrCat(PROMTOOL_BINARY, " check metrics < ", path)}, {});
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err << "\n(body in " << path << ")";

  for (const std::string node : {"n1", "n2"}) {
    const double cli = CliValue(run, node);
    ASSERT_FALSE(std::isnan(cli)) << node;
    // tflops in the CLI, FLOP/s on the page.
    EXPECT_DOUBLE_EQ(SeriesValue(body, kFamily, node), cli * 1e12) << node;
  }
  EXPECT_NE(body.find(absl::StrCat(kFamily, "{dtype=\"fp32\",instance_type=\"small\","
                                   "metric=\"gemm.cpu.fp32.tflops\",node=\"n1\",provider=\"lab\","
                                   "region=\"eu-west\",size=\"256\"} ")),
            std::string::npos)
      << body;
  EXPECT_NE(body.find("fleetbench_agents_connected 2\n"), std::string::npos);
  EXPECT_NE(body.find("fleetbench_runs{state=\"succeeded\"} 1\n"), std::string::npos);
  EXPECT_NE(body.find("fleetbench_ingest_batch_duration_seconds_count "), std::string::npos);
  EXPECT_EQ(body.find("fleetbench_samples_ingested_total 0\n"), std::string::npos);

  // Every fleetbench name the shipped alert rules and dashboard use is on
  // the page (histograms by their base name).
  std::set<std::string> shown;
  const std::regex family(R"(# TYPE (fleetbench_[a-z0-9_]+) )");
  for (auto it = std::sregex_iterator(body.begin(), body.end(), family);
       it != std::sregex_iterator(); ++it) {
    shown.insert((*it)[1]);
  }
  const std::regex used(R"(fleetbench_[a-z0-9_]+)");
  for (const char* file : {"deploy/prometheus/fleetbench-alerts.yml",
                           "deploy/prometheus/grafana-dashboard.json"}) {
    const std::string text = ReadFile(absl::StrCat(FLEETBENCH_SOURCE_DIR, "/", file));
    ASSERT_FALSE(text.empty()) << file;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), used);
         it != std::sregex_iterator(); ++it) {
      std::string name = (*it)[0];
      for (const char* suffix : {"_bucket", "_sum", "_count"}) {
        if (absl::EndsWith(name, suffix) && !shown.count(name)) {
          name = name.substr(0, name.size() - std::string(suffix).size());
        }
      }
      // The prefix of a regular expression over names
      // ({__name__=~"fleetbench_.+_flop_per_second"}).
      if (absl::EndsWith(name, "_")) continue;
      EXPECT_TRUE(shown.count(name)) << file << " uses " << name << ", which /metrics lacks";
    }
  }
}

// A real Prometheus server (temp dir, 1 s scrapes, the bearer token in its
// scrape config) asked through its HTTP API.
TEST_F(MetricsEndToEndTest, PrometheusScrapesWithTheTokenAndAnswersWhatTheCliShows) {
  const v1::Run run = MeasureTwoNodes();
  ASSERT_EQ(run.state(), v1::RUN_STATE_SUCCEEDED);
  v1::RankResponse rank;
  ASSERT_TRUE(CliJson({"rank", "--metric", "gemm.cpu.fp32.tflops", "--by", "node"}, &rank));
  ASSERT_EQ(rank.rows_size(), 2);

  const std::string token_file = dir_ + "/prometheus.token";
  WriteFile(token_file, token_);
  const int prom_port = PickFreePort();
  WriteFile(dir_ + "/prometheus.yml",
            absl::StrCat("global:\n"
                         "  scrape_interval: 1s\n"
                         "  scrape_timeout: 1s\n"
                         "scrape_configs:\n"
                         "  - job_name: fleetbench\n"
                         "    authorization:\n"
                         "      type: Bearer\n"
                         "      credentials_file: ", token_file, "\n"
                         "    static_configs:\n"
                         "      - targets: ['127.0.0.1:", http_port_, "']\n"));
  Process prometheus({PROMETHEUS_BINARY, "--config.file=" + dir_ + "/prometheus.yml",
                      "--storage.tsdb.path=" + dir_ + "/tsdb",
                      absl::StrCat("--web.listen-address=127.0.0.1:", prom_port)},
                     {}, dir_ + "/prometheus.log");

  // Prometheus's answer to an instant query: the series' labels and value.
  auto query = [&](const std::string& promql) {
    google::protobuf::Struct answer;
    httplib::Client client("127.0.0.1", prom_port);
    client.set_connection_timeout(2);
    auto res = client.Get("/api/v1/query", httplib::Params{{"query", promql}}, httplib::Headers{});
    if (!res || res->status != 200) return answer;
    google::protobuf::util::JsonParseOptions options;
    options.ignore_unknown_fields = true;
    if (!google::protobuf::util::JsonStringToMessage(res->body, &answer, options).ok()) {
      return google::protobuf::Struct();
    }
    return answer;
  };
  // The value of the single series `promql` selects; NaN until there is one.
  auto value = [&](const std::string& promql) {
    google::protobuf::Struct answer = query(promql);
    auto data = answer.fields().find("data");
    if (data == answer.fields().end()) return std::nan("");
    const auto& result = data->second.struct_value().fields().find("result");
    if (result == data->second.struct_value().fields().end() ||
        result->second.list_value().values_size() != 1) {
      return std::nan("");
    }
    const auto& sample = result->second.list_value().values(0).struct_value().fields();
    auto v = sample.find("value");
    if (v == sample.end() || v->second.list_value().values_size() != 2) return std::nan("");
    double parsed = 0;
    if (!absl::SimpleAtod(v->second.list_value().values(1).string_value(), &parsed)) {
      return std::nan("");
    }
    return parsed;
  };

  // Scraped with the token: up is 1 (a 401 would make it 0).
  ASSERT_TRUE(WaitFor([&] { return value("up{job=\"fleetbench\"}") == 1; }, absl::Seconds(60)))
      << "Prometheus never scraped the controller; see " << dir_ << "/prometheus.log";
  for (const std::string node : {"n1", "n2"}) {
    const std::string selector = absl::StrCat(kFamily, "{node=\"", node, "\"}");
    ASSERT_TRUE(WaitFor([&] { return !std::isnan(value(selector)); }, absl::Seconds(30)))
        << selector;
    EXPECT_DOUBLE_EQ(value(selector), CliValue(run, node) * 1e12) << node;
  }
  for (int i = 0; i < rank.rows_size(); ++i) {
    EXPECT_EQ(value(absl::StrCat("fleetbench_node_rank{metric=\"gemm.cpu.fp32.tflops\",node=\"",
                                 rank.rows(i).group(), "\"}")),
              i + 1)
        << rank.rows(i).group();
  }
  EXPECT_EQ(value("fleetbench_agents_connected"), 2);
}

}  // namespace
}  // namespace fleetbench::testing
