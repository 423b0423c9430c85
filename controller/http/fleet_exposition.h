// controller/http/fleet_exposition.h — what /metrics says: the fleet's latest
// measurements in Prometheus base units and the controller's own health,
// built from a snapshot of FleetCore's answers. Pure: no I/O, no clock, so
// the names, units and labels are tested on their own (docs/operations.md
// lists them).
#ifndef FLEETBENCH_CONTROLLER_HTTP_FLEET_EXPOSITION_H_
#define FLEETBENCH_CONTROLLER_HTTP_FLEET_EXPOSITION_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "controller/core/fleet_core.h"
#include "controller/http/prometheus_text.h"
#include "fleetbench/v1/finding.pb.h"
#include "fleetbench/v1/metric.pb.h"
#include "fleetbench/v1/node.pb.h"
#include "fleetbench/v1/rank.pb.h"
#include "fleetbench/v1/reliability.pb.h"
#include "fleetbench/v1/result.pb.h"

namespace fleetbench::controller {

// A declared unit in Prometheus's base units: the family name's suffix and
// the factor that turns a value in the declared unit into base units.
struct BaseUnit {
  std::string suffix;  // bytes_per_second, seconds, flop_per_second, ...
  double factor = 1;
};

// tflops -> flop_per_second ×1e12, GBps -> bytes_per_second ×1e9, Gbps ->
// bytes_per_second ×1.25e8, us -> seconds ×1e-6, iops -> ops_per_second,
// ... (the table in fleet_exposition.cc). A unit the table lacks keeps its
// values and becomes the suffix as it is (snake case).
BaseUnit BaseUnitOf(std::string_view unit);

// "fleetbench_" + the metric's name without its unit, in snake case, + "_"
// + the base unit's suffix: gemm.cpu.fp32.tflops ->
// fleetbench_gemm_cpu_fp32_flop_per_second, disk.rand_read_4k.p99_us ->
// fleetbench_disk_rand_read_4k_p99_seconds.
std::string FamilyNameOf(std::string_view metric, std::string_view unit);

// The sample parameters that tell one series of a metric from another (a
// GEMM's dtype and size, a disk workload, a GPU's index, a link's peer),
// with the label each becomes. Everything else a sample carries (its
// spread, run counts, versions, free text) is left out so the number of
// series stays bounded.
const std::map<std::string, std::string>& SeriesParamLabels();

// Everything one scrape shows.
struct FleetSnapshot {
  v1::ListNodesResponse nodes;
  FleetCore::LatestMeasurements latest;
  // `fleetbench rank --metric M --by node` per declared metric.
  std::map<std::string, v1::RankResponse> ranks;
  // Every node's findings on its latest results (ListFindings).
  std::vector<v1::Finding> findings;
  std::map<std::string, int64_t> runs_by_state;
  FleetCore::Stats stats;
  // Bytes of the history file with its WAL; absent when it cannot be read.
  std::optional<int64_t> store_bytes;
  // fleetbench_schedule_firings_total by labels (schedule, outcome), from
  // FleetCore::Stats::schedule_firings (metrics_page.cc, Render).
  std::vector<std::pair<prometheus::Labels, int64_t>> schedule_firings;
  // `fleetbench reliability --by node` over its default 30 days: each
  // node's time online and interruptions by kind.
  v1::ReliabilityResponse reliability;
  // Set when a part could not be read (the store failing): that part is
  // left out and fleetbench_exposition_errors says which.
  std::vector<std::string> errors;
};

// The families of both kinds, in a stable order.
void AddFleetFamilies(const FleetSnapshot& snapshot, prometheus::Exposition* out);
void AddHealthFamilies(const FleetSnapshot& snapshot, prometheus::Exposition* out);

}  // namespace fleetbench::controller

#endif  // FLEETBENCH_CONTROLLER_HTTP_FLEET_EXPOSITION_H_
