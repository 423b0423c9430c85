#include "agent/benchmarks/workload_output/loadgen_summary.h"

#include <cmath>
#include <optional>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "agent/benchmarks/workload_output/json_object.h"

namespace fleetbench::agent {
namespace {

constexpr v1::MetricDirection kHigher = v1::METRIC_DIRECTION_HIGHER_IS_BETTER;
constexpr v1::MetricDirection kLower = v1::METRIC_DIRECTION_LOWER_IS_BETTER;

struct MetricLabel {
  absl::string_view label;
  absl::string_view name;
  absl::string_view unit;
};

constexpr MetricLabel kRateLabels[] = {
    {"Samples per second", "samples_per_s", "samples/s"},
    {"Tokens per second", "tokens_per_s", "tokens/s"},
    {"Completed samples per second", "completed_samples_per_s", "samples/s"},
    {"Scheduled samples per second", "scheduled_samples_per_s", "samples/s"},
    {"Completed tokens per second", "completed_tokens_per_s", "tokens/s"},
};

// "90" for "90", "90.0" and "90.00"; "99_9" for "99.9"; nullopt for anything
// that is not a short decimal number.
std::optional<std::string> PercentileText(absl::string_view number) {
  const size_t dot = number.find('.');
  absl::string_view whole = number.substr(0, dot);
  absl::string_view fraction =
      dot == absl::string_view::npos ? "" : number.substr(dot + 1);
  const auto digits = [](absl::string_view s, size_t max) {
    if (s.size() > max) return false;
    for (char c : s) {
      if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
    }
    return true;
  };
  if (whole.empty() || !digits(whole, 3) || !digits(fraction, 4))
    return std::nullopt;
  while (!fraction.empty() && fraction.back() == '0') fraction.remove_suffix(1);
  if (fraction.empty()) return std::string(whole);
  return absl::StrCat(whole, "_", fraction);
}

// The metric a label names, or nullopt for a label that is not a metric's.
std::optional<WorkloadMetric> MetricFor(absl::string_view label) {
  for (const MetricLabel& rate : kRateLabels) {
    if (label == rate.label) {
      return WorkloadMetric{std::string(rate.name), 0, std::string(rate.unit),
                            kHigher};
    }
  }
  absl::string_view kind;
  if (absl::ConsumeSuffix(&label, "th percentile latency (ns)")) {
    kind = "latency_ns";
  } else if (absl::ConsumeSuffix(&label,
                                 "th first token percentile latency (ns)")) {
    kind = "first_token_latency_ns";
  } else {
    return std::nullopt;
  }
  const std::optional<std::string> percentile = PercentileText(label);
  if (!percentile.has_value()) return std::nullopt;
  return WorkloadMetric{absl::StrCat("p", *percentile, "_", kind), 0, "ns",
                        kLower};
}

absl::Status LineError(int line_number, absl::string_view problem) {
  return absl::InvalidArgumentError(
      absl::StrCat("LoadGen summary, line ", line_number, ": ", problem));
}

}  // namespace

absl::StatusOr<LoadgenSummary> ParseLoadgenSummary(absl::string_view text) {
  LoadgenSummary summary;
  bool in_summary = false;
  bool scenario_seen = false;
  bool mode_seen = false;
  bool result_seen = false;
  std::set<std::string> metrics_seen;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    line = absl::StripAsciiWhitespace(line);
    if (!in_summary) {
      // What comes before the banner is not LoadGen's.
      in_summary = line == "MLPerf Results Summary";
      continue;
    }
    const size_t colon = line.find(':');
    if (colon == absl::string_view::npos) continue;
    const absl::string_view label =
        absl::StripAsciiWhitespace(line.substr(0, colon));
    const absl::string_view value =
        absl::StripAsciiWhitespace(line.substr(colon + 1));
    if (label == "Scenario" || label == "Mode") {
      std::string& field =
          label == "Scenario" ? summary.scenario : summary.mode;
      bool& seen = label == "Scenario" ? scenario_seen : mode_seen;
      if (seen) continue;
      // A word or two in every LoadGen version ("Offline", "Single Stream"
      // in early ones); the caller keeps them, so anything else is refused.
      if (!IsShortPrintableText(value)) {
        return LineError(
            line_number,
            absl::StrCat("\"", label,
                         "\" must be 1 to 32 printable characters, got ",
                         QuoteForError(value)));
      }
      field = std::string(value);
      seen = true;
    } else if (label == "Result is") {
      if (result_seen) continue;
      if (value != "VALID" && value != "INVALID") {
        return LineError(
            line_number,
            absl::StrCat("\"Result is\" must be VALID or INVALID, got ",
                         QuoteForError(value)));
      }
      summary.result_valid = value == "VALID";
      result_seen = true;
    } else if (std::optional<WorkloadMetric> metric = MetricFor(label);
               metric.has_value()) {
      if (!metrics_seen.insert(metric->name).second) continue;
      if (!absl::SimpleAtod(value, &metric->value) ||
          !std::isfinite(metric->value) || metric->value < 0) {
        return LineError(
            line_number,
            absl::StrCat("\"", label,
                         "\" must be a finite, non-negative number, got ",
                         QuoteForError(value)));
      }
      summary.metrics.push_back(std::move(*metric));
    }
  }
  if (!in_summary) {
    return absl::InvalidArgumentError(
        "not a LoadGen summary: no \"MLPerf Results Summary\" line");
  }
  if (!scenario_seen) {
    return absl::InvalidArgumentError(
        "LoadGen summary: no \"Scenario : ...\" line");
  }
  if (!result_seen) {
    return absl::InvalidArgumentError(
        "LoadGen summary: no \"Result is : VALID\" or \"Result is : INVALID\" "
        "line");
  }
  if (summary.metrics.empty()) {
    return absl::InvalidArgumentError(
        "LoadGen summary: no throughput or percentile latency line "
        "(\"Samples per second: ...\", \"90th percentile latency (ns) : "
        "...\")");
  }
  return summary;
}

}  // namespace fleetbench::agent
