// agent/benchmarks/benchmark.h — the benchmark plugin interface.
//
// A benchmark is one small class with a permanent name (history is stored
// under it), a Probe() that says whether it can run on this node, the
// metrics it emits (metrics()), and a Run() that measures and returns
// samples. The runner never special-cases a name: adding a benchmark is a
// folder plus one line in registry.cc (docs/adding-a-benchmark.md).
//
// Metrics: each plugin declares every metric its samples may carry, with
// unit, direction and a one-line description (MetricInfo below, a plain
// struct of string literals so a plugin's table is a static array). The
// agent sends them with its capabilities; the controller stores them and
// ranks by the unit and direction declared here, never by parsing a name.
// docs/metrics.md lists the same rows; agent/benchmarks/registry_test.cc
// fails when the two disagree. Metric names are permanent keys like plugin
// names.
//
// Errors: Probe() returns FAILED_PRECONDITION with the reason when the node
// lacks what the benchmark needs (no GPU, no RDMA device); the runner reports
// that as "skipped". Run() returns INVALID_ARGUMENT for bad parameters,
// CANCELLED when the context was cancelled, anything else as "failed". The
// outcome carries the code beside the reason.
//
// Time: every run has a deadline (the spec's timeout, else the plugin's
// DefaultTimeout()). Past it, context.cancelled() turns true, as for a
// cancel by the user; the runner then reports DEADLINE_EXCEEDED. A plugin
// therefore needs no timer of its own, only to poll cancelled().
//
// Thread safety: one Run() at a time per node (the runner guarantees it);
// Run() may use as many threads as it likes internally.
//
// Groups: a collective() benchmark in a group run is one task per member
// node, started together by the controller; each member's Run() sees
// context.group() (its rank, the members, the group's deadline) and meets
// the others through group()->rendezvous, a key-value store the controller
// keeps for the group. Rank 0 reports the group's samples; the others
// report only what is theirs alone (docs/collectives.md).
#ifndef FLEETBENCH_AGENT_BENCHMARKS_BENCHMARK_H_
#define FLEETBENCH_AGENT_BENCHMARKS_BENCHMARK_H_

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "fleetbench/v1/agent.pb.h"
#include "fleetbench/v1/metric.pb.h"
#include "fleetbench/v1/result.pb.h"

namespace fleetbench::agent {

// The key-value store the members of one group meet through (the
// controller's relay over the agent stream; an in-process one in tests).
// Keys are scoped to the group. Thread-safe.
class Rendezvous {
 public:
  virtual ~Rendezvous() = default;
  // Makes `value` (at most 64 KiB) visible to every member under `key`
  // (1..256 bytes); a second Set replaces it.
  virtual absl::Status Set(const std::string& key, const std::string& value) = 0;
  // The value under `key`, waiting up to `timeout` for a member to set it:
  // DEADLINE_EXCEEDED when none did in time, CANCELLED when the run was
  // cancelled, ABORTED when the group ended, PERMISSION_DENIED when this
  // task is not (or no longer) a member of a running group.
  virtual absl::StatusOr<std::string> Get(const std::string& key, absl::Duration timeout) = 0;
};

// Where this task stands in its group (RunContext::group()).
struct GroupContext {
  std::string group_id;
  int rank = 0;  // 0..size-1
  int size = 1;
  std::vector<std::string> member_nodes;      // rank order
  std::vector<std::string> member_addresses;  // where peers reach each member
  // The group's one deadline (the controller cancels every member past it).
  absl::Time deadline = absl::InfiniteFuture();
  Rendezvous* rendezvous = nullptr;  // never null in a group task
};

// What Run() gets from the runner besides its parameters.
class RunContext {
 public:
  using ProgressFn = std::function<void(double fraction, const std::string&)>;
  // For benchmarks between two nodes: the listening side announces the port
  // it listens on; the controller hands "<address>:<port>" to the peer as its
  // "peer" parameter (address: the agent's --advertise-addr, else the address
  // its stream came from).
  using PublishPortFn = std::function<absl::Status(int port)>;
  using KeepSamplesFn = std::function<void(std::vector<v1::Sample>)>;
  using DeclareMetricFn = std::function<void(const v1::MetricDescriptor&)>;
  using KeepLogFn = std::function<void(std::string)>;

  RunContext(std::string scratch_dir, const std::atomic<bool>* cancelled,
             ProgressFn progress, PublishPortFn publish_port = nullptr,
             KeepSamplesFn keep_samples = nullptr, DeclareMetricFn declare_metric = nullptr)
      : scratch_dir_(std::move(scratch_dir)),
        cancelled_(cancelled),
        progress_(std::move(progress)),
        publish_port_(std::move(publish_port)),
        keep_samples_(std::move(keep_samples)),
        declare_metric_(std::move(declare_metric)) {}

  // The only folder a benchmark may write to.
  const std::string& scratch_dir() const { return scratch_dir_; }
  // True once the user cancelled or the deadline passed: stop and return
  // CANCELLED.
  bool cancelled() const {
    return (cancelled_ != nullptr && cancelled_->load()) || deadline_passed();
  }
  // The runner sets it before Run(); InfiniteFuture() means none.
  void set_deadline(absl::Time deadline) { deadline_ = deadline; }
  absl::Time deadline() const { return deadline_; }
  bool deadline_passed() const {
    return deadline_ != absl::InfiniteFuture() && absl::Now() >= deadline_;
  }
  // fraction in [0,1] of this benchmark's work.
  void ReportProgress(double fraction, const std::string& message) const {
    if (progress_) progress_(fraction, message);
  }
  // FAILED_PRECONDITION when the runner offers no way to publish (probe).
  absl::Status PublishPort(int port) const {
    if (!publish_port_) {
      return absl::FailedPreconditionError("this runner cannot pair with a peer");
    }
    return publish_port_(port);
  }
  // Folders besides the scratch folder that this node's operator lets
  // benchmarks READ (agent --dataset-root: a mounted dataset); empty: none.
  // Only the agent's own configuration sets them, never a run's parameters,
  // so a controller cannot make an agent read an arbitrary path.
  void set_dataset_roots(std::vector<std::string> roots) {
    dataset_roots_ = std::move(roots);
  }
  const std::vector<std::string>& dataset_roots() const { return dataset_roots_; }
  // For a collective benchmark in a group task: the group; nullptr when it
  // runs alone (a group of one). Set by the runner before Run().
  void set_group(const GroupContext* group) { group_ = group; }
  const GroupContext* group() const { return group_; }
  // Samples that must be stored even when Run() then fails: the evidence
  // behind the failure (the stress probe's throughput and checksum count of
  // a GPU that gave a wrong answer). The runner stores them under the
  // failed benchmark; on success, beside the samples Run() returns. Dropped
  // where the runner keeps nothing (probe --json prints only successes).
  void KeepSamples(std::vector<v1::Sample> samples) const {
    if (keep_samples_) keep_samples_(std::move(samples));
  }
  // For a plugin whose metrics are known only when it runs
  // (Benchmark::dynamic_metric_prefix): declares one before its samples
  // go out; the runner sends it with them. A name outside the prefix is
  // refused by the controller.
  void DeclareMetric(const v1::MetricDescriptor& metric) const {
    if (declare_metric_) declare_metric_(metric);
  }
  // What the benchmark printed that a user may want to read (a workload's
  // output that is not metrics): the runner keeps its end
  // (kMaxTaskLogBytes) as the task's log, stored with the task. Dropped
  // where the runner keeps none.
  void set_keep_log(KeepLogFn keep_log) { keep_log_ = std::move(keep_log); }
  void KeepLog(std::string text) const {
    if (keep_log_) keep_log_(std::move(text));
  }

 private:
  std::string scratch_dir_;
  const std::atomic<bool>* cancelled_;
  ProgressFn progress_;
  PublishPortFn publish_port_;
  KeepSamplesFn keep_samples_;
  DeclareMetricFn declare_metric_;
  KeepLogFn keep_log_;
  absl::Time deadline_ = absl::InfiniteFuture();
  const GroupContext* group_ = nullptr;
  std::vector<std::string> dataset_roots_;
};

// One metric a plugin emits. The strings must live as long as the plugin
// (string literals in every real one, so a table can be a constexpr array);
// callers copy what they keep.
struct MetricInfo {
  const char* name;  // dotted, unit last: "gemm.cpu.fp32.tflops"
  const char* unit;  // the samples' unit, the name's ending: "tflops"
  v1::MetricDirection direction;
  const char* description;  // one line, as in docs/metrics.md
};
inline constexpr v1::MetricDirection kHigherIsBetter =
    v1::METRIC_DIRECTION_HIGHER_IS_BETTER;
inline constexpr v1::MetricDirection kLowerIsBetter =
    v1::METRIC_DIRECTION_LOWER_IS_BETTER;

// Parameters as given by the user or a suite; all strings on the wire.
using Params = std::map<std::string, std::string>;

class Benchmark {
 public:
  virtual ~Benchmark() = default;

  // Permanent key, e.g. "gemm". Never rename: history is stored under it.
  virtual std::string name() const = 0;
  // OK, or FAILED_PRECONDITION with the reason it cannot run here.
  virtual absl::Status Probe() const = 0;
  // Checks parameters without running (INVALID_ARGUMENT with a message a
  // user can act on). The controller calls it before it stores a run (the
  // fleetbench binary links every plugin) and the agent again before Run(),
  // so it reads only the parameters, never the machine.
  virtual absl::Status ValidateParams(const Params& params) const = 0;
  // Every metric Run() may emit (a sample of any other metric is a bug the
  // plugin's tests catch). The same list on every node and every call.
  virtual std::vector<MetricInfo> metrics() const = 0;
  // True for benchmarks between two nodes: the controller runs them as a
  // pair of tasks with params role=server and role=client, peer=HOST:PORT.
  virtual bool pairwise() const { return false; }
  // True for collective benchmarks: in a group run, one task per member
  // node started together, meeting through RunContext::group().
  virtual bool collective() const { return false; }
  // Non-empty for a plugin whose metric names are known only at run time
  // (a workload's own): every such name begins with it, and Run()
  // declares each through RunContext::DeclareMetric. metrics() lists the
  // fixed ones, if any.
  virtual std::string dynamic_metric_prefix() const { return ""; }
  // Adds what else the node's hello should say of this plugin to its
  // capability (the workload plugin: the workloads declared on the node).
  virtual void Describe(v1::Capability* capability) const { (void)capability; }
  // How long a run with these (valid) parameters may take before the runner
  // cancels it, unless the run sets its own timeout. Generous: it catches a
  // benchmark that hangs, not one that is slow. Plugins whose length
  // depends on a parameter (a stress duration) override it.
  virtual absl::Duration DefaultTimeout(const Params& params) const {
    (void)params;
    return absl::Minutes(30);
  }
  // Measures. Returned samples carry metric, value, unit and params; the
  // runner fills id, run, node, benchmark and time.
  virtual absl::StatusOr<std::vector<v1::Sample>> Run(
      const Params& params, const RunContext& context) = 0;
};

// The benchmark's declaration of `metric`, or nullopt when it declares no
// such metric (plugin tests check every sample against it).
inline std::optional<MetricInfo> DeclaredMetric(const Benchmark& benchmark,
                                                std::string_view metric) {
  for (const MetricInfo& m : benchmark.metrics()) {
    if (metric == m.name) return m;
  }
  return std::nullopt;
}

}  // namespace fleetbench::agent

#endif  // FLEETBENCH_AGENT_BENCHMARKS_BENCHMARK_H_
