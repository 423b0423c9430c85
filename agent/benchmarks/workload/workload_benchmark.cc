// The `workload` plugin: a declared command run by name, its own output
// read as metrics.
#include "agent/benchmarks/workload/workload_benchmark.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "agent/benchmarks/workload/disk_activity.h"
#include "agent/benchmarks/workload_output/loadgen_summary.h"
#include "agent/benchmarks/workload_output/metric_line.h"
#include "agent/benchmarks/workload_output/mllog.h"
#include "agent/benchmarks/workload_process/secret_names.h"
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

// The metric names the plugin writes itself, with every run: a workload's
// own line may not take them.
bool IsFixedMetric(const std::string& name) {
  return name == "wall_s" || name == "setup_s" || name == "cpu_cores" ||
         name == "peak_rss_mb" || name == "disk_read_MBps" || name == "disk_busy_pct";
}

// Reads a workload's stdout line by line: metric lines and MLLOG lines
// become metrics; the first malformed or refused metric line is remembered
// by number, and lines past the bounds are dropped (the first says so).
class OutputReader {
 public:
  void Line(absl::string_view line) {
    ++line_number_;
    if (IsMetricLine(line)) {
      absl::StatusOr<WorkloadMetric> m = ParseMetricLine(line);
      if (m.ok()) m = Admit(*std::move(m));
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
  // The metric, or why its line is refused: a name the plugin writes
  // itself, a unit other than the one the name first came with, or a line
  // past the bounds on names and samples.
  absl::StatusOr<WorkloadMetric> Admit(WorkloadMetric m) {
    if (IsFixedMetric(m.name)) {
      return absl::InvalidArgumentError(
          absl::StrCat("metric name ", m.name, " is the plugin's own (every run has it)"));
    }
    auto unit = units_.find(m.name);
    if (unit == units_.end()) {
      if (units_.size() >= kMaxWorkloadMetricNames) {
        return absl::ResourceExhaustedError(absl::StrCat(
            "more than ", kMaxWorkloadMetricNames, " metric names; ", m.name, " is dropped"));
      }
      unit = units_.emplace(m.name, m.unit).first;
    } else if (unit->second != m.unit) {
      return absl::InvalidArgumentError(absl::StrCat("metric ", m.name, " came in ",
                                                     unit->second, " before, now in ", m.unit));
    }
    if (metrics_.size() >= kMaxWorkloadSamples) {
      return absl::ResourceExhaustedError(
          absl::StrCat("more than ", kMaxWorkloadSamples, " metric lines; the rest are dropped"));
    }
    return m;
  }

  int line_number_ = 0;
  std::vector<WorkloadMetric> metrics_;
  std::map<std::string, std::string> units_;  // metric name -> its first unit
  MllogReader mllog_;
  absl::Status first_bad_;
};

// The LoadGen summary at `path`, at most 1 MiB of it: a regular file the
// command wrote, never one a link points at.
absl::StatusOr<LoadgenSummary> ReadLoadgenSummary(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0 && errno == ELOOP) {
    return absl::FailedPreconditionError(
        absl::StrCat("the LoadGen summary at ", path, " is a symbolic link; not followed"));
  }
  if (fd < 0) {
    return absl::NotFoundError(absl::StrCat("no LoadGen summary at ", path, " (",
                                            std::strerror(errno), ")"));
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return absl::FailedPreconditionError(
        absl::StrCat("the LoadGen summary at ", path, " is not a regular file"));
  }
  std::string text(1 << 20, '\0');
  size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = read(fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  close(fd);
  text.resize(got);
  absl::StatusOr<LoadgenSummary> summary = ParseLoadgenSummary(text);
  if (!summary.ok()) {
    return absl::Status(summary.status().code(),
                        absl::StrCat(path, ": ", summary.status().message()));
  }
  return summary;
}

// What a workload printed with the value of every manifest env variable
// whose name looks like a secret written as "(secret)", should it echo its
// environment. Values under 4 bytes are left: "1" or "on" would mask half
// the output and hide nothing.
std::string MaskSecrets(const std::string& output, const v1::WorkloadManifest& manifest) {
  std::string masked = output;
  for (const auto& [name, value] : manifest.env()) {
    if (value.size() >= 4 && LooksLikeSecret(name)) {
      masked = absl::StrReplaceAll(masked, {{value, "(secret)"}});
    }
  }
  return masked;
}

// The task's log: the (masked) output without the metric lines, which are
// stored as samples.
std::string TaskLog(const std::string& masked) {
  std::string log;
  for (absl::string_view line : absl::StrSplit(masked, '\n')) {
    if (IsMetricLine(line)) continue;
    absl::StrAppend(&log, line, "\n");
  }
  if (!log.empty()) log.pop_back();  // the split's last piece had no '\n'
  return log;
}

// The resolved values a sample carries: a long one (a path, a list) would
// repeat in every sample; the run's spec keeps it whole.
std::map<std::string, std::string> SampleParams(const std::map<std::string, std::string>& values,
                                                const std::string& work_unit) {
  std::map<std::string, std::string> params;
  for (const auto& [key, value] : values) {
    if (value.size() <= kMaxWorkloadValueOnSample) params[key] = value;
  }
  params["work_unit"] = work_unit;
  return params;
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
  if (workloads_.empty()) return CheckNamed(params);  // the controller's copy
  return Resolve(params).status();
}

absl::Status WorkloadBenchmark::CheckNamed(const Params& params) const {
  auto name = params.find(kWorkloadNameParam);
  return CheckNamedWorkload(name == params.end() ? nullptr : &name->second);
}

absl::StatusOr<WorkloadBenchmark::Resolved> WorkloadBenchmark::Resolve(
    const Params& params) const {
  if (absl::Status s = CheckNamed(params); !s.ok()) return s;
  const Workload* w = Find(params);
  if (w == nullptr) {
    std::vector<std::string> names;
    for (const Workload& d : workloads_) names.push_back(d.name);
    return absl::InvalidArgumentError(absl::StrCat("no workload '",
                                                   params.at(kWorkloadNameParam),
                                                   "' on this node; it declares ",
                                                   absl::StrJoin(names, ", ")));
  }
  absl::StatusOr<std::map<std::string, std::string>> values =
      ResolveWorkloadParams(w->Declaration(), params);
  if (!values.ok()) return values.status();
  return Resolved{w, *std::move(values)};
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
  absl::StatusOr<Resolved> resolved = Resolve(params);
  if (!resolved.ok()) return resolved.status();
  const Workload& workload = *resolved->workload;
  const std::map<std::string, std::string>& values = resolved->values;

  WorkloadCommand command;
  command.argv = ExpandCommand(workload.manifest, values);
  command.cwd = workload.manifest.cwd().empty() ? context.scratch_dir() : workload.manifest.cwd();
  // A summary left by an earlier run must not pass for this one's.
  std::string summary_path;
  if (!workload.manifest.loadgen_summary().empty()) {
    summary_path = command.cwd + "/" + workload.manifest.loadgen_summary();
    if (unlink(summary_path.c_str()) != 0 && errno != ENOENT) {
      return absl::FailedPreconditionError(absl::StrCat(
          "workload ", workload.name, ": cannot remove the earlier LoadGen summary ",
          summary_path, ": ", std::strerror(errno)));
    }
  }
  command.env.insert(workload.manifest.env().begin(), workload.manifest.env().end());
  // The runner's deadline (the run's timeout, else the manifest's) is the
  // command's; cancelled() covers both it and a cancel by the user.
  if (context.deadline() != absl::InfiniteFuture()) {
    command.timeout = std::max(context.deadline() - absl::Now(), absl::Milliseconds(1));
  }
  OutputReader output;
  // The disks under its cwd and the node's datasets, bracketing the run.
  std::vector<std::string> data_folders = {command.cwd};
  data_folders.insert(data_folders.end(), context.dataset_roots().begin(),
                      context.dataset_roots().end());
  const DiskActivityMeter disks(data_folders);
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

  // Masked once: the log and a failure's reason both quote it.
  const std::string printed = MaskSecrets(exit->tail, workload.manifest);
  context.KeepLog(TaskLog(printed));

  const std::string prefix = absl::StrCat(kWorkloadMetricPrefix, workload.name, ".");
  std::map<std::string, std::string> sample_params =
      SampleParams(values, workload.manifest.work_unit());
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
  // Only a command that ended well wrote a whole summary.
  const bool ended_well = !exit->cancelled && !exit->timed_out && exit->signal == 0 &&
                          exit->exit_code == 0;
  if (!summary_path.empty() && ended_well) {
    absl::StatusOr<LoadgenSummary> summary = ReadLoadgenSummary(summary_path);
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
  for (const DiskActivity& disk : disks.Finish()) {
    sample_params["device"] = disk.device;
    add("disk_read_MBps", disk.read_MBps, "MBps", v1::METRIC_DIRECTION_HIGHER_IS_BETTER,
        "bytes read from the block device under the workload's data while it ran (the whole "
        "device's, from its kernel counters)");
    add("disk_busy_pct", disk.busy_pct, "pct", v1::METRIC_DIRECTION_LOWER_IS_BETTER,
        "share of the workload's run that the block device under its data had I/O in flight");
    sample_params.erase("device");
  }
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
    const std::string last = LastLines(printed, 3);
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
