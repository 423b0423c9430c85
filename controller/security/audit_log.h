// controller/security/audit_log.h — the audit of mutating calls (docs/security.md,
// Audit): who (principal and role), what (RPC and a short target), how it
// ended and when, one row per call, in the store's audit table.
//
// Bounded: the table keeps the newest `keep` rows (100,000 by default,
// about 10 MB); an older row is pruned by the write that passes the bound,
// so nothing else has to run. Reads are paged (at most 1000 entries a
// call). A failed write is logged and the call's answer stands: the call
// has already happened. Thread-safe (the store is).
#ifndef FLEETBENCH_CONTROLLER_SECURITY_AUDIT_LOG_H_
#define FLEETBENCH_CONTROLLER_SECURITY_AUDIT_LOG_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/clock.h"
#include "controller/security/auth.h"
#include "fleetbench/v1/security.pb.h"
#include "storage/store.h"

namespace fleetbench::controller {

inline constexpr int64_t kDefaultAuditKeep = 100000;
inline constexpr int kMaxAuditTargetLength = 200;

class AuditLog {
 public:
  // Both must outlive it.
  AuditLog(storage::Store* store, Clock* clock, int64_t keep = kDefaultAuditKeep)
      : store_(store), clock_(clock), keep_(keep) {}

  // Writes one row now; the target and message are clipped.
  void Record(const Principal& who, absl::string_view rpc, absl::string_view target,
              const absl::Status& outcome);
  // since_ms 0: all; limit 0: 100, at most 1000 (INVALID_ARGUMENT above).
  absl::StatusOr<v1::ListAuditResponse> List(const v1::ListAuditRequest& request);

 private:
  storage::Store* const store_;
  Clock* const clock_;
  const int64_t keep_;
};

}  // namespace fleetbench::controller

#endif  // FLEETBENCH_CONTROLLER_SECURITY_AUDIT_LOG_H_
