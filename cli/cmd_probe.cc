// `fleetbench probe`: the five-minute check for a machine just rented. Runs
// the suite in this process, no controller, and prints facts and results.
#include <atomic>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "agent/benchmarks/host/scratch_path.h"
#include "agent/benchmarks/registry.h"
#include "agent/benchmarks/gpu/gpu_findings.h"
#include "agent/facts/facts.h"
#include "agent/facts/gpu_facts.h"
#include "agent/runtime/task_runner.h"
#include "common/proto_json.h"
#include "common/suites.h"
#include "common/api_enums.h"
#include "common/ulid.h"
#include "fleetbench/v1/probe.pb.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/table.h"
#include "cli/usage.h"
#include "common/reason.h"

namespace fleetbench::cli {

int ProbeCommand(const Argv& argv) {
  const std::vector<FlagSpec> flags = {
      {"bench", true, false, "benchmarks, NAME[,NAME...] (default: the quick suite)"},
      {"suite", true, false, "a named suite (quick, full)"},
      {"param", true, true, "BENCH.KEY=VALUE"},
      {"scratch", true, false, "folder benchmarks may write to (default /var/tmp/fleetbench-probe)"},
      {"json", false, false, "print protobuf JSON"}};
  auto args = ParseArgs(argv, flags);
  auto usage = [&](const std::string& error) { return UsageError("probe", error, flags); };
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
  bool failed = false;
  for (const auto& o : report.outcomes()) failed |= o.state() == v1::TASK_STATE_FAILED;
  if (json) {
    std::cout << ToJson(report) << "\n";
    return failed ? kExitFailure : kExitOk;
  }
  const v1::NodeFacts& f = report.facts();
  std::cout << f.hostname() << ": " << f.cpu().model() << ", " << f.cpu().logical_cores()
            << " logical cores, " << FormatNumber(static_cast<double>(f.memory_total_bytes()) / (1 << 30))
            << " GiB, kernel " << f.kernel() << (f.virtualization().hypervisor() ? ", virtualised" : "")
            << "\n";
  for (const auto& d : f.pcie_devices()) {
    if (d.degraded()) {
      std::cout << "finding: PCIe " << d.address() << " runs at " << d.current_link_speed() << " x"
                << d.current_link_width() << " of " << d.max_link_speed() << " x"
                << d.max_link_width() << "\n";
    }
  }
  if (f.gpus().empty()) {
    std::cout << "GPUs: none (" << f.gpu_unavailable_reason() << ")\n";
  }
  for (const v1::GpuFacts& g : f.gpus()) {
    std::cout << "GPU " << g.name() << " " << g.uuid() << "\n";
    for (const std::string& finding : gpu::DiagnoseGpu(g)) {
      std::cout << "finding: " << finding << "\n";
    }
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
  std::cout << samples.Render();
  return failed ? kExitFailure : kExitOk;
}

}  // namespace fleetbench::cli
