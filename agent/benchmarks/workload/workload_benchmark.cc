// The `workload` plugin: a declared command run by name, its own output
// read as metrics.
#include "agent/benchmarks/workload/workload_benchmark.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "agent/benchmarks/workload_output/loadgen_summary.h"
#include "agent/benchmarks/workload_output/metric_line.h"
#include "agent/benchmarks/workload_output/mllog.h"
#include "agent/benchmarks/workload_process/workload_process.h"
#include "common/workload_params.h"

namespace fleetbench::agent {
namespace {

// The last `n` non-empty lines of `tail`, joined with " | ": enough of a
// failing command's output for the reason to say why.
std::string LastLines(const std::string& tail, size_t n) {
  std::vector<std::string> lines;
  for (absl::string_view line : absl::StrSplit(tail, '\n')) {
    if (!line.empty()) lines.emplace_back(line);
  }
  if (lines.size() > n) lines.erase(lines.begin(), lines.end() - static_cast<long>(n));
  std::string out;
  for (const std::string& line : lines) {
    if (!out.empty()) out += " | ";
    out += line.substr(0, 200);
  }
  return out;
}

// Reads a workload's stdout line by line: metric lines and MLLOG lines
// become metrics; the first malformed metric line is remembered by number.
class OutputReader {
 public:
  void Line(absl::string_view line) {
    ++line_number_;
    if (IsMetricLine(line)) {
      absl::StatusOr<WorkloadMetric> m = ParseMetricLine(line);
      if (m.ok()) {
        metrics_.push_back(*std::move(m));
      } else if (first_bad_.ok()) {
        first_bad_ = absl::InvalidArgumentError(
            absl::StrCat("stdout line ", line_number_, ": ", m.status().message()));
      }
      return;
    }
    mllog_.AddLine(line);
  }
  // The metric lines' metrics, then the MLPerf log's.
  std::vector<WorkloadMetric> Metrics() const {
    std::vector<WorkloadMetric> all = metrics_;
    for (WorkloadMetric& m : mllog_.Metrics()) all.push_back(std::move(m));
    return all;
  }
  const absl::Status& first_bad() const { return first_bad_; }

 private:
  int line_number_ = 0;
  std::vector<WorkloadMetric> metrics_;
  MllogReader mllog_;
  absl::Status first_bad_;
};

// The LoadGen summary at `path`, at most 1 MiB of it.
absl::StatusOr<LoadgenSummary> ReadLoadgenSummary(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("no LoadGen summary at ", path));
  std::string text(1 << 20, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  absl::StatusOr<LoadgenSummary> summary = ParseLoadgenSummary(text);
  if (!summary.ok()) {
    return absl::Status(summary.status().code(),
                        absl::StrCat(path, ": ", summary.status().message()));
  }
  return summary;
}

}  // namespace

absl::Status WorkloadBenchmark::Probe() const {
  if (!workloads_.empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(
      "no workload is declared on this node (agent --workload-dir DIR, one DIR/NAME.json each; "
      "docs/workloads.md)");
}

const Workload* WorkloadBenchmark::Find(const Params& params) const {
  auto name = params.find(kWorkloadNameParam);
  if (name == params.end()) return nullptr;
  for (const Workload& w : workloads_) {
    if (w.name == name->second) return &w;
  }
  return nullptr;
}

absl::Status WorkloadBenchmark::ValidateParams(const Params& params) const {
  auto name = params.find(kWorkloadNameParam);
  if (name == params.end()) {
    return absl::InvalidArgumentError(
        "which workload? (--param workload.name=NAME; `fleetbench nodes --json` lists each "
        "node's)");
  }
  if (absl::Status s = CheckWorkloadName(name->second); !s.ok()) return s;
  if (workloads_.empty()) return absl::OkStatus();  // the controller's copy
  const Workload* w = Find(params);
  if (w == nullptr) {
    std::vector<std::string> names;
    for (const Workload& d : workloads_) names.push_back(d.name);
    return absl::InvalidArgumentError(absl::StrCat("no workload '", name->second,
                                                   "' on this node; it declares ",
                                                   absl::StrJoin(names, ", ")));
  }
  return ResolveWorkloadParams(w->Declaration(), params).status();
}

void WorkloadBenchmark::Describe(v1::Capability* capability) const {
  for (const Workload& w : workloads_) *capability->add_workloads() = w.Declaration();
}

absl::Duration WorkloadBenchmark::DefaultTimeout(const Params& params) const {
  const Workload* w = Find(params);
  return w == nullptr ? absl::Hours(1) : w->Timeout();
}

absl::StatusOr<std::vector<v1::Sample>> WorkloadBenchmark::Run(const Params& params,
                                                               const RunContext& context) {
  if (absl::Status valid = ValidateParams(params); !valid.ok()) return valid;
  const Workload& workload = *Find(params);
  absl::StatusOr<std::map<std::string, std::string>> values =
      ResolveWorkloadParams(workload.Declaration(), params);
  if (!values.ok()) return values.status();

  WorkloadCommand command;
  command.argv = ExpandCommand(workload.manifest, *values);
  command.cwd = workload.manifest.cwd().empty() ? context.scratch_dir() : workload.manifest.cwd();
  command.env.insert(workload.manifest.env().begin(), workload.manifest.env().end());
  // The runner's deadline (the run's timeout, else the manifest's) is the
  // command's; cancelled() covers both it and a cancel by the user.
  if (context.deadline() != absl::InfiniteFuture()) {
    command.timeout = std::max(context.deadline() - absl::Now(), absl::Milliseconds(1));
  }
  OutputReader output;
  context.ReportProgress(0, absl::StrCat("running ", workload.name));
  absl::StatusOr<WorkloadExit> exit = RunWorkload(
      command, [&context] { return context.cancelled(); },
      [&output](std::string_view line) {
        output.Line(absl::string_view(line.data(), line.size()));
      });
  if (!exit.ok()) {
    return absl::Status(exit.status().code(),
                        absl::StrCat("workload ", workload.name, ": ", exit.status().message()));
  }

  const std::string prefix = absl::StrCat(kWorkloadMetricPrefix, workload.name, ".");
  std::map<std::string, std::string> sample_params = *values;
  sample_params["work_unit"] = workload.manifest.work_unit();
  std::vector<v1::Sample> samples;
  auto add = [&](const std::string& metric, double value, const std::string& unit,
                 v1::MetricDirection direction, const std::string& description) {
    v1::MetricDescriptor d;
    d.set_name(prefix + metric);
    d.set_unit(unit);
    d.set_direction(direction);
    d.set_description(description);
    context.DeclareMetric(d);
    v1::Sample& s = samples.emplace_back();
    s.set_metric(d.name());
    s.set_value(value);
    s.set_unit(unit);
    s.mutable_params()->insert(sample_params.begin(), sample_params.end());
  };
  for (const WorkloadMetric& m : output.Metrics()) {
    add(m.name, m.value, m.unit, m.direction,
        absl::StrCat("reported by workload ", workload.name));
  }
  absl::Status summary_error;
  if (!workload.manifest.loadgen_summary().empty() && !exit->cancelled && !exit->timed_out) {
    absl::StatusOr<LoadgenSummary> summary =
        ReadLoadgenSummary(command.cwd + "/" + workload.manifest.loadgen_summary());
    if (summary.ok()) {
      // An INVALID result (LoadGen's own constraints unmet) is kept, and
      // says so on its samples.
      sample_params["loadgen_result"] = summary->result_valid ? "VALID" : "INVALID";
      sample_params["loadgen_scenario"] = summary->scenario;
      for (const WorkloadMetric& m : summary->metrics) {
        add(m.name, m.value, m.unit, m.direction,
            absl::StrCat("from workload ", workload.name, "'s LoadGen summary"));
      }
      sample_params.erase("loadgen_result");
      sample_params.erase("loadgen_scenario");
    } else {
      summary_error = summary.status();
    }
  }
  add("wall_s", absl::ToDoubleSeconds(exit->wall), "s", v1::METRIC_DIRECTION_LOWER_IS_BETTER,
      "wall time of the workload's command");
  // What the node did meanwhile, from the process group itself.
  if (exit->wall > absl::ZeroDuration()) {
    add("cpu_cores", exit->cpu_seconds / absl::ToDoubleSeconds(exit->wall), "cores",
        v1::METRIC_DIRECTION_LOWER_IS_BETTER,
        "CPU the workload's processes used, in cores busy on average (user + system over wall)");
  }
  add("peak_rss_mb", static_cast<double>(exit->peak_rss_bytes) / 1e6, "MB",
      v1::METRIC_DIRECTION_LOWER_IS_BETTER, "peak resident memory of the workload's processes");
  if (exit->first_output != absl::InfiniteDuration()) {
    // When the agent read the first output, so a command that printed and
    // exited before the read would show set-up past its end: capped there.
    add("setup_s", absl::ToDoubleSeconds(std::min(exit->first_output, exit->wall)), "s",
        v1::METRIC_DIRECTION_LOWER_IS_BETTER, "time from the workload's start to its first output");
  }

  std::string failure;
  if (exit->cancelled || exit->timed_out) {
    failure = "stopped";  // the runner says why (the deadline or the user)
  } else if (exit->signal != 0) {
    failure = absl::StrCat("killed by signal ", exit->signal);
  } else if (exit->exit_code != 0) {
    failure = absl::StrCat("exited with status ", exit->exit_code);
  }
  if (!failure.empty()) {
    context.KeepSamples(std::move(samples));
    const std::string last = LastLines(exit->tail, 3);
    const std::string why = absl::StrCat("workload ", workload.name, " ", failure,
                                         last.empty() ? "" : absl::StrCat(": ", last));
    return exit->cancelled || exit->timed_out ? absl::CancelledError(why)
                                              : absl::InternalError(why);
  }
  if (!summary_error.ok()) {
    context.KeepSamples(std::move(samples));
    return absl::Status(summary_error.code(), absl::StrCat("workload ", workload.name, ": ",
                                                           summary_error.message()));
  }
  if (!output.first_bad().ok()) {
    context.KeepSamples(std::move(samples));
    return absl::InvalidArgumentError(
        absl::StrCat("workload ", workload.name, ": ", output.first_bad().message()));
  }
  return samples;
}

}  // namespace fleetbench::agent
