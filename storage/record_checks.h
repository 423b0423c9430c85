// storage/record_checks.h — what every backend refuses before it stores a
// record (storage/store.h says which call refuses what): the same guard,
// and the same words, whichever backend keeps the history.
#ifndef FLEETBENCH_STORAGE_RECORD_CHECKS_H_
#define FLEETBENCH_STORAGE_RECORD_CHECKS_H_

#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "fleetbench/v1/metric.pb.h"
#include "fleetbench/v1/price.pb.h"
#include "storage/store.h"

namespace fleetbench::storage {

// A name, a unit, a benchmark, a direction that is higher or lower.
absl::Status CheckMetricDescriptor(const v1::MetricDescriptor& d);

// Every row: its key fields, prices finite and > 0, a 3-letter currency,
// and no key given twice in the call.
absl::Status CheckCatalogPrices(const std::vector<v1::CatalogPrice>& prices);

// A name and a cron expression.
absl::Status CheckSchedule(const v1::Schedule& schedule);

// A name, an id, a role and a 32-byte hash.
absl::Status CheckApiToken(const ApiTokenRecord& token);

// A node and a kind for each, no negative time online.
absl::Status CheckReliability(const std::vector<NodeUptime>& uptime,
                              const std::vector<InterruptionRecord>& interruptions);

}  // namespace fleetbench::storage

#endif  // FLEETBENCH_STORAGE_RECORD_CHECKS_H_
