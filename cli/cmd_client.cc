// The user commands: nodes, run, results, runs, cancel, rank, history (and
// the connection: cli/client.h).
// Each is a thin call to the controller's Fleet service; --json prints the
// response message with protobuf's JSON printer.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/proto_json.h"
#include "common/suites.h"
#include "common/api_enums.h"
#include "common/api_text.h"
#include "common/reason.h"
#include "common/token.h"
#include "common/wire_limits.h"
#include "diagnosis/finding.h"
#include "fleetbench/v1/fleet_service.grpc.pb.h"
#include "fleetbench/v1/history.pb.h"
#include "fleetbench/v1/node.pb.h"
#include "fleetbench/v1/rank.pb.h"
#include "fleetbench/v1/run.pb.h"
#include "grpcpp/grpcpp.h"
#include "cli/args.h"
#include "cli/client.h"
#include "cli/commands.h"
#include "cli/job_flags.h"
#include "cli/finding_text.h"
#include "cli/group_flags.h"
#include "cli/group_text.h"
#include "cli/interrupt.h"
#include "cli/table.h"
#include "cli/task_logs.h"
#include "cli/usage.h"

namespace fleetbench::cli {
namespace {

// Pairwise results read best as a matrix: one row per listening node, one
// column per connecting node, forward throughput in the cells.
void PrintPairMatrix(const v1::Run& run, const std::string& metric) {
  std::map<std::string, std::map<std::string, double>> cells;  // server -> client -> value
  std::set<std::string> clients;
  for (const v1::Sample& s : run.samples()) {
    auto peer = s.params().find("peer_node");
    if (s.metric() != metric || peer == s.params().end()) continue;
    cells[peer->second][s.node()] = s.value();
    clients.insert(s.node());
  }
  if (cells.empty()) return;
  std::vector<std::string> header = {"LISTENER \\ CONNECTOR"};
  header.insert(header.end(), clients.begin(), clients.end());
  Table table(header);
  for (const auto& [server, row] : cells) {
    std::vector<std::string> line = {server};
    for (const std::string& c : clients) {
      auto it = row.find(c);
      line.push_back(it == row.end() ? "-" : FormatNumber(it->second));
    }
    table.AddRow(line);
  }
  std::cout << "\n" << metric << "\n" << table.Render();
}

void PrintRun(const v1::Run& run) {
  std::cout << "run " << run.run_id() << ": " << RunStateName(run.state());
  if (!run.suite().empty()) std::cout << " (suite " << run.suite() << ")";
  if (!run.schedule().empty()) std::cout << " (schedule " << run.schedule() << ")";
  if (!run.offline_nodes().empty()) {
    std::cout << "\noffline at the start, not in the run: " << absl::StrJoin(run.offline_nodes(), ", ");
  }
  std::cout << "\n\n";
  Table tasks({"NODE", "STATE", "REASON"});
  for (const v1::NodeTask& t : run.tasks()) {
    std::string reason = t.reason();
    for (const auto& o : t.outcomes()) {
      if (o.state() == v1::TASK_STATE_SKIPPED || o.state() == v1::TASK_STATE_FAILED) {
        absl::StrAppend(&reason, reason.empty() ? "" : "; ", o.benchmark(), " ",
                        TaskStateName(o.state()),
                        o.code() == v1::STATUS_CODE_OK ? ""
                                                       : " (" + StatusCodeName(o.code()) + ")",
                        ": ", o.reason());
      }
    }
    tasks.AddRow({t.node(), TaskStateName(t.state()), reason});
  }
  std::cout << tasks.Render();
  if (run.samples_size() > 0) {
    std::cout << "\n";
    Table samples({"NODE", "BENCHMARK", "METRIC", "VALUE", "UNIT", "PARAMS"});
    for (const v1::Sample& s : run.samples()) {
      samples.AddRow({s.node(), s.benchmark(), s.metric(), FormatNumber(s.value()), s.unit(),
                      MeasuredParamsText(s.params())});
    }
    std::cout << samples.Render();
    PrintPairMatrix(run, "net.tcp.Gbps");
  }
  // Group runs (docs/collectives.md): the curve, the scaling table or the isolation
  // passes, and the verdict last, where a user reads it.
  std::cout << RenderGroups(run) << VerdictLine(run);
}

bool RunFailed(const v1::Run& run) {
  if (run.state() == v1::RUN_STATE_FAILED) return true;
  for (const v1::NodeTask& t : run.tasks()) {
    if (t.state() == v1::TASK_STATE_FAILED || t.state() == v1::TASK_STATE_LOST) return true;
  }
  return false;
}

bool RunDone(const v1::Run& run) { return IsTerminal(run.state()); }

// The run with every sample: the controller hands them out a page at a time
// (a run of 200k samples does not fit one message), and the tasks of the
// last page are the newest.
absl::Status GetRunWithSamples(Client* client, const std::string& run_id, v1::Run* run) {
  v1::GetRunRequest request;
  request.set_run_id(run_id);
  request.set_include_samples(true);
  google::protobuf::RepeatedPtrField<v1::Sample> samples;
  while (true) {
    v1::Run page;
    if (absl::Status s = client->Call(&v1::Fleet::Stub::GetRun, request, &page); !s.ok()) {
      return s;
    }
    samples.Reserve(samples.size() + page.samples_size());
    for (v1::Sample& sample : *page.mutable_samples()) samples.Add(std::move(sample));
    if (page.samples_next_page_token().empty()) {
      *run = std::move(page);
      run->mutable_samples()->Swap(&samples);
      return absl::OkStatus();
    }
    request.set_samples_page_token(page.samples_next_page_token());
  }
}

// On a terminal, where the next page starts (--json carries the token).
void PrintNextPage(const std::string& command, const std::string& token) {
  if (!token.empty()) std::cerr << "more: fleetbench " << command << " --page-token " << token << "\n";
}

// How long after a first Ctrl-C a second one cancels the run: a double tap,
// not a second thought.
constexpr absl::Duration kCancelWindow = absl::Seconds(2);
// How long `run --wait` waits on through a controller it cannot reach (a
// restart takes seconds, an upgrade maybe a minute) before it gives up.
constexpr absl::Duration kUnreachablePatience = absl::Minutes(2);

// `run --wait` was interrupted by `sig`: stop waiting and say how to reach the
// run, which goes on. After Ctrl-C, a second one within the window cancels
// the run; SIGTERM (a supervisor, not a person) just ends the wait.
int StopWaiting(Client* client, const std::string& run_id, int sig) {
  std::cerr << "stopped waiting; run " << run_id << " goes on — `fleetbench cancel " << run_id
            << "` stops it, `fleetbench results " << run_id << "` shows it\n";
  if (sig != SIGINT) return ExitCodeForSignal(sig);
  std::cerr << "(Ctrl-C again within " << absl::FormatDuration(kCancelWindow)
            << " cancels it)\n";
  if (WaitForInterrupt(kCancelWindow) == 0) return ExitCodeForSignal(sig);
  v1::CancelRunRequest request;
  request.set_run_id(run_id);
  v1::CancelRunResponse response;
  if (auto s = client->Call(&v1::Fleet::Stub::CancelRun, request, &response); !s.ok()) {
    return Fail("run", "cannot cancel run " + run_id + ": " + std::string(s.message()));
  }
  std::cerr << "cancelling " << run_id << "\n";
  return ExitCodeForSignal(sig);
}

// `fleetbench nodes rm NAME`: beside `nodes`, whose subcommand it is.
int NodesRmCommand(const Argv& argv) {
  int code = 0;
  auto p = Prepare("nodes rm", argv, {kJsonFlag}, 1, &code);
  if (!p) return code;
  v1::RemoveNodeRequest request;
  request.set_name(p->args.positional[0]);
  v1::RemoveNodeResponse response;
  if (auto s = p->client->Call(&v1::Fleet::Stub::RemoveNode, request, &response); !s.ok()) {
    return RemoteError("nodes rm", s);
  }
  if (p->args.Has("json")) {
    std::cout << ToJson(response) << "\n";
    return kExitOk;
  }
  std::cout << "removed " << request.name()
            << (response.history_kept()
                    ? "; its results stay in runs, history and rank under its name"
                    : "; it had run no task, so nothing of it is kept")
            << "\n";
  return kExitOk;
}

// The price cell: "24.5 USD", or "-" when unpriced.
std::string PriceText(double price, const std::string& currency) {
  return price > 0 && !currency.empty() ? FormatNumber(price) + " " + currency : "-";
}

// Where the price came from: "label", "catalog 2025-02-01", "-".
std::string PriceSourceText(const std::string& source, int64_t effective_from_ms) {
  if (source.empty()) return "-";
  if (effective_from_ms == 0) return source;
  return source + " " +
         absl::FormatTime("%Y-%m-%d", absl::FromUnixMillis(effective_from_ms),
                          absl::UTCTimeZone());
}

void PrintNotes(const std::vector<std::pair<std::string, std::string>>& notes) {
  if (notes.empty()) return;
  std::cout << "\nnotes:\n";
  for (const auto& [group, note] : notes) std::cout << "  " << group << ": " << note << "\n";
}

void PrintRanking(const v1::RankResponse& response) {
  const bool profile = !response.profile().empty();
  const std::string unit = profile ? "score" : response.unit();
  // Cost per unit: price per hour over a rate, or times a latency.
  const std::string cost_header =
      profile ? "COST_PER_H_PER_SCORE"
              : (response.higher_is_better() ? "COST_PER_H_PER_" : "COST_PER_H_x_") + unit;
  std::vector<std::string> header = {"#", absl::AsciiStrToUpper(RankGroupingName(response.by())),
                                     "NODES", "RUNS"};
  if (profile) {
    header.push_back("SCORE");
    for (const v1::ProfileMetric& m : response.profile_metrics()) header.push_back(m.metric());
  } else {
    for (const std::string& h : {"MEDIAN_" + unit, std::string("P10"), std::string("P90")}) {
      header.push_back(h);
    }
  }
  for (const char* h : {"PRICE_PER_H", "PRICE_SOURCE"}) header.push_back(h);
  header.push_back(cost_header);
  const bool job = response.has_job();
  if (job) {
    header.push_back("GOODPUT");
    header.push_back("EFFECTIVE_" + cost_header);
  }
  Table table(header);
  std::vector<std::pair<std::string, std::string>> notes;
  int rank = 0;
  for (const v1::RankRow& r : response.rows()) {
    std::vector<std::string> line = {std::to_string(++rank), r.group(),
                                     std::to_string(r.node_count()),
                                     std::to_string(r.run_count())};
    if (profile) {
      line.push_back(r.median() > 0 ? FormatNumber(r.median()) : "-");
      // Each component: the group's median and its score against the fleet.
      for (const v1::ProfileComponent& c : r.components()) {
        line.push_back(c.present() ? FormatNumber(c.median()) + " (x" + FormatNumber(c.score()) + ")"
                                   : "missing");
      }
    } else {
      for (double v : {r.median(), r.p10(), r.p90()}) line.push_back(FormatNumber(v));
    }
    line.push_back(PriceText(r.price_per_hour(), r.currency()));
    line.push_back(PriceSourceText(r.price_source(), r.price_effective_from_unix_ms()));
    line.push_back(r.priced() ? FormatNumber(r.cost_per_unit()) : "-");
    if (job) {
      line.push_back(GoodputText(r.job()));
      line.push_back(r.job().effective_cost_per_unit() > 0
                         ? FormatNumber(r.job().effective_cost_per_unit())
                         : "-");
    }
    table.AddRow(line);
    if (!r.price_note().empty()) notes.emplace_back(r.group(), r.price_note());
  }
  if (profile) {
    std::cout << "rank by profile " << response.profile() << ", " << PriceKindName(response.price())
              << " prices; score = weighted geometric mean of each metric over its fleet median "
                 "(higher is better)\n";
    for (const v1::ProfileMetric& m : response.profile_metrics()) {
      std::cout << "  " << m.metric() << " weight " << absl::StrFormat("%g", m.weight()) << ", fleet median "
                << (m.node_count() > 0 ? FormatNumber(m.fleet_median()) + " " + m.unit()
                                       : std::string("- (no node measured it)"))
                << ", " << (m.higher_is_better() ? "higher" : "lower") << " is better\n";
    }
  } else {
    std::cout << "rank by " << response.metric() << " ("
              << (response.higher_is_better() ? "higher" : "lower") << " is better), "
              << PriceKindName(response.price()) << " prices\n";
  }
  std::cout << table.Render();
  if (job) std::cout << JobLegend(response.job());
  PrintNotes(notes);
}

}  // namespace

int NodesCommand(const Argv& argv) {
  if (!argv.empty() && argv[0] == "rm") return NodesRmCommand(Argv(argv.begin() + 1, argv.end()));
  if (!argv.empty() && argv[0] == "revoke") {
    return NodesRevokeCommand(Argv(argv.begin() + 1, argv.end()));
  }
  int code = 0;
  auto p = Prepare("nodes", argv, {kJsonFlag}, 0, &code);
  if (!p) return code;
  v1::ListNodesResponse response;
  if (auto s = p->client->Call(&v1::Fleet::Stub::ListNodes, v1::ListNodesRequest(), &response);
      !s.ok()) {
    return RemoteError("nodes", s);
  }
  if (p->args.Has("json")) {
    std::cout << ToJson(response) << "\n";
    return kExitOk;
  }
  if (!response.store_error().empty()) {
    // On stderr, so the table stays what scripts parse; --json has it too.
    const absl::Time since = absl::FromUnixMillis(response.store_failing_since_unix_ms());
    std::cerr << "warning: the controller cannot write its history since "
              << absl::FormatTime("%Y-%m-%d %H:%M:%S UTC", since, absl::UTCTimeZone()) << " ("
              << absl::FormatDuration(absl::Trunc(absl::Now() - since, absl::Seconds(1)))
              << "): " << response.store_error() << "; " << response.reports_held()
              << " report(s) held unacknowledged and retried until stored\n";
  }
  // Each node's worst finding (docs/findings.md); the nodes still print when
  // the controller cannot say.
  v1::ListFindingsResponse findings;
  const absl::Status judged =
      p->client->Call(&v1::Fleet::Stub::ListFindings, v1::ListFindingsRequest(), &findings);
  Table table({"NAME", "STATUS", "CPU", "CORES", "MEMORY_GiB", "WORST_FINDING", "LABELS"});
  for (const v1::Node& n : response.nodes()) {
    table.AddRow({n.name(), NodeStatusName(n.status()), n.facts().cpu().model(),
                  std::to_string(n.facts().cpu().logical_cores()),
                  FormatNumber(static_cast<double>(n.facts().memory_total_bytes()) / (1 << 30)),
                  judged.ok() ? diagnosis::WorstFindingOf(findings, n.name()) : "?", LabelsText(n.labels())});
  }
  std::cout << table.Render();
  if (!judged.ok()) std::cerr << "fleetbench nodes: no findings: " << judged.message() << "\n";
  return kExitOk;
}

int RunCommand(const Argv& argv) {
  std::vector<FlagSpec> flags = {
      {"bench", true, false, "benchmarks to run, NAME[,NAME...]"},
      {"suite", true, false, "a named suite instead of --bench (quick, full)"},
      {"param", true, true, "BENCH.KEY=VALUE, e.g. gemm.sizes=1024"},
      {"nodes", true, false, "NAME,... (default: every online node)"},
      {"select", true, true, "key=value label filter"},
      {"max-parallel", true, false, "at most N nodes measure at once (nodes sharing a host: 1)"},
      {"wait", false, false,
       "follow progress, then print the results; Ctrl-C stops waiting (the run goes on), "
       "twice within 2s cancels the run"},
      {"timeout", true, false, "with --wait: give up after this long (default 1h)"},
      {"bench-timeout", true, false,
       "cancel each benchmark that runs longer, e.g. 10m (default: each plugin's own)"},
      kJsonFlag};
  for (FlagSpec& f : GroupFlags()) flags.push_back(std::move(f));
  int code = 0;
  auto p = Prepare("run", argv, flags, 0, &code);
  if (!p) return code;
  const Args& args = p->args;
  v1::StartRunRequest request;
  if (args.Has("bench") == args.Has("suite")) {
    return Usage("run", "give exactly one of --bench or --suite", flags);
  }
  if (args.Has("suite")) {
    auto suite = FindSuite(args.Get("suite"));
    if (!suite.ok()) return Usage("run", std::string(suite.status().message()), flags);
    for (const auto& spec : suite->benchmarks) *request.add_benchmarks() = spec;
    request.set_suite(suite->name);
  } else {
    for (const std::string& name : SplitList(args.Get("bench"))) {
      request.add_benchmarks()->set_name(name);
    }
    if (request.benchmarks().empty()) return Usage("run", "--bench is empty", flags);
  }
  for (const std::string& kv : args.All("param")) {
    auto pair = ParseKeyValue(kv);
    const size_t dot = pair.ok() ? pair->first.find('.') : std::string::npos;
    if (dot == std::string::npos) {
      return Usage("run", "--param wants BENCH.KEY=VALUE, got '" + ClipInput(kv) + "'", flags);
    }
    const std::string bench = pair->first.substr(0, dot);
    bool found = false;
    for (auto& spec : *request.mutable_benchmarks()) {
      if (spec.name() == bench) {
        (*spec.mutable_params())[pair->first.substr(dot + 1)] = pair->second;
        found = true;
      }
    }
    if (!found) {
      return Usage("run", "--param names benchmark '" + ClipInput(bench) + "' that is not in the run",
                   flags);
    }
  }
  for (const std::string& n : SplitList(args.Get("nodes"))) request.add_nodes(n);
  for (const std::string& kv : args.All("select")) {
    auto pair = ParseKeyValue(kv);
    if (!pair.ok()) return Usage("run", "--select " + std::string(pair.status().message()), flags);
    (*request.mutable_select_labels())[pair->first] = pair->second;
  }
  if (args.Has("max-parallel")) {
    uint32_t n = 0;
    if (!absl::SimpleAtoi(args.Get("max-parallel"), &n) || n > 100000) {
      return Usage("run", "--max-parallel wants a count", flags);
    }
    request.set_max_parallel(n);
  }
  if (args.Has("bench-timeout")) {
    absl::Duration bench_timeout;
    if (!absl::ParseDuration(args.Get("bench-timeout"), &bench_timeout) ||
        bench_timeout < absl::Milliseconds(1)) {
      return Usage("run", "--bench-timeout wants a duration like 10m or 500ms", flags);
    }
    for (auto& spec : *request.mutable_benchmarks()) {
      spec.set_timeout_ms(absl::ToInt64Milliseconds(bench_timeout));
    }
  }
  absl::StatusOr<std::optional<v1::GroupOptions>> group = GroupOptionsFromArgs(args);
  if (!group.ok()) return Usage("run", std::string(group.status().message()), flags);
  if (group->has_value()) *request.mutable_group() = **group;
  absl::Duration timeout = absl::Hours(1);
  if (args.Has("timeout") &&
      (!absl::ParseDuration(args.Get("timeout"), &timeout) || timeout <= absl::ZeroDuration())) {
    return Usage("run", "--timeout wants a duration like 10m", flags);
  }
  // The bounds the controller enforces, checked before sending megabytes.
  if (absl::Status s = CheckStartRunBounds(request); !s.ok()) {
    return Usage("run", std::string(s.message()), flags);
  }
  v1::StartRunResponse started;
  if (auto s = p->client->Call(&v1::Fleet::Stub::StartRun, request, &started); !s.ok()) {
    // The controller refused what was asked (an unknown benchmark or node,
    // a parameter its plugin rejects): a usage error, and no run was stored.
    return RemoteError("run", s);
  }
  const bool json = args.Has("json");
  if (!args.Has("wait")) {
    if (json) {
      std::cout << ToJson(started) << "\n";
    } else {
      std::cout << started.run_id() << "\n";
    }
    return kExitOk;
  }
  if (!json) {
    std::cerr << "run " << started.run_id() << " on " << absl::StrJoin(started.nodes(), ", ")
              << "\n";
  }
  const bool tty = isatty(STDERR_FILENO);
  const absl::Time give_up = absl::Now() + timeout;
  v1::GetRunRequest get;
  get.set_run_id(started.run_id());
  v1::Run run;
  std::string last_line;
  // Since when the controller has not answered (a restart, say): the run
  // goes on without it, so the wait does too, for a while.
  std::optional<absl::Time> unreachable_since;
  while (true) {
    if (auto s = p->client->Call(&v1::Fleet::Stub::GetRun, get, &run); !s.ok()) {
      const absl::Time now = absl::Now();
      if (!absl::IsUnavailable(s) || now > give_up ||
          (unreachable_since && now - *unreachable_since > kUnreachablePatience)) {
        if (!json && tty) std::cerr << "\n";
        return RemoteError("run", s);
      }
      if (!unreachable_since) {
        unreachable_since = now;
        if (!json) {
          std::cerr << (tty ? "\n" : "") << s.message() << "; still waiting for run "
                    << started.run_id() << " (it goes on without the controller) for up to "
                    << absl::FormatDuration(kUnreachablePatience) << "\n";
        }
        last_line.clear();
      }
      p->client->Redial();
      // A pause between dials, not a synchronisation point.
      if (const int sig = WaitForInterrupt(absl::Seconds(1)); sig != 0) {
        return StopWaiting(&*p->client, started.run_id(), sig);
      }
      continue;
    }
    if (unreachable_since && !json) {
      std::cerr << "controller back after "
                << absl::FormatDuration(absl::Trunc(absl::Now() - *unreachable_since,
                                                    absl::Milliseconds(100)))
                << "\n";
    }
    unreachable_since.reset();
    if (RunDone(run)) break;
    if (absl::Now() > give_up) {
      return Fail("run", "timed out waiting for run " + run.run_id() + " (still " +
                             RunStateName(run.state()) + ")");
    }
    // Live progress: one line per change, redrawn in place on a terminal.
    std::vector<std::string> parts;
    for (const v1::NodeTask& t : run.tasks()) {
      std::string part = t.node() + " " + TaskStateName(t.state());
      if (t.state() == v1::TASK_STATE_RUNNING && !t.progress_benchmark().empty()) {
        absl::StrAppend(&part, " ", t.progress_benchmark(), " ",
                        static_cast<int>(t.progress_fraction() * 100), "%");
      }
      parts.push_back(part);
    }
    // A group run has a task per member of every group: count groups instead.
    const std::string group_line = GroupProgressLine(run);
    const std::string line = group_line.empty() ? absl::StrJoin(parts, " | ") : group_line;
    if (!json && line != last_line) {
      if (tty) {
        std::cerr << "\r\033[K" << line << std::flush;
      } else {
        std::cerr << line << "\n";
      }
      last_line = line;
    }
    // Polling the controller: a client-side refresh interval, not a
    // synchronisation point. Ctrl-C or SIGTERM ends it at once.
    if (const int sig = WaitForInterrupt(absl::Milliseconds(300)); sig != 0) {
      if (!json && tty) std::cerr << "\n";
      return StopWaiting(&*p->client, started.run_id(), sig);
    }
  }
  if (!json && tty) std::cerr << "\r\033[K";
  if (auto s = GetRunWithSamples(&*p->client, started.run_id(), &run); !s.ok()) {
    return RemoteError("run", s);
  }
  if (json) {
    std::cout << ToJson(run) << "\n";
  } else {
    PrintRun(run);
  }
  if (RunFailed(run)) return kExitFailure;
  // --isolate named a bad node or link: a script gating a training job on
  // the check stops here, as on a critical finding of `probe`.
  if (run.isolation().bad_nodes_size() > 0 || run.isolation().bad_links_size() > 0) {
    return kExitCritical;
  }
  return kExitOk;
}

int ResultsCommand(const Argv& argv) {
  int code = 0;
  const std::vector<FlagSpec> flags = {
      kJsonFlag,
      {"log", false, false,
       "each task's log too: the end (64 KiB) of what its benchmarks printed, such as a "
       "workload's output"}};
  auto p = Prepare("results", argv, flags, 1, &code);
  if (!p) return code;
  v1::Run run;
  if (auto s = GetRunWithSamples(&*p->client, p->args.positional[0], &run); !s.ok()) {
    return RemoteError("results", s);
  }
  const bool logs = p->args.Has("log");
  if (logs) {
    if (auto s = AddTaskLogs(&*p->client, &run); !s.ok()) return RemoteError("results", s);
  }
  if (p->args.Has("json")) {
    std::cout << ToJson(run) << "\n";
    return kExitOk;
  }
  PrintRun(run);
  if (logs) PrintTaskLogs(run);
  // What the controller concludes from this run (`fleetbench findings --run
  // RUN --json` for scripts).
  v1::ListFindingsRequest judge;
  judge.set_run_id(run.run_id());
  v1::ListFindingsResponse findings;
  if (auto s = p->client->Call(&v1::Fleet::Stub::ListFindings, judge, &findings); !s.ok()) {
    std::cerr << "fleetbench results: no findings: " << s.message() << "\n";
  } else if (findings.findings().empty()) {
    std::cout << "\nfindings: none\n";
  } else {
    std::cout << "\nfindings:\n" << RenderFindings(findings);
  }
  return kExitOk;
}

int RunsCommand(const Argv& argv) {
  int code = 0;
  const std::vector<FlagSpec> flags = {
      kJsonFlag,
      {"limit", true, false, "how many, newest first (default 20, at most 1000)"},
      {"page-token", true, false, "the next page, as a previous call printed it"}};
  auto p = Prepare("runs", argv, flags, 0, &code);
  if (!p) return code;
  v1::ListRunsRequest request;
  uint32_t limit = 20;
  if (p->args.Has("limit") && !absl::SimpleAtoi(p->args.Get("limit"), &limit)) {
    return Usage("runs", "--limit wants a count", flags);
  }
  request.set_page_size(limit);
  request.set_page_token(p->args.Get("page-token"));
  v1::ListRunsResponse response;
  if (auto s = p->client->Call(&v1::Fleet::Stub::ListRuns, request, &response); !s.ok()) {
    return RemoteError("runs", s);
  }
  if (p->args.Has("json")) {
    std::cout << ToJson(response) << "\n";
    return kExitOk;
  }
  Table table({"RUN", "STATE", "CREATED", "BENCHMARKS"});
  for (const v1::Run& r : response.runs()) {
    std::vector<std::string> names;
    for (const auto& b : r.benchmarks()) names.push_back(b.name());
    table.AddRow({r.run_id(), RunStateName(r.state()),
                  absl::FormatTime("%Y-%m-%d %H:%M:%S", absl::FromUnixMillis(r.created_unix_ms()),
                                   absl::UTCTimeZone()),
                  absl::StrJoin(names, ",")});
  }
  std::cout << table.Render();
  PrintNextPage("runs", response.next_page_token());
  return kExitOk;
}

int CancelCommand(const Argv& argv) {
  int code = 0;
  auto p = Prepare("cancel", argv, {}, 1, &code);
  if (!p) return code;
  v1::CancelRunRequest request;
  request.set_run_id(p->args.positional[0]);
  v1::CancelRunResponse response;
  if (auto s = p->client->Call(&v1::Fleet::Stub::CancelRun, request, &response); !s.ok()) {
    return RemoteError("cancel", s);
  }
  std::cout << "cancelling " << request.run_id() << "\n";
  return kExitOk;
}

int RankCommand(const Argv& argv) {
  std::vector<FlagSpec> flags = {
      {"metric", true, false, "metric to rank by, e.g. gemm.cpu.fp32.tflops"},
      {"profile", true, false,
       "rank by a named mix of metrics instead: cpu, io, training (docs/ranking.md)"},
      {"by", true, false, "node, instance_type, region or provider (default node)"},
      {"price", true, false, "on_demand or spot (default on_demand)"},
      WindowFlag("7 days"),
      kJsonFlag};
  AddJobFlags(flags);
  int code = 0;
  auto p = Prepare("rank", argv, flags, 0, &code);
  if (!p) return code;
  v1::RankRequest request;
  request.set_metric(p->args.Get("metric"));
  request.set_profile(p->args.Get("profile"));
  if (request.metric().empty() == request.profile().empty()) {
    return Usage("rank", "give --metric or --profile (one of them)", flags);
  }
  absl::StatusOr<v1::RankGrouping> by = ParseRankGrouping(p->args.Get("by", "node"));
  if (!by.ok()) return Usage("rank", "--" + std::string(by.status().message()), flags);
  request.set_by(*by);
  absl::StatusOr<v1::PriceKind> price = ParsePriceKind(p->args.Get("price", "on_demand"));
  if (!price.ok()) return Usage("rank", "--" + std::string(price.status().message()), flags);
  request.set_price(*price);
  absl::StatusOr<int64_t> window_ms = WindowMillis(p->args);
  if (!window_ms.ok()) return Usage("rank", std::string(window_ms.status().message()), flags);
  request.set_window_ms(*window_ms);
  absl::StatusOr<std::optional<v1::JobShape>> job = JobFromFlags(p->args);
  if (!job.ok()) return Usage("rank", std::string(job.status().message()), flags);
  if (*job) *request.mutable_job() = **job;
  v1::RankResponse response;
  if (auto s = p->client->Call(&v1::Fleet::Stub::Rank, request, &response); !s.ok()) {
    return RemoteError("rank", s);
  }
  if (p->args.Has("json")) {
    std::cout << ToJson(response) << "\n";
  } else {
    PrintRanking(response);
  }
  return kExitOk;
}

int HistoryCommand(const Argv& argv) {
  const std::vector<FlagSpec> flags = {{"node", true, false, "node name"},
                                       {"metric", true, false, "metric name"},
                                       {"limit", true, false, "newest N (default 100)"},
                                       {"page-token", true, false,
                                        "the next page, as a previous call printed it"},
                                       kJsonFlag};
  int code = 0;
  auto p = Prepare("history", argv, flags, 0, &code);
  if (!p) return code;
  v1::HistoryRequest request;
  request.set_node(p->args.Get("node"));
  request.set_metric(p->args.Get("metric"));
  if (request.node().empty() || request.metric().empty()) {
    return Usage("history", "--node and --metric are required", flags);
  }
  uint32_t limit = 100;
  if (p->args.Has("limit") && !absl::SimpleAtoi(p->args.Get("limit"), &limit)) {
    return Usage("history", "--limit wants a count", flags);
  }
  request.set_page_size(limit);
  request.set_page_token(p->args.Get("page-token"));
  v1::HistoryResponse response;
  if (auto s = p->client->Call(&v1::Fleet::Stub::History, request, &response); !s.ok()) {
    return RemoteError("history", s);
  }
  if (p->args.Has("json")) {
    std::cout << ToJson(response) << "\n";
    return kExitOk;
  }
  Table table({"TIME", "RUN", "VALUE", "UNIT", "PARAMS"});
  for (const v1::Sample& s : response.samples()) {
    table.AddRow({absl::FormatTime("%Y-%m-%d %H:%M:%S", absl::FromUnixMillis(s.time_unix_ms()),
                                   absl::UTCTimeZone()),
                  s.run_id(), FormatNumber(s.value()), s.unit(), MeasuredParamsText(s.params())});
  }
  std::cout << table.Render();
  PrintNextPage("history --node " + request.node() + " --metric " + request.metric(),
                response.next_page_token());
  return kExitOk;
}

}  // namespace fleetbench::cli
