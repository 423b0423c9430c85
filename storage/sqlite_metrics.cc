// The SQLite store's metric descriptors: what the agents' plugins declare
// each metric to be, keyed by the metric's id in the `metrics` dictionary.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "fleetbench/v1/metric.pb.h"
#include "storage/record_checks.h"
#include "storage/sqlite_statement.h"
#include "storage/sqlite_store_impl.h"
#include "storage/store.h"

namespace fleetbench::storage {
namespace {

// The columns DescriptorOfRow reads, in its order; the callers add the
// filter or the order (as kSelectRun in sqlite_runs.cc).
constexpr char kSelectDescriptor[] =
    "SELECT m.name, d.unit, d.direction, d.description, d.benchmark "
    "FROM metric_descriptors d JOIN metrics m ON m.id = d.metric_id ";

v1::MetricDescriptor DescriptorOfRow(const Statement& s) {
  v1::MetricDescriptor d;
  d.set_name(s.Text(0));
  d.set_unit(s.Text(1));
  const int64_t direction = s.Int(2);
  d.set_direction(v1::MetricDirection_IsValid(static_cast<int>(direction))
                      ? static_cast<v1::MetricDirection>(direction)
                      : v1::METRIC_DIRECTION_UNSPECIFIED);
  d.set_description(s.Text(3));
  d.set_benchmark(s.Text(4));
  return d;
}

}  // namespace

absl::Status SqliteStore::UpsertMetricDescriptors(
    const std::vector<v1::MetricDescriptor>& descriptors) {
  for (const v1::MetricDescriptor& d : descriptors) {
    FLEETBENCH_RETURN_IF_ERROR(CheckMetricDescriptor(d));
  }
  absl::MutexLock lock(&mu_);
  return InTransaction(TxnKind::kWrite, [&]() -> absl::Status {
    for (const v1::MetricDescriptor& d : descriptors) {
      FLEETBENCH_ASSIGN_OR_RETURN(int64_t id,
                                  MetricIdLocked(d.name(), /*create=*/true));
      FLEETBENCH_RETURN_IF_ERROR(RunCached(
          "INSERT INTO metric_descriptors(metric_id, unit, direction, "
          "description, benchmark) VALUES (?1, ?2, ?3, ?4, ?5) "
          "ON CONFLICT(metric_id) DO UPDATE SET unit = excluded.unit, "
          "direction = excluded.direction, "
          "description = excluded.description, "
          "benchmark = excluded.benchmark",
          "storing metric descriptor", id, d.unit(), d.direction(),
          d.description(), d.benchmark()));
    }
    return absl::OkStatus();
  });
}

absl::StatusOr<std::vector<v1::MetricDescriptor>>
SqliteStore::ListMetricDescriptors() {
  absl::MutexLock lock(&mu_);
  std::vector<v1::MetricDescriptor> out;
  FLEETBENCH_ASSIGN_OR_RETURN(
      Statement s, Prepare(absl::StrCat(kSelectDescriptor, "ORDER BY m.name")));
  while (true) {
    FLEETBENCH_ASSIGN_OR_RETURN(bool row, s.Step("listing metric descriptors"));
    if (!row) break;
    out.push_back(DescriptorOfRow(s));
  }
  return out;
}

absl::StatusOr<v1::MetricDescriptor> SqliteStore::GetMetricDescriptor(
    const std::string& name) {
  absl::MutexLock lock(&mu_);
  FLEETBENCH_ASSIGN_OR_RETURN(
      Statement s, Prepare(absl::StrCat(kSelectDescriptor, "WHERE m.name = ?1")));
  s.Bind(1, name);
  FLEETBENCH_ASSIGN_OR_RETURN(bool row, s.Step("reading metric descriptor"));
  if (!row) {
    return absl::NotFoundError(
        absl::StrCat("metric ", name, " is not declared"));
  }
  return DescriptorOfRow(s);
}

}  // namespace fleetbench::storage
