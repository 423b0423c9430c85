#include "agent/benchmarks/workload_output/metric_line.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/benchmarks/workload_output/json_object.h"

namespace fleetbench::agent {
namespace {

// A metric line's object is flat; a little room lets a nested value reach
// the field check, whose message ("must be a number, got list") says more
// than a depth limit would.
constexpr int kMaxMetricLineDepth = 4;

constexpr absl::string_view kFields[] = {"name", "value", "unit", "direction"};

absl::Status LineError(absl::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat("metric line: ", problem));
}

// The field `key` of `object` when it holds a `kind`; else the error.
absl::StatusOr<const google::protobuf::Value*> Field(
    const google::protobuf::Struct& object, absl::string_view key,
    google::protobuf::Value::KindCase kind, absl::string_view kind_name) {
  const auto it = object.fields().find(std::string(key));
  if (it == object.fields().end()) {
    return LineError(absl::StrCat("field \"", key, "\" is missing"));
  }
  if (it->second.kind_case() != kind) {
    return LineError(absl::StrCat("field \"", key, "\" must be a ", kind_name,
                                  ", got ", JsonTypeName(it->second)));
  }
  return &it->second;
}

}  // namespace

bool IsMetricLine(absl::string_view line) {
  return absl::StartsWith(line, kMetricLinePrefix);
}

absl::StatusOr<WorkloadMetric> ParseMetricLine(absl::string_view line) {
  if (absl::EndsWith(line, "\n")) line.remove_suffix(1);
  if (absl::EndsWith(line, "\r")) line.remove_suffix(1);
  if (line.size() > kMaxMetricLineBytes) {
    return LineError(absl::StrCat("the line is ", line.size(),
                                  " bytes, over the limit of ",
                                  kMaxMetricLineBytes));
  }
  if (!IsMetricLine(line)) {
    return LineError(absl::StrCat("it must start with \"", kMetricLinePrefix,
                                  "\" (no whitespace before it)"));
  }
  auto object = ParseJsonObject(line.substr(kMetricLinePrefix.size()),
                                kMaxMetricLineDepth);
  if (!object.ok()) return LineError(object.status().message());

  // Sorted, so that a line with several unknown fields always names the same
  // one (a Struct's map has no order).
  std::vector<std::string> unknown;
  for (const auto& [key, value] : object->fields()) {
    if (std::find(std::begin(kFields), std::end(kFields), key) ==
        std::end(kFields)) {
      unknown.push_back(key);
    }
  }
  if (!unknown.empty()) {
    std::sort(unknown.begin(), unknown.end());
    return LineError(
        absl::StrCat("unknown field ", QuoteForError(unknown.front()),
                     " (the fields are ", absl::StrJoin(kFields, ", "), ")"));
  }

  using google::protobuf::Value;
  WorkloadMetric metric;
  auto name = Field(*object, "name", Value::kStringValue, "string");
  if (!name.ok()) return name.status();
  metric.name = (*name)->string_value();
  auto value = Field(*object, "value", Value::kNumberValue, "number");
  if (!value.ok()) return value.status();
  metric.value = (*value)->number_value();
  auto unit = Field(*object, "unit", Value::kStringValue, "string");
  if (!unit.ok()) return unit.status();
  metric.unit = (*unit)->string_value();
  auto direction = Field(*object, "direction", Value::kStringValue, "string");
  if (!direction.ok()) return direction.status();
  const std::string& word = (*direction)->string_value();
  if (word == "higher") {
    metric.direction = v1::METRIC_DIRECTION_HIGHER_IS_BETTER;
  } else if (word == "lower") {
    metric.direction = v1::METRIC_DIRECTION_LOWER_IS_BETTER;
  } else {
    return LineError(absl::StrCat(
        "field \"direction\" must be \"higher\" or \"lower\", got ",
        QuoteForError(word)));
  }
  if (absl::Status checked = CheckWorkloadMetric(metric); !checked.ok()) {
    return LineError(checked.message());
  }
  return metric;
}

}  // namespace fleetbench::agent
