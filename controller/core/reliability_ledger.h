// controller/core/reliability_ledger.h — what the controller sees of each
// node's reliability, on its way to the store (docs/reliability.md): the
// time each node is online, and each interruption with its kind.
//
// Time online: each time a node is heard, the time since it was last heard
// counts, at most one heartbeat timeout (a node silent longer was offline
// for the rest), on the UTC day it was heard. A node the ledger has not
// heard since this controller started counts from its first message, so a
// controller that was down charges the nodes nothing: neither time online
// nor an interruption. Interruptions are whatever the core says happened.
//
// Writes: interruptions at the next Flush (every sweep), time online when
// its last write is older than the Flush's `uptime_age` (the sweep's: a
// minute, one short transaction, so a SIGKILL loses at most that much; a
// read's: a few seconds, so what it reads is that fresh), both at once. A
// write that fails keeps everything for the next Flush (logged once until
// one succeeds); while the store stays down, at most
// kMaxPendingInterruptions are kept, the oldest dropped.
//
// Threading: the core's actor thread only.
#ifndef FLEETBENCH_CONTROLLER_CORE_RELIABILITY_LEDGER_H_
#define FLEETBENCH_CONTROLLER_CORE_RELIABILITY_LEDGER_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "fleetbench/v1/reliability.pb.h"
#include "storage/store.h"

namespace fleetbench::controller {

inline constexpr size_t kMaxPendingInterruptions = 10'000;

class ReliabilityLedger {
 public:
  // `store` must outlive this.
  ReliabilityLedger(storage::Store* store, absl::Duration heartbeat_timeout);

  // The node was heard at `now` (a hello or any message).
  void Heard(const std::string& node, absl::Time now);
  // The node is gone (offline, preempted, removed): its time online ends
  // where it was last heard.
  void Gone(const std::string& node);
  // Records an interruption of `node` at `when`.
  void Interrupted(const std::string& node, absl::Time when, v1::InterruptionKind kind,
                   std::string detail);

  // Writes what is due at `now` (see Writes above): the interruptions, and
  // the time online when its last write is at least `uptime_age` old
  // (zero: now, as at shutdown).
  void Flush(absl::Time now, absl::Duration uptime_age);

 private:
  storage::Store* const store_;
  const absl::Duration heartbeat_timeout_;
  std::map<std::string, absl::Time> last_heard_;
  std::map<std::pair<std::string, int64_t>, int64_t> online_ms_;  // (node, day) -> ms
  std::vector<storage::InterruptionRecord> interruptions_;
  absl::Time last_uptime_write_ = absl::InfinitePast();
  bool failing_ = false;
};

}  // namespace fleetbench::controller

#endif  // FLEETBENCH_CONTROLLER_CORE_RELIABILITY_LEDGER_H_
