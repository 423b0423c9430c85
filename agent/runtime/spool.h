// agent/runtime/spool.h — reports the controller has not acknowledged yet.
//
// Each report is one file <dir>/<report_id>.report, written to a temporary
// name, fsynced and renamed, so a crash leaves either the whole report or
// nothing. A report leaves the spool only when the controller acknowledged
// it, i.e. after the controller's commit: nothing measured is lost across an
// agent or controller crash. Report ids are ULIDs, so file names sort in the
// order the reports were made.
//
// File format: "FBSPOOL1", the payload's length (8 bytes, little-endian),
// its CRC-32 (4 bytes, little-endian), then the serialized Report. A file
// that does not check out — truncated (even where the rest would parse as
// a shorter report), 0 bytes, a bad checksum, not a Report, a name that is
// not <ULID>.report or a report whose id is not its name — is neither
// resent (the controller would refuse it forever) nor silently kept: it is
// moved to <dir>/quarantine/ with one log line saying why, for an operator
// to look at. Files an older agent wrote (no header) are resent when they
// parse and carry their own name's id.
//
// Open refuses a folder it cannot write to (FAILED_PRECONDITION): an agent
// that cannot spool would lose what it measures at its next crash.
//
// Thread-safe.
#ifndef FLEETBENCH_AGENT_RUNTIME_SPOOL_H_
#define FLEETBENCH_AGENT_RUNTIME_SPOOL_H_

#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "fleetbench/v1/agent.pb.h"

namespace fleetbench::agent {

class Spool {
 public:
  // Creates `dir` if needed and proves it writable (a probe file written,
  // fsynced and removed).
  static absl::StatusOr<std::unique_ptr<Spool>> Open(const std::string& dir);

  // Durable when it returns OK.
  absl::Status Put(const v1::Report& report);
  // Forgets an acknowledged report; unknown ids are ignored.
  absl::Status Remove(const std::string& report_id);
  // Every spooled report, oldest first. Files that do not check out are
  // quarantined (see above), logged, and named in `errors`.
  std::vector<v1::Report> Pending(std::vector<std::string>* errors = nullptr);
  // Tasks whose final report is still spooled.
  std::set<std::string> FinishedTaskIds();
  size_t size();

  // The spool's file image of `report` and back; Decode says what is wrong.
  static std::string Encode(const v1::Report& report);
  static absl::StatusOr<v1::Report> Decode(const std::string& bytes);

 private:
  explicit Spool(std::string dir) : dir_(std::move(dir)) {}
  std::string PathOf(const std::string& report_id) const;
  // Moves `name` into quarantine/ and logs `why`; returns the line logged.
  std::string QuarantineLocked(const std::string& name, const std::string& why)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::string dir_;
  absl::Mutex mu_;
};

}  // namespace fleetbench::agent

#endif  // FLEETBENCH_AGENT_RUNTIME_SPOOL_H_
