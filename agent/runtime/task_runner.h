// agent/runtime/task_runner.h — executes one RunTask: each benchmark in
// order, probing first, turning every outcome into a durable Report.
// Each benchmark runs under a deadline (the spec's timeout_ms, else the
// plugin's DefaultTimeout); one that runs past it is cancelled and ends
// FAILED with code DEADLINE_EXCEEDED and the timeout in its reason.
//
// Groups: in a task with RunTask.group, each collective() benchmark sees
// RunContext::group() (rank, members, deadline, Hooks::rendezvous); a
// benchmark that is not collective, or a collective one in a task without
// a group, runs as it would alone (group() is null).
//
// The runner never special-cases a benchmark name. Thread-compatible: one
// Execute() at a time (one benchmark at a time per node).
#ifndef FLEETBENCH_AGENT_RUNTIME_TASK_RUNNER_H_
#define FLEETBENCH_AGENT_RUNTIME_TASK_RUNNER_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "agent/benchmarks/benchmark.h"
#include "fleetbench/v1/agent.pb.h"

namespace fleetbench::agent {

class TaskRunner {
 public:
  struct Hooks {
    // Called with each report, in order; the last has task_finished set.
    std::function<void(const v1::Report&)> report;
    std::function<void(const v1::Progress&)> progress;
    // For pairwise benchmarks: the listening side is ready on `port`.
    // Unset (e.g. in `fleetbench probe`): pairwise benchmarks cannot run.
    std::function<absl::Status(const std::string& task_id, int port)> publish_port;
    // For a group task (RunTask.group): where its collective benchmarks meet
    // the other members (the agent's relay over its stream). Null: a
    // collective benchmark in a group task is skipped.
    Rendezvous* rendezvous = nullptr;
  };

  TaskRunner(std::vector<std::unique_ptr<Benchmark>> benchmarks, std::string scratch_dir);

  // Folders benchmarks may read besides the scratch folder (the agent's
  // --dataset-root; RunContext::dataset_roots). Set before the first task.
  void set_dataset_roots(std::vector<std::string> roots) { dataset_roots_ = std::move(roots); }

  // Every benchmark: AVAILABLE when Probe() passed, else UNAVAILABLE and
  // why; pairwise or not; its default timeout; the metrics it declares
  // (each descriptor names the benchmark), whether available or not.
  std::vector<v1::Capability> Capabilities() const;
  // Runs the task to the end (or until `cancelled`), reporting through hooks.
  void Execute(const v1::RunTask& task, const std::atomic<bool>& cancelled,
               const Hooks& hooks);

 private:
  Benchmark* Find(const std::string& name) const;

  std::vector<std::unique_ptr<Benchmark>> benchmarks_;
  std::string scratch_dir_;
  std::vector<std::string> dataset_roots_;
};

// The report that ends a task without running it (e.g. cancelled while
// still queued on the agent). The reason is cut to kMaxReasonLength.
v1::Report FinalReport(const std::string& task_id, v1::TaskState state,
                       const std::string& reason,
                       const std::vector<v1::BenchmarkOutcome>& outcomes,
                       const std::string& log = "");

// The end of `log`, made valid UTF-8, that fits kMaxTaskLogBytes: from a
// line start when it holds one, else from a character start.
std::string LogTail(absl::string_view log);

// Task state from its benchmark outcomes: cancelled if any was cancelled,
// failed if any failed, skipped if all were skipped, else succeeded.
v1::TaskState TaskStateFromOutcomes(const std::vector<v1::BenchmarkOutcome>& outcomes);

}  // namespace fleetbench::agent

#endif  // FLEETBENCH_AGENT_RUNTIME_TASK_RUNNER_H_
