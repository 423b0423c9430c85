// fleetbench cost --metric M --work W: how long and how much W units of work
// take on each offer at its measured rate (docs/ranking.md, Cost of work).
#include <algorithm>
#include <cmath>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "cli/args.h"
#include "cli/client.h"
#include "cli/usage.h"
#include "cli/commands.h"
#include "cli/job_flags.h"
#include "cli/table.h"
#include "common/api_enums.h"
#include "common/proto_json.h"
#include "fleetbench/v1/fleet_service.grpc.pb.h"
#include "fleetbench/v1/rank.pb.h"

namespace fleetbench::cli {
namespace {

// "1250 s (20m50s)"; the human form only while it fits a Duration.
std::string SecondsText(double seconds) {
  if (!(seconds > 0)) return "-";
  std::string out = absl::StrCat(FormatNumber(seconds), " s");
  constexpr double kYear = 365.25 * 24 * 3600;
  if (seconds >= 1 && seconds < 100 * kYear) {
    absl::StrAppend(&out, " (",
                    absl::FormatDuration(absl::Trunc(absl::Seconds(seconds), absl::Seconds(1))),
                    ")");
  } else if (seconds >= 100 * kYear) {
    absl::StrAppend(&out, " (", FormatNumber(seconds / kYear), " years)");
  }
  return out;
}

}  // namespace

int CostCommand(const Argv& argv) {
  std::vector<FlagSpec> flags = {
      {"metric", true, false, "the rate to cost at, e.g. gemm.gpu.bf16.tflops"},
      {"work", true, false,
       "how much work, in what the metric's unit is a rate of: FLOP for tflops, bytes for GBps "
       "and MBps, bits for Gbps, I/O operations for iops, operations for a latency in us; "
       "e.g. 1e18"},
      {"by", true, false, "node, instance_type, region or provider (default node)"},
      {"price", true, false, "on_demand or spot (default on_demand)"},
      WindowFlag("7 days"),
      kJsonFlag};
  AddJobFlags(flags);
  int code = 0;
  auto p = Prepare("cost", argv, flags, 0, &code);
  if (!p) return code;
  v1::CostRequest request;
  request.set_metric(p->args.Get("metric"));
  if (request.metric().empty() || !p->args.Has("work")) {
    return Usage("cost", "--metric and --work are required", flags);
  }
  double work = 0;
  if (!absl::SimpleAtod(p->args.Get("work"), &work) || !std::isfinite(work) || work <= 0) {
    return Usage("cost", "--work wants a number above 0, e.g. 1e18", flags);
  }
  request.set_work(work);
  absl::StatusOr<v1::RankGrouping> by = ParseRankGrouping(p->args.Get("by", "node"));
  if (!by.ok()) return Usage("cost", "--" + std::string(by.status().message()), flags);
  request.set_by(*by);
  absl::StatusOr<v1::PriceKind> price = ParsePriceKind(p->args.Get("price", "on_demand"));
  if (!price.ok()) return Usage("cost", "--" + std::string(price.status().message()), flags);
  request.set_price(*price);
  absl::StatusOr<int64_t> window_ms = WindowMillis(p->args);
  if (!window_ms.ok()) return Usage("cost", std::string(window_ms.status().message()), flags);
  request.set_window_ms(*window_ms);
  absl::StatusOr<std::optional<v1::JobShape>> job = JobFromFlags(p->args);
  if (!job.ok()) return Usage("cost", std::string(job.status().message()), flags);
  if (*job) *request.mutable_job() = **job;
  v1::CostResponse response;
  if (auto s = p->client->Call(&v1::Fleet::Stub::Cost, request, &response); !s.ok()) {
    return RemoteError("cost", s);
  }
  if (p->args.Has("json")) {
    std::cout << ToJson(response) << "\n";
    return kExitOk;
  }
  std::cout << "cost of " << FormatNumber(response.work()) << " " << response.work_unit()
            << " at the measured " << response.metric() << " (" << response.unit() << "), "
            << PriceKindName(response.price()) << " prices\n";
  // A workload's set-up (start to first output) is not in its rate: shown
  // as its own columns, paid once per start of the job.
  const bool setup = std::any_of(response.rows().begin(), response.rows().end(),
                                 [](const v1::CostRow& r) { return r.setup_seconds() > 0; });
  std::vector<std::string> columns = {"#",
                                      absl::AsciiStrToUpper(RankGroupingName(response.by())),
                                      "NODES",
                                      "MEDIAN_" + response.unit(),
                                      "RATE_" + response.work_unit() + "_PER_S",
                                      "TIME",
                                      "PRICE_PER_H",
                                      "PRICE_SOURCE",
                                      "COST"};
  if (setup) {
    columns.push_back("SETUP");
    columns.push_back("SETUP_COST");
  }
  if (*job) {
    columns.push_back("GOODPUT");
    columns.push_back("EFFECTIVE_TIME");
    columns.push_back("EFFECTIVE_COST");
  }
  Table table(columns);
  std::vector<std::pair<std::string, std::string>> notes;
  int rank = 0;
  for (const v1::CostRow& r : response.rows()) {
    std::string source = r.price_source().empty() ? "-" : r.price_source();
    if (r.price_effective_from_unix_ms() != 0) {
      absl::StrAppend(&source, " ",
                      absl::FormatTime("%Y-%m-%d", absl::FromUnixMillis(r.price_effective_from_unix_ms()),
                                       absl::UTCTimeZone()));
    }
    std::vector<std::string> row = {
        std::to_string(++rank), r.group(), std::to_string(r.node_count()),
        FormatNumber(r.median()),
        r.rate_per_second() > 0 ? absl::StrFormat("%.4g", r.rate_per_second()) : "-",
        SecondsText(r.seconds()),
        r.priced() ? FormatNumber(r.price_per_hour()) + " " + r.currency() : "-", source,
        r.priced() ? FormatNumber(r.cost()) + " " + r.currency() : "-"};
    if (setup) {
      row.push_back(r.setup_seconds() > 0 ? FormatNumber(r.setup_seconds()) + " s" : "-");
      row.push_back(r.priced() && r.setup_seconds() > 0
                        ? FormatNumber(r.setup_cost()) + " " + r.currency()
                        : "-");
    }
    if (*job) {
      row.push_back(GoodputText(r.job()));
      row.push_back(SecondsText(r.effective_seconds()));
      row.push_back(r.effective_cost() > 0 ? FormatNumber(r.effective_cost()) + " " + r.currency()
                                           : "-");
    }
    table.AddRow(row);
    if (!r.price_note().empty()) notes.emplace_back(r.group(), r.price_note());
  }
  std::cout << table.Render();
  if (setup) {
    std::cout << "SETUP: the workload's median time from start to first output (imports, data "
                 "loading), not in its rate; paid once per start of the job, on top of COST\n";
  }
  if (response.has_job()) std::cout << JobLegend(response.job());
  if (!notes.empty()) {
    std::cout << "\nnotes:\n";
    for (const auto& [group, note] : notes) std::cout << "  " << group << ": " << note << "\n";
  }
  return kExitOk;
}

}  // namespace fleetbench::cli
