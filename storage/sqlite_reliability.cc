// The SQLite store's reliability record: time online per node and UTC day,
// and the interruptions (docs/reliability.md).
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/status_macros.h"
#include "storage/record_checks.h"
#include "storage/sqlite_statement.h"
#include "storage/sqlite_store_impl.h"
#include "storage/store.h"

namespace fleetbench::storage {

absl::Status SqliteStore::RecordReliability(
    const std::vector<NodeUptime>& uptime, const std::vector<InterruptionRecord>& interruptions) {
  FLEETBENCH_RETURN_IF_ERROR(CheckReliability(uptime, interruptions));
  absl::MutexLock lock(&mu_);
  return InTransaction(TxnKind::kWrite, [&]() -> absl::Status {
    for (const NodeUptime& u : uptime) {
      FLEETBENCH_RETURN_IF_ERROR(RunCached(
          "INSERT INTO node_uptime(node, day, online_ms) VALUES (?1, ?2, ?3) "
          "ON CONFLICT(node, day) DO UPDATE SET online_ms = online_ms + excluded.online_ms",
          "storing time online", u.node, u.day, u.online_ms));
    }
    for (const InterruptionRecord& i : interruptions) {
      FLEETBENCH_RETURN_IF_ERROR(
          RunCached("INSERT INTO interruptions(node, time_ms, kind, detail) "
                    "VALUES (?1, ?2, ?3, ?4)",
                    "storing an interruption", i.node, ToMillis(i.time), i.kind, i.detail));
    }
    return absl::OkStatus();
  });
}

absl::StatusOr<std::map<std::string, int64_t>> SqliteStore::UptimeSince(int64_t first_day) {
  absl::MutexLock lock(&mu_);
  FLEETBENCH_ASSIGN_OR_RETURN(
      Statement s, Prepare("SELECT node, sum(online_ms) FROM node_uptime WHERE day >= ?1 "
                           "GROUP BY node"));
  s.BindAll(first_day);
  std::map<std::string, int64_t> out;
  while (true) {
    FLEETBENCH_ASSIGN_OR_RETURN(bool row, s.Step("reading time online"));
    if (!row) break;
    out[s.Text(0)] = s.Int(1);
  }
  return out;
}

absl::StatusOr<std::map<std::string, std::map<std::string, int64_t>>>
SqliteStore::InterruptionCountsSince(absl::Time since) {
  absl::MutexLock lock(&mu_);
  FLEETBENCH_ASSIGN_OR_RETURN(
      Statement s, Prepare("SELECT node, kind, count(*) FROM interruptions WHERE time_ms >= ?1 "
                           "GROUP BY node, kind"));
  s.BindAll(ToMillis(since));
  std::map<std::string, std::map<std::string, int64_t>> out;
  while (true) {
    FLEETBENCH_ASSIGN_OR_RETURN(bool row, s.Step("counting interruptions"));
    if (!row) break;
    out[s.Text(0)][s.Text(1)] = s.Int(2);
  }
  return out;
}

absl::StatusOr<std::vector<InterruptionRecord>> SqliteStore::InterruptionsSince(absl::Time since,
                                                                               int limit) {
  if (limit <= 0) return absl::InvalidArgumentError("a limit must be > 0");
  absl::MutexLock lock(&mu_);
  FLEETBENCH_ASSIGN_OR_RETURN(
      Statement s, Prepare("SELECT node, time_ms, kind, detail FROM interruptions "
                           "WHERE time_ms >= ?1 ORDER BY time_ms DESC, id DESC LIMIT ?2"));
  s.BindAll(ToMillis(since), limit);
  std::vector<InterruptionRecord> out;
  while (true) {
    FLEETBENCH_ASSIGN_OR_RETURN(bool row, s.Step("listing interruptions"));
    if (!row) break;
    InterruptionRecord& r = out.emplace_back();
    r.node = s.Text(0);
    r.time = FromMillis(s.Int(1));
    r.kind = s.Text(2);
    r.detail = s.Text(3);
  }
  return out;
}

}  // namespace fleetbench::storage
