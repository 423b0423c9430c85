#include "controller/http/prometheus_text.h"

#include <charconv>
#include <cmath>
#include <set>

#include "absl/strings/str_cat.h"

namespace fleetbench::controller::prometheus {
namespace {

bool IsAsciiLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

std::string Sanitize(std::string_view name, bool allow_colon) {
  std::string out;
  out.reserve(name.size() + 1);
  for (char c : name) {
    const bool ok = IsAsciiLetter(c) || IsDigit(c) || c == '_' || (allow_colon && c == ':');
    out.push_back(ok ? c : '_');
  }
  if (out.empty() || IsDigit(out[0])) out.insert(out.begin(), '_');
  return out;
}

const char* TypeName(MetricType type) {
  switch (type) {
    case MetricType::kGauge:
      return "gauge";
    case MetricType::kCounter:
      return "counter";
    case MetricType::kHistogram:
      return "histogram";
  }
  return "untyped";
}

// `{a="1",b="2"}`, with `extra` (le="...") last; "" for no labels.
void RenderLabels(const Labels& labels, const std::pair<std::string, std::string>* extra,
                  std::string* out) {
  if (labels.empty() && extra == nullptr) return;
  out->push_back('{');
  bool first = true;
  auto one = [&](const std::string& name, const std::string& value) {
    if (!first) out->push_back(',');
    first = false;
    absl::StrAppend(out, name, "=\"", EscapeLabelValue(value), "\"");
  };
  for (const auto& [name, value] : labels) one(name, value);
  if (extra != nullptr) one(extra->first, extra->second);
  out->push_back('}');
}

Labels SanitizeLabels(Labels labels) {
  Labels out;
  for (auto& [name, value] : labels) out.emplace(SanitizeLabelName(name), std::move(value));
  return out;
}

}  // namespace

std::string SanitizeMetricName(std::string_view name) { return Sanitize(name, true); }

std::string SanitizeLabelName(std::string_view name) {
  std::string out = Sanitize(name, false);
  if (out.size() >= 2 && out[0] == '_' && out[1] == '_') out.insert(out.begin(), 'x');
  return out;
}

std::string EscapeLabelValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

std::string EscapeHelp(std::string_view help) {
  std::string out;
  out.reserve(help.size());
  for (char c : help) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out.push_back(c);
    }
  }
  return out;
}

// As Go's strconv.FormatFloat(v, 'g', -1, 64), which Prometheus's own clients
// use: histogram bounds read le="0.0005", as people write them in queries.
std::string FormatValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char buffer[32];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value, std::chars_format::general);
  if (ec != std::errc()) return absl::StrCat(value);
  return std::string(buffer, end);
}

void Family::Add(Labels labels, double value) {
  samples_.emplace_back(SanitizeLabels(std::move(labels)), value);
}

void Family::AddHistogram(Labels labels, HistogramValue value) {
  histograms_.emplace_back(SanitizeLabels(std::move(labels)), std::move(value));
}

void Family::Render(std::string* out) const {
  absl::StrAppend(out, "# HELP ", name_, " ", EscapeHelp(help_), "\n");
  absl::StrAppend(out, "# TYPE ", name_, " ", TypeName(type_), "\n");
  std::set<Labels> seen;
  for (const auto& [labels, value] : samples_) {
    if (!seen.insert(labels).second) continue;
    out->append(name_);
    RenderLabels(labels, nullptr, out);
    absl::StrAppend(out, " ", FormatValue(value), "\n");
  }
  for (const auto& [labels, h] : histograms_) {
    if (!seen.insert(labels).second) continue;
    for (size_t i = 0; i < h.upper_bounds.size() && i < h.bucket_counts.size(); ++i) {
      const std::pair<std::string, std::string> le{"le", FormatValue(h.upper_bounds[i])};
      absl::StrAppend(out, name_, "_bucket");
      RenderLabels(labels, &le, out);
      absl::StrAppend(out, " ", h.bucket_counts[i], "\n");
    }
    const std::pair<std::string, std::string> inf{"le", "+Inf"};
    absl::StrAppend(out, name_, "_bucket");
    RenderLabels(labels, &inf, out);
    absl::StrAppend(out, " ", h.count, "\n");
    absl::StrAppend(out, name_, "_sum");
    RenderLabels(labels, nullptr, out);
    absl::StrAppend(out, " ", FormatValue(h.sum), "\n");
    absl::StrAppend(out, name_, "_count");
    RenderLabels(labels, nullptr, out);
    absl::StrAppend(out, " ", h.count, "\n");
  }
}

Family& Exposition::Add(std::string_view name, MetricType type, std::string_view help) {
  std::string clean = SanitizeMetricName(name);
  auto it = by_name_.find(clean);
  if (it != by_name_.end()) return *it->second;
  families_.push_back(std::make_unique<Family>(clean, type, std::string(help)));
  by_name_[clean] = families_.back().get();
  return *families_.back();
}

std::string Exposition::Render() const {
  std::string out;
  // A family without series keeps its HELP and TYPE: the name is there to
  // be found (a declared metric nobody measured yet, schedules not fired).
  for (const auto& family : families_) family->Render(&out);
  return out;
}

}  // namespace fleetbench::controller::prometheus
