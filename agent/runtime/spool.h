// agent/runtime/spool.h — reports the controller has not acknowledged yet.
//
// Each report is one file <dir>/<report_id>.report, written to a temporary
// name, fsynced and renamed, so a crash leaves either the whole report or
// nothing. A report leaves the spool only when the controller acknowledged
// it, i.e. after the controller's commit: nothing measured is lost across an
// agent or controller crash. Report ids are ULIDs, so file names sort in the
// order the reports were made.
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
  // Creates `dir` if needed.
  static absl::StatusOr<std::unique_ptr<Spool>> Open(const std::string& dir);

  // Durable when it returns OK.
  absl::Status Put(const v1::Report& report);
  // Forgets an acknowledged report; unknown ids are ignored.
  absl::Status Remove(const std::string& report_id);
  // Every spooled report, oldest first. Unreadable files are skipped and
  // named in `errors` (never silently resent half-written).
  std::vector<v1::Report> Pending(std::vector<std::string>* errors = nullptr);
  // Tasks whose final report is still spooled.
  std::set<std::string> FinishedTaskIds();
  size_t size();

 private:
  explicit Spool(std::string dir) : dir_(std::move(dir)) {}
  std::string PathOf(const std::string& report_id) const;

  const std::string dir_;
  absl::Mutex mu_;
};

}  // namespace fleetbench::agent

#endif  // FLEETBENCH_AGENT_RUNTIME_SPOOL_H_
