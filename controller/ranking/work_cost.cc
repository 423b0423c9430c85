#include "controller/ranking/work_cost.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/workload_params.h"

namespace fleetbench::controller {

std::optional<WorkUnit> WorkUnitOf(absl::string_view unit) {
  if (unit == "tflops") return WorkUnit{"FLOP", 1e12, false};
  if (unit == "GBps") return WorkUnit{"bytes", 1e9, false};
  if (unit == "MBps") return WorkUnit{"bytes", 1e6, false};
  if (unit == "Gbps") return WorkUnit{"bits", 1e9, false};
  if (unit == "iops") return WorkUnit{"I/O operations", 1, false};
  if (unit == "us") return WorkUnit{"operations", 1e6, true};
  // A workload's own rate (docs/workloads.md): "samples/s" counts samples.
  if (unit.size() > 2 && absl::EndsWith(unit, "/s")) {
    return WorkUnit{std::string(unit.substr(0, unit.size() - 2)), 1, false};
  }
  return std::nullopt;
}

absl::StatusOr<v1::CostResponse> CostOfWork(const v1::RankResponse& rank, double work) {
  if (!std::isfinite(work) || work <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("cost: --work must be a number above 0, e.g. 1e18; got ", work));
  }
  std::optional<WorkUnit> unit = WorkUnitOf(rank.unit());
  if (!unit) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cost: metric ", rank.metric(), " is in '", rank.unit(),
        "', not a rate of work; use a throughput (tflops, GBps, MBps, Gbps, iops, or a "
        "workload's UNIT/s) or a latency (us)"));
  }
  v1::CostResponse response;
  response.set_metric(rank.metric());
  response.set_unit(rank.unit());
  response.set_work(work);
  response.set_work_unit(unit->name);
  response.set_by(rank.by());
  response.set_price(rank.price());
  std::vector<v1::CostRow> rows;
  for (const v1::RankRow& r : rank.rows()) {
    v1::CostRow& row = rows.emplace_back();
    row.set_group(r.group());
    row.set_node_count(r.node_count());
    row.set_median(r.median());
    row.set_price_source(r.price_source());
    row.set_price_effective_from_unix_ms(r.price_effective_from_unix_ms());
    row.set_price_note(r.price_note());
    if (!(r.median() > 0)) {
      row.set_price_note(absl::StrCat("median ", r.median(), " is not a rate; no time"));
      continue;
    }
    const double rate = unit->latency ? unit->factor / r.median() : r.median() * unit->factor;
    const double seconds = work / rate;
    if (!std::isfinite(rate) || !std::isfinite(seconds) || seconds <= 0) {
      row.set_price_note("the time overflows; no time");
      continue;
    }
    row.set_rate_per_second(rate);
    row.set_seconds(seconds);
    if (r.price_per_hour() <= 0 || r.currency().empty()) continue;
    const double cost = seconds / 3600 * r.price_per_hour();
    if (!std::isfinite(cost)) continue;
    row.set_price_per_hour(r.price_per_hour());
    row.set_currency(r.currency());
    row.set_cost(cost);
    row.set_priced(true);
  }
  std::sort(rows.begin(), rows.end(), [](const v1::CostRow& a, const v1::CostRow& b) {
    if (a.priced() != b.priced()) return a.priced();
    if (a.priced() && a.cost() != b.cost()) return a.cost() < b.cost();
    const bool a_timed = a.seconds() > 0;
    const bool b_timed = b.seconds() > 0;
    if (a_timed != b_timed) return a_timed;
    if (a.seconds() != b.seconds()) return a.seconds() < b.seconds();
    return a.group() < b.group();
  });
  for (v1::CostRow& row : rows) *response.add_rows() = std::move(row);
  return response;
}

std::string WorkloadSetupMetric(absl::string_view metric) {
  if (!absl::StartsWith(metric, kWorkloadMetricPrefix)) return "";
  const absl::string_view rest = metric.substr(sizeof(kWorkloadMetricPrefix) - 1);
  const size_t dot = rest.find('.');
  if (dot == absl::string_view::npos || dot == 0) return "";
  const absl::string_view own = rest.substr(dot + 1);
  if (own.empty() || own == "setup_s") return "";
  return absl::StrCat(kWorkloadMetricPrefix, rest.substr(0, dot), ".setup_s");
}

void AddSetupCost(const v1::RankResponse& setups, v1::CostResponse& cost) {
  std::map<std::string, double> median_s;
  for (const v1::RankRow& r : setups.rows()) {
    if (r.median() >= 0 && std::isfinite(r.median())) median_s[r.group()] = r.median();
  }
  for (v1::CostRow& row : *cost.mutable_rows()) {
    auto setup = median_s.find(row.group());
    if (setup == median_s.end()) continue;
    row.set_setup_seconds(setup->second);
    if (row.priced()) row.set_setup_cost(setup->second / 3600 * row.price_per_hour());
  }
}

}  // namespace fleetbench::controller
