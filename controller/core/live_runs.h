// controller/core/live_runs.h — the run lifecycle's live state: the runs
// not yet settled and their unfinished tasks (queued, dispatched, running),
// with what each task waits for or last said, and the ends and run states
// the store has not taken yet.
//
// What it owns, by task id unless said:
// - the unfinished tasks and their runs (a run leaves with EraseRun, once
//   every task ended and its state is stored);
// - the latest progress an agent sent for a task;
// - the tasks whose final report a hello promised, with when it is due;
// - the client halves of pairs reserved with their server and waiting for
//   its port;
// - the runs the user cancelled (no next pass of groups is planned);
// - the task ends and run ids whose write failed, kept for the store
//   retry: a lost end would leave its run running forever.
// EndTask drops a task with everything kept about it, so nothing outlives
// its task. The rules of the lifecycle (which state follows which, what a
// task's end does to its run, its pair and its group) are FleetCore's
// (fleet_core_runs.cc); this part only keeps what they decide.
//
// Threading: the core's actor thread only.
#ifndef FLEETBENCH_CONTROLLER_CORE_LIVE_RUNS_H_
#define FLEETBENCH_CONTROLLER_CORE_LIVE_RUNS_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "storage/store.h"

namespace fleetbench::controller {

class LiveRuns {
 public:
  struct Progress {
    std::string benchmark;
    double fraction = 0;
    std::string message;
  };

  // --- Unfinished tasks. ---
  // Task id -> task; FleetCore changes the records in place and walks the
  // map in task id order (which is creation order: ids are ULIDs).
  std::map<std::string, storage::TaskRecord>& tasks() { return tasks_; }
  const std::map<std::string, storage::TaskRecord>& tasks() const { return tasks_; }
  storage::TaskRecord* FindTask(const std::string& task_id);
  const storage::TaskRecord* FindTask(const std::string& task_id) const;
  void AddTask(storage::TaskRecord task);
  // The task ended: it goes, with its progress, its promised report and its
  // wait for a port.
  void EndTask(const std::string& task_id);
  // The newest copy of a task the store holds: unfinished, else ended but
  // not yet stored, else `stored` itself.
  const storage::TaskRecord& Newest(const storage::TaskRecord& stored) const;

  // A task of the node is dispatched or running.
  bool NodeBusy(const std::string& node) const;
  // The ids of the node's tasks past the queue (dispatched or running), in
  // id order: a copy, so that ending one (which may end its pair partner
  // and settle its run) invalidates nothing the caller walks.
  std::vector<std::string> TaskIdsOfNode(const std::string& node) const;
  // The runs with an unfinished task on the node.
  std::set<std::string> RunsOnNode(const std::string& node) const;
  // The run's tasks dispatched or running.
  uint32_t InFlight(const std::string& run_id) const;

  // --- Their runs. ---
  storage::RunRecord* FindRun(const std::string& run_id);
  bool HasRun(const std::string& run_id) const { return runs_.contains(run_id); }
  void AddRun(storage::RunRecord run);
  // The run settled: it goes, with its cancellation by the user.
  void EraseRun(const std::string& run_id);

  // --- What a task said or waits for. ---
  void SetProgress(const std::string& task_id, Progress progress);
  const Progress* ProgressOf(const std::string& task_id) const;
  void PromiseReport(const std::string& task_id, absl::Time due);
  bool ReportPromised(const std::string& task_id) const;
  void ReportCame(const std::string& task_id) { promised_reports_.erase(task_id); }
  // The promised reports due at `now`, in task id order.
  std::vector<std::string> PromisesDue(absl::Time now) const;
  void AwaitPort(const std::string& client_task_id) { awaiting_port_.insert(client_task_id); }
  bool AwaitingPort(const std::string& client_task_id) const {
    return awaiting_port_.contains(client_task_id);
  }
  void PortCame(const std::string& client_task_id) { awaiting_port_.erase(client_task_id); }
  void NoteCancelledByUser(const std::string& run_id) { user_cancelled_.insert(run_id); }
  bool CancelledByUser(const std::string& run_id) const {
    return user_cancelled_.contains(run_id);
  }

  // --- Writes the store refused, for the retry. ---
  void KeepUnstoredEnd(const storage::TaskRecord& ended);
  const storage::TaskRecord* UnstoredEnd(const std::string& task_id) const;
  void EndStored(const std::string& task_id) { unstored_ends_.erase(task_id); }
  std::map<std::string, storage::TaskRecord>& unstored_ends() { return unstored_ends_; }
  void NoteUnsettled(const std::string& run_id) { unsettled_runs_.insert(run_id); }
  void Settled(const std::string& run_id) { unsettled_runs_.erase(run_id); }
  const std::set<std::string>& unsettled_runs() const { return unsettled_runs_; }
  bool HasUnstoredWrites() const { return !unstored_ends_.empty() || !unsettled_runs_.empty(); }

 private:
  std::map<std::string, storage::TaskRecord> tasks_;
  std::map<std::string, storage::RunRecord> runs_;
  std::map<std::string, Progress> progress_;
  std::map<std::string, absl::Time> promised_reports_;
  std::set<std::string> awaiting_port_;
  std::set<std::string> user_cancelled_;
  std::map<std::string, storage::TaskRecord> unstored_ends_;
  std::set<std::string> unsettled_runs_;
};

}  // namespace fleetbench::controller

#endif  // FLEETBENCH_CONTROLLER_CORE_LIVE_RUNS_H_
