// The diagnosis commands: `findings` (what the controller concludes about
// the nodes, docs/findings.md) and `variance` (a metric's 24-hour profile).
// Both are thin calls to the Fleet service; --json prints the response with
// protobuf's JSON printer.
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "cli/fleet_client.h"
#include "cli/table.h"
#include "cli/usage.h"
#include "common/api_enums.h"
#include "common/proto_json.h"
#include "diagnosis/finding.h"

namespace fleetbench::cli {
namespace {

const FlagSpec kJson{"json", false, false, "print protobuf JSON (snake_case field names)"};
const FlagSpec kWindow{"window", true, false,
                       "how far back peers and history reach, e.g. 14d, 48h (default 14 days)"};

// "14d" or an absl duration ("48h"); false for anything else or <= 0.
bool ParseWindow(const std::string& text, int64_t* window_ms) {
  absl::Duration d;
  int64_t days = 0;
  if (!text.empty() && text.back() == 'd' &&
      absl::SimpleAtoi(text.substr(0, text.size() - 1), &days) && days > 0 && days <= 3650) {
    d = absl::Hours(24 * days);
  } else if (!absl::ParseDuration(text, &d) || d <= absl::ZeroDuration()) {
    return false;
  }
  *window_ms = absl::ToInt64Milliseconds(d);
  return true;
}

std::string Upper(const std::string& s) {
  std::string out = s;
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::string RenderFindings(const v1::ListFindingsResponse& findings) {
  std::string out;
  for (const v1::Finding& f : findings.findings()) {
    std::string subject = f.subject().node();
    if (f.subject().has_gpu_index()) absl::StrAppend(&subject, " GPU ", f.subject().gpu_index());
    if (!f.subject().device().empty()) absl::StrAppend(&subject, " ", f.subject().device());
    if (!f.subject().link().empty()) absl::StrAppend(&subject, " ", f.subject().link());
    absl::StrAppend(&out, Upper(diagnosis::SeverityName(f.severity())), "  ", subject, "  ",
                    f.code(), "  ", f.summary(), "\n");
    for (const v1::Evidence& e : f.evidence()) {
      absl::StrAppend(&out, "    ", e.name(), ": measured ", FormatNumber(e.measured()), " ",
                      e.unit());
      if (e.has_expected()) absl::StrAppend(&out, ", expected ", FormatNumber(e.expected()));
      if (!e.expectation_source().empty()) absl::StrAppend(&out, " (", e.expectation_source(), ")");
      absl::StrAppend(&out, "\n");
    }
    for (const std::string& c : f.context()) absl::StrAppend(&out, "    ", c, "\n");
    if (!f.effect().empty()) absl::StrAppend(&out, "    effect: ", f.effect(), "\n");
    if (!f.suggestion().empty()) absl::StrAppend(&out, "    suggestion: ", f.suggestion(), "\n");
    if (!f.run_id().empty()) absl::StrAppend(&out, "    run: ", f.run_id(), "\n");
  }
  for (const std::string& n : findings.notes()) absl::StrAppend(&out, "note: ", n, "\n");
  return out;
}

std::string WorstFindingOf(const v1::ListFindingsResponse& findings, const std::string& node) {
  int count = 0;
  const v1::Finding* worst = nullptr;
  for (const v1::Finding& f : findings.findings()) {
    if (f.subject().node() != node) continue;
    ++count;
    if (worst == nullptr) worst = &f;  // sorted worst first
  }
  if (worst == nullptr) return "-";
  std::string cell = absl::StrCat(diagnosis::SeverityName(worst->severity()), " ", worst->code());
  if (count > 1) absl::StrAppend(&cell, " (+", count - 1, ")");
  return cell;
}

int FindingsCommand(const Argv& argv) {
  const std::vector<FlagSpec> flags = {
      {"node", true, false, "only this node (default: every node)"},
      {"severity", true, false, "only findings at least this severe: info, warning, critical"},
      {"run", true, false, "the findings of this run's results (default: each node's latest)"},
      kWindow,
      kJson};
  int code = 0;
  auto p = PrepareCommand("findings", argv, flags, 0, &code);
  if (!p) return code;
  v1::ListFindingsRequest request;
  request.set_node(p->args.Get("node"));
  request.set_run_id(p->args.Get("run"));
  if (p->args.Has("severity")) {
    absl::StatusOr<v1::Severity> severity = diagnosis::ParseSeverity(p->args.Get("severity"));
    if (!severity.ok()) {
      return UsageError("findings", "--" + std::string(severity.status().message()), flags);
    }
    request.set_min_severity(*severity);
  }
  if (p->args.Has("window")) {
    int64_t window_ms = 0;
    if (!ParseWindow(p->args.Get("window"), &window_ms)) {
      return UsageError("findings", "--window wants a duration like 14d or 48h", flags);
    }
    request.set_window_ms(window_ms);
  }
  v1::ListFindingsResponse response;
  if (absl::Status s = p->client->ListFindings(request, &response); !s.ok()) {
    return RemoteError("findings", s);
  }
  if (p->args.Has("json")) {
    std::cout << ToJson(response) << "\n";
    return kExitOk;
  }
  if (response.findings().empty()) {
    std::cout << "no findings for " << response.nodes_judged() << " node(s)\n";
  }
  std::cout << RenderFindings(response);
  return kExitOk;
}

int VarianceCommand(const Argv& argv) {
  const std::vector<FlagSpec> flags = {
      {"metric", true, false, "the metric, e.g. gemm.cpu.fp32.tflops"},
      {"by", true, false, "node, region, instance_type or provider (default node)"},
      kWindow,
      kJson};
  int code = 0;
  auto p = PrepareCommand("variance", argv, flags, 0, &code);
  if (!p) return code;
  v1::VarianceRequest request;
  request.set_metric(p->args.Get("metric"));
  if (request.metric().empty()) return UsageError("variance", "--metric is required", flags);
  absl::StatusOr<v1::RankGrouping> by = ParseRankGrouping(p->args.Get("by", "node"));
  if (!by.ok()) return UsageError("variance", "--" + std::string(by.status().message()), flags);
  request.set_by(*by);
  if (p->args.Has("window")) {
    int64_t window_ms = 0;
    if (!ParseWindow(p->args.Get("window"), &window_ms)) {
      return UsageError("variance", "--window wants a duration like 14d or 48h", flags);
    }
    request.set_window_ms(window_ms);
  }
  v1::VarianceResponse response;
  if (absl::Status s = p->client->Variance(request, &response); !s.ok()) {
    return RemoteError("variance", s);
  }
  if (p->args.Has("json")) {
    std::cout << ToJson(response) << "\n";
    return kExitOk;
  }
  std::cout << response.metric() << " by hour of day, by " << RankGroupingName(response.by())
            << " (" << (response.higher_is_better() ? "higher" : "lower") << " is better)\n";
  if (response.groups().empty()) std::cout << "no results in the window\n";
  for (const v1::VarianceGroup& g : response.groups()) {
    for (const v1::HourProfile& profile : g.profiles()) {
      std::cout << "\n" << g.group() << " (" << g.node_count() << " node(s), " << g.run_count()
                << " runs), hours in " << profile.time_zone() << "\n";
      Table table({"HOUR", "COUNT", "MEDIAN_" + response.unit()});
      for (const v1::HourStat& h : profile.hours()) {
        table.AddRow({absl::StrFormat("%02d", h.hour()), std::to_string(h.count()),
                      h.count() ? FormatNumber(h.median()) : "-"});
      }
      std::cout << table.Render();
      std::cout << "day 08-20: median " << FormatNumber(profile.day_median()) << " ("
                << profile.day_count() << " runs); night: median "
                << FormatNumber(profile.night_median()) << " (" << profile.night_count()
                << " runs); gap " << absl::StrFormat("%.0f%%", 100 * profile.gap_fraction())
                << ", noise " << FormatNumber(profile.noise()) << ": ";
      if (!profile.enough_data()) {
        std::cout << "too few runs in a half to judge\n";
      } else if (profile.beyond_noise()) {
        std::cout << "beyond the noise, slower by " << (profile.day_is_slower() ? "day" : "night")
                  << " (slow hours " << profile.slow_hours() << ")\n";
      } else {
        std::cout << "within the noise\n";
      }
    }
  }
  return kExitOk;
}

}  // namespace fleetbench::cli
