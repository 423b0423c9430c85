// `fleetbench probe`: the five-minute check for a machine just rented. Runs
// the suite in this process, no controller, prints facts and results, then
// the node rules' findings (diagnosis/node_rules.h) and a verdict, and exits
// with a code a script can act on (docs/findings.md, "Exit codes").
#include <atomic>
#include <iostream>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "agent/benchmarks/disk_common/scratch_path.h"
#include "agent/benchmarks/registry.h"
#include "agent/facts/facts.h"
#include "agent/facts/gpu_facts.h"
#include "agent/runtime/task_runner.h"
#include "common/proto_json.h"
#include "common/suites.h"
#include "common/api_enums.h"
#include "common/ulid.h"
#include "diagnosis/finding.h"
#include "diagnosis/node_rules.h"
#include "fleetbench/v1/probe.pb.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/finding_text.h"
#include "cli/table.h"
#include "cli/usage.h"
#include "common/reason.h"

namespace fleetbench::cli {
namespace {

constexpr char kExitCodesHelp[] =
    "exit codes: 0 PASS or WARN (warnings only), 3 FAIL with a critical finding,\n"
    "1 a benchmark failed (and no critical finding), 2 usage; see docs/findings.md\n";

// The verdict and exit code of a probe: a critical finding outranks a failed
// benchmark (it says why not to train here); a failed benchmark is FAIL too,
// since the probe could not check what it was asked to.
void Judge(v1::ProbeReport* report) {
  std::vector<v1::Finding> findings(report->findings().begin(), report->findings().end());
  const diagnosis::Verdict verdict = diagnosis::VerdictOf(findings);
  bool failed = false;
  for (const auto& o : report->outcomes()) failed |= o.state() == v1::TASK_STATE_FAILED;
  if (verdict == diagnosis::Verdict::kFail) {
    report->set_exit_code(kExitCritical);
  } else if (failed) {
    report->set_exit_code(kExitFailure);
  } else {
    report->set_exit_code(kExitOk);
  }
  report->set_verdict(failed ? "FAIL" : diagnosis::VerdictName(verdict));
}

std::string VerdictLine(const v1::ProbeReport& report) {
  std::map<v1::Severity, int> counts;
  for (const v1::Finding& f : report.findings()) ++counts[f.severity()];
  std::vector<std::string> failed;
  for (const auto& o : report.outcomes()) {
    if (o.state() == v1::TASK_STATE_FAILED) failed.push_back(o.benchmark());
  }
  std::string line = absl::StrCat(
      "verdict: ", report.verdict(), " (", counts[v1::SEVERITY_CRITICAL], " critical, ",
      counts[v1::SEVERITY_WARNING], " warning, ", counts[v1::SEVERITY_INFO], " info");
  if (!failed.empty()) {
    absl::StrAppend(&line, "; failed: ", absl::StrJoin(failed, ", "));
  }
  return line + ")";
}

}  // namespace

int ProbeCommand(const Argv& argv) {
  const std::vector<FlagSpec> flags = {
      {"bench", true, false, "benchmarks, NAME[,NAME...] (default: the quick suite)"},
      {"suite", true, false, "a named suite (quick, full)"},
      {"param", true, true, "BENCH.KEY=VALUE"},
      {"scratch", true, false, "folder benchmarks may write to (default /var/tmp/fleetbench-probe)"},
      {"label", true, true,
       "KEY=VALUE the rules read, as an agent's labels: spot=true (node.preemptible), "
       "gpus=N (gpu.none when NVML sees none)"},
      {"json", false, false, "print protobuf JSON"}};
  auto args = ParseArgs(argv, flags);
  auto usage = [&](const std::string& error) {
    const int code = UsageError("probe", error, flags);
    // The exit codes are part of the probe's interface: --help lists them.
    if (error == "help") std::cout << kExitCodesHelp;
    return code;
  };
  if (!args.ok()) return usage(std::string(args.status().message()));
  if (!args->positional.empty()) return usage("unexpected argument " + ClipInput(args->positional[0]));
  if (args->Has("bench") && args->Has("suite")) return usage("give --bench or --suite, not both");
  v1::RunTask task;
  task.set_task_id(NewUlid());
  task.set_run_id("probe");
  if (args->Has("bench")) {
    for (const std::string& name : SplitList(args->Get("bench"))) {
      task.add_benchmarks()->set_name(name);
    }
  } else {
    auto suite = FindSuite(args->Get("suite", "quick"));
    if (!suite.ok()) return usage(std::string(suite.status().message()));
    for (const auto& spec : suite->benchmarks) *task.add_benchmarks() = spec;
  }
  for (const std::string& kv : args->All("param")) {
    auto pair = ParseKeyValue(kv);
    const size_t dot = pair.ok() ? pair->first.find('.') : std::string::npos;
    if (dot == std::string::npos) return usage("--param wants BENCH.KEY=VALUE, got '" + ClipInput(kv) + "'");
    bool found = false;
    for (auto& spec : *task.mutable_benchmarks()) {
      if (spec.name() == pair->first.substr(0, dot)) {
        (*spec.mutable_params())[pair->first.substr(dot + 1)] = pair->second;
        found = true;
      }
    }
    if (!found) return usage("--param names a benchmark that is not in the probe");
  }
  std::map<std::string, std::string> labels;
  for (const std::string& kv : args->All("label")) {
    auto pair = ParseKeyValue(kv);
    if (!pair.ok()) return usage("--label " + std::string(pair.status().message()));
    labels[pair->first] = pair->second;
  }
  const std::string scratch = args->Get("scratch", "/var/tmp/fleetbench-probe");
  if (absl::Status s = agent::CreateScratchDirs(scratch); !s.ok()) {
    std::cerr << "fleetbench probe: scratch folder: " << s.message() << "\n";
    return kExitFailure;
  }
  const bool json = args->Has("json");
  v1::ProbeReport report;
  agent::FactsOptions facts_options;
  facts_options.scratch_dir = scratch;
  *report.mutable_facts() = agent::ReadNodeFacts(facts_options);
  gpu::FillGpuFacts(report.mutable_facts());
  agent::TaskRunner runner(agent::MakeAllBenchmarks(), scratch);
  std::atomic<bool> cancelled{false};
  agent::TaskRunner::Hooks hooks;
  hooks.report = [&](const v1::Report& r) {
    for (const auto& s : r.samples()) *report.add_samples() = s;
    for (const auto& o : r.outcomes()) *report.add_outcomes() = o;
  };
  hooks.progress = [&](const v1::Progress& p) {
    if (!json) {
      std::cerr << "  " << p.benchmark() << " " << static_cast<int>(p.fraction() * 100) << "% "
                << p.message() << "\n";
    }
  };
  runner.Execute(task, cancelled, hooks);
  diagnosis::NodeEvidence evidence;
  evidence.node = report.facts().hostname();
  evidence.facts = report.facts();
  evidence.labels = labels;
  evidence.run_id = task.run_id();
  evidence.samples.assign(report.samples().begin(), report.samples().end());
  evidence.outcomes.assign(report.outcomes().begin(), report.outcomes().end());
  evidence.time_unix_ms = absl::ToUnixMillis(absl::Now());
  for (v1::Finding& finding : diagnosis::DiagnoseNode(evidence)) {
    *report.add_findings() = std::move(finding);
  }
  Judge(&report);
  if (json) {
    std::cout << ToJson(report) << "\n";
    return report.exit_code();
  }
  const v1::NodeFacts& f = report.facts();
  std::cout << f.hostname() << ": " << f.cpu().model() << ", " << f.cpu().logical_cores()
            << " logical cores, " << FormatNumber(static_cast<double>(f.memory_total_bytes()) / (1 << 30))
            << " GiB, kernel " << f.kernel() << (f.virtualization().hypervisor() ? ", virtualised" : "")
            << "\n";
  if (f.gpus().empty()) {
    std::cout << "GPUs: none (" << f.gpu_unavailable_reason() << ")\n";
  }
  for (const v1::GpuFacts& g : f.gpus()) {
    std::cout << "GPU " << g.index() << ": " << g.name() << " " << g.uuid() << "\n";
  }
  std::cout << "\n";
  Table outcomes({"BENCHMARK", "STATE", "REASON"});
  for (const auto& o : report.outcomes()) {
    outcomes.AddRow({o.benchmark(), TaskStateName(o.state()), o.reason()});
  }
  std::cout << outcomes.Render() << "\n";
  Table samples({"METRIC", "VALUE", "UNIT", "SPREAD"});
  for (const auto& s : report.samples()) {
    auto spread = s.params().find("spread");
    samples.AddRow({s.metric(), FormatNumber(s.value()), s.unit(),
                    spread == s.params().end() ? "" : spread->second});
  }
  std::cout << samples.Render() << "\n";
  std::cout << "findings:" << (report.findings().empty() ? " none\n" : "\n");
  for (const v1::Finding& finding : report.findings()) std::cout << FormatFinding(finding);
  std::cout << VerdictLine(report) << "\n";
  return report.exit_code();
}

}  // namespace fleetbench::cli
