// controller/http/prometheus_text.h — the Prometheus text exposition format
// (version 0.0.4), written by a small pure formatter.
//
// Contract: an Exposition collects metric families by name; Add() with a
// name already present returns that family (its first help and type stay),
// so a scrape never carries two families of one name. Render() writes each
// family's HELP and TYPE lines (also for a family with no series), then its
// series in the order added, with
// label values and help text escaped as the format wants. Names are made
// valid by the Sanitize* functions; a series whose labels repeat an earlier
// one's in the same family is left out (Prometheus refuses a scrape with
// duplicates). Not thread-safe; build one per scrape.
#ifndef FLEETBENCH_CONTROLLER_HTTP_PROMETHEUS_TEXT_H_
#define FLEETBENCH_CONTROLLER_HTTP_PROMETHEUS_TEXT_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace fleetbench::controller::prometheus {

enum class MetricType { kGauge, kCounter, kHistogram };

// Label name -> value; a std::map so the order is stable.
using Labels = std::map<std::string, std::string>;

// A histogram as Prometheus reads it: `bucket_counts[i]` observations were
// <= upper_bounds[i] (cumulative); `count` is every observation (the +Inf
// bucket), `sum` their total.
struct HistogramValue {
  std::vector<double> upper_bounds;
  std::vector<int64_t> bucket_counts;
  int64_t count = 0;
  double sum = 0;
};

class Family {
 public:
  Family(std::string name, MetricType type, std::string help)
      : name_(std::move(name)), type_(type), help_(std::move(help)) {}

  // For gauges and counters.
  void Add(Labels labels, double value);
  // For histograms; `value.upper_bounds` ascending and finite.
  void AddHistogram(Labels labels, HistogramValue value);

  const std::string& name() const { return name_; }
  MetricType type() const { return type_; }
  bool empty() const { return samples_.empty() && histograms_.empty(); }
  void Render(std::string* out) const;

 private:
  std::string name_;
  MetricType type_;
  std::string help_;
  std::vector<std::pair<Labels, double>> samples_;
  std::vector<std::pair<Labels, HistogramValue>> histograms_;
};

class Exposition {
 public:
  // The family named `name` (sanitized), created with `type` and `help`
  // when new. The reference stays valid until the Exposition is destroyed.
  Family& Add(std::string_view name, MetricType type, std::string_view help);
  std::string Render() const;

 private:
  std::vector<std::unique_ptr<Family>> families_;
  std::map<std::string, Family*> by_name_;
};

// The MIME type of what Render() writes.
inline constexpr char kContentType[] = "text/plain; version=0.0.4; charset=utf-8";

// `[a-zA-Z_:][a-zA-Z0-9_:]*`: every other character becomes '_', a leading
// digit gets a '_' before it; "" becomes "_".
std::string SanitizeMetricName(std::string_view name);
// `[a-zA-Z_][a-zA-Z0-9_]*`, the same way; a name starting "__" (reserved
// for Prometheus) gets a "x" before it.
std::string SanitizeLabelName(std::string_view name);
// Backslash, double quote and newline escaped as \\, \" and \n.
std::string EscapeLabelValue(std::string_view value);
// Backslash and newline escaped as \\ and \n.
std::string EscapeHelp(std::string_view help);
// Shortest text that reads back as the same double, "%g" style (0.0005,
// 1.5e+12); NaN, +Inf, -Inf.
std::string FormatValue(double value);

}  // namespace fleetbench::controller::prometheus

#endif  // FLEETBENCH_CONTROLLER_HTTP_PROMETHEUS_TEXT_H_
