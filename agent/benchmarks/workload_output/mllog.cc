#include "agent/benchmarks/workload_output/mllog.h"

#include <algorithm>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "agent/benchmarks/workload_output/json_object.h"

namespace fleetbench::agent {
namespace {

using google::protobuf::Struct;
using google::protobuf::Value;

// Events are flat but for value and metadata, which real logs nest a level
// or two; the bound only keeps the parser's cost down (json_object.h).
constexpr int kMaxMllogDepth = 32;

// The field `key` of `object`, or nullptr.
const Value* Find(const Struct& object, const std::string& key) {
  const auto it = object.fields().find(key);
  return it == object.fields().end() ? nullptr : &it->second;
}

absl::StatusOr<const Value*> Required(const Struct& object,
                                      const std::string& key,
                                      Value::KindCase kind,
                                      absl::string_view kind_name) {
  const Value* value = Find(object, key);
  if (value == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("no \"", key, "\""));
  }
  if (value->kind_case() != kind) {
    return absl::InvalidArgumentError(absl::StrCat(
        "\"", key, "\" must be a ", kind_name, ", got ", JsonTypeName(*value)));
  }
  return value;
}

// The throughput an event logs, nullopt when it logs none, or the error
// when it logs one of the wrong type.
absl::StatusOr<std::optional<double>> Throughput(const std::string& key,
                                                 const Value* value) {
  const Value* number = nullptr;
  if (key == "throughput" && value != nullptr && value->has_number_value()) {
    number = value;
  } else if (value != nullptr && value->has_struct_value()) {
    number = Find(value->struct_value(), "throughput");
  }
  if (number == nullptr) {
    // tracked_stats also carries other statistics (a loss, an epoch's time)
    // without a throughput; an event named "throughput" must have one.
    if (key == "tracked_stats") return std::nullopt;
    return absl::InvalidArgumentError(
        "\"throughput\" needs a number or {\"throughput\": number} as its "
        "value");
  }
  if (!number->has_number_value()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the throughput must be a number, got ", JsonTypeName(*number)));
  }
  if (number->number_value() < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("the throughput is negative: ", number->number_value()));
  }
  return number->number_value();
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t mid = values.size() / 2;
  if (values.size() % 2 == 1) return values[mid];
  // Halves first: the sum of two large doubles may overflow.
  return values[mid - 1] / 2 + values[mid] / 2;
}

}  // namespace

void MllogReader::AddLine(absl::string_view line) {
  ++lines_;
  if (absl::EndsWith(line, "\n")) line.remove_suffix(1);
  if (absl::EndsWith(line, "\r")) line.remove_suffix(1);
  const size_t tag = line.rfind(kMllogTag);
  if (tag == absl::string_view::npos) return;
  absl::Status status;
  if (line.size() > kMaxMllogLineBytes) {
    status = absl::InvalidArgumentError(
        absl::StrCat("the line is ", line.size(), " bytes, over the limit of ",
                     kMaxMllogLineBytes));
  } else {
    status = ReadEvent(line.substr(tag + kMllogTag.size()));
  }
  if (status.ok()) return;
  if (malformed_lines_++ == 0) {
    first_error_ = absl::InvalidArgumentError(
        absl::StrCat("MLPerf log, line ", lines_, ": ", status.message()));
  }
}

absl::Status MllogReader::ReadEvent(absl::string_view json) {
  absl::StatusOr<Struct> event = ParseJsonObject(json, kMaxMllogDepth);
  if (!event.ok()) return event.status();
  auto key = Required(*event, "key", Value::kStringValue, "string");
  if (!key.ok()) return key.status();
  auto event_type =
      Required(*event, "event_type", Value::kStringValue, "string");
  if (!event_type.ok()) return event_type.status();
  const std::string& type = (*event_type)->string_value();
  if (type != "POINT_IN_TIME" && type != "INTERVAL_START" &&
      type != "INTERVAL_END") {
    return absl::InvalidArgumentError(
        absl::StrCat("\"event_type\" must be POINT_IN_TIME, INTERVAL_START or "
                     "INTERVAL_END, got ",
                     QuoteForError(type)));
  }
  auto time_ms = Required(*event, "time_ms", Value::kNumberValue, "number");
  if (!time_ms.ok()) return time_ms.status();
  const double time = (*time_ms)->number_value();

  const std::string& name = (*key)->string_value();
  if (name == "tracked_stats" || name == "throughput") {
    auto throughput = Throughput(name, Find(*event, "value"));
    if (!throughput.ok()) return throughput.status();
    if (throughput->has_value()) throughputs_.push_back(**throughput);
  } else if (name == "run_start") {
    if (!run_start_ms_.has_value()) run_start_ms_ = time;
  } else if (name == "run_stop" && !run_stop_seen_) {
    run_stop_seen_ = true;
    const Value* metadata = Find(*event, "metadata");
    const Value* status = metadata != nullptr && metadata->has_struct_value()
                              ? Find(metadata->struct_value(), "status")
                              : nullptr;
    if (status != nullptr) {
      if (!status->has_string_value()) {
        return absl::InvalidArgumentError(
            absl::StrCat("run_stop's \"status\" must be a string, got ",
                         JsonTypeName(*status)));
      }
      // The caller keeps and shows it; MLPerf's are one short word.
      if (!IsShortPrintableText(status->string_value())) {
        return absl::InvalidArgumentError(absl::StrCat(
            "run_stop's \"status\" ", QuoteForError(status->string_value()),
            " must be 1 to 32 printable ASCII characters"));
      }
      run_status_ = status->string_value();
    }
    if (run_start_ms_.has_value()) {
      if (time < *run_start_ms_) {
        return absl::InvalidArgumentError(
            absl::StrCat("run_stop at time_ms ", time,
                         " is before run_start at ", *run_start_ms_));
      }
      run_stop_ms_ = time;
    }
  }
  return absl::OkStatus();
}

std::vector<WorkloadMetric> MllogReader::Metrics() const {
  std::vector<WorkloadMetric> metrics;
  const auto add = [&metrics](WorkloadMetric metric) {
    // time_ms is any finite double on the wire; a difference of two huge
    // ones is not, and is no run time anyone logged.
    if (CheckWorkloadMetric(metric).ok()) metrics.push_back(std::move(metric));
  };
  if (!throughputs_.empty()) {
    add({"throughput", Median(throughputs_), "samples/s",
         v1::METRIC_DIRECTION_HIGHER_IS_BETTER});
  }
  if (run_start_ms_.has_value() && run_stop_ms_.has_value()) {
    add({"run_time_s", (*run_stop_ms_ - *run_start_ms_) / 1000, "s",
         v1::METRIC_DIRECTION_LOWER_IS_BETTER});
  }
  return metrics;
}

}  // namespace fleetbench::agent
