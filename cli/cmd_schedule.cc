// fleetbench schedule add | list | rm | run | history: runs the controller
// starts by itself on a cron expression (docs/schedules.md). The cron
// expression and the time zone are checked here first (exit 2 before any
// call) and again by the controller.
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "cli/args.h"
#include "cli/client.h"
#include "cli/commands.h"
#include "cli/table.h"
#include "cli/usage.h"
#include "common/api_enums.h"
#include "common/cron.h"
#include "common/proto_json.h"
#include "common/reason.h"
#include "common/suites.h"
#include "common/wire_limits.h"
#include "fleetbench/v1/fleet_service.grpc.pb.h"
#include "fleetbench/v1/schedule.pb.h"

namespace fleetbench::cli {
namespace {

constexpr char kAdd[] = "schedule add";
constexpr char kList[] = "schedule list";
constexpr char kRm[] = "schedule rm";
constexpr char kRun[] = "schedule run";
constexpr char kHistory[] = "schedule history";

absl::TimeZone ZoneOf(const std::string& name) {
  absl::StatusOr<absl::TimeZone> zone = LoadScheduleTimeZone(name);
  return zone.ok() ? *zone : absl::UTCTimeZone();
}

std::string When(int64_t unix_ms, absl::TimeZone zone) {
  if (unix_ms == 0) return "-";
  return absl::FormatTime("%Y-%m-%d %H:%M %Z", absl::FromUnixMillis(unix_ms), zone);
}

// A table cell: "-" where the firing has no outcome yet.
std::string OutcomeCell(v1::FiringOutcome outcome) {
  return outcome == v1::FIRING_OUTCOME_UNSPECIFIED ? "-" : FiringOutcomeName(outcome);
}

// "suite full" or the benchmark names, and the label selection.
std::string RunText(const v1::StartRunRequest& run) {
  std::string text;
  if (!run.suite().empty()) {
    text = "suite " + run.suite();
  } else {
    std::vector<std::string> names;
    for (const auto& b : run.benchmarks()) names.push_back(b.name());
    text = absl::StrJoin(names, ",");
  }
  std::map<std::string, std::string> select(run.select_labels().begin(), run.select_labels().end());
  for (const auto& [k, v] : select) absl::StrAppend(&text, " ", k, "=", v);
  if (run.max_parallel() > 0) absl::StrAppend(&text, " max-parallel=", run.max_parallel());
  return text;
}

// What one firing came to, in a few words.
std::string FiringText(const v1::ScheduleFiring& f) {
  std::string text = OutcomeCell(f.outcome());
  if (!f.run_id().empty()) absl::StrAppend(&text, " ", f.run_id());
  if (f.manual()) absl::StrAppend(&text, " (manual)");
  return text;
}

int AddCommand(const Argv& argv) {
  const std::vector<FlagSpec> flags = {
      {"name", true, false, "the schedule's name: 1-64 of A-Z a-z 0-9 . _ -"},
      {"cron", true, false, "five fields, e.g. \"0 3 * * *\" (minute hour day month weekday)"},
      {"suite", true, false, "a named suite to run (quick, full)"},
      {"bench", true, false, "benchmarks to run instead of a suite, NAME[,NAME...]"},
      {"param", true, true, "BENCH.KEY=VALUE, e.g. gemm.sizes=1024"},
      {"select", true, true, "key=value label filter: only matching nodes run"},
      {"max-parallel", true, false, "at most N nodes measure at once"},
      {"timezone", true, false, "IANA time zone of the cron times, e.g. Europe/Paris (default UTC)"},
      kJsonFlag};
  int code = 0;
  auto p = Prepare(kAdd, argv, flags, 0, &code);
  if (!p) return code;
  const Args& args = p->args;
  v1::AddScheduleRequest request;
  v1::Schedule* schedule = request.mutable_schedule();
  if (!args.Has("name")) return Usage(kAdd, "--name is required", flags);
  if (!args.Has("cron")) return Usage(kAdd, "--cron is required", flags);
  schedule->set_name(args.Get("name"));
  absl::StatusOr<CronExpression> cron = CronExpression::Parse(args.Get("cron"));
  if (!cron.ok()) return Usage(kAdd, std::string(cron.status().message()), flags);
  schedule->set_cron(cron->text());
  const std::string zone = args.Get("timezone");
  if (absl::StatusOr<absl::TimeZone> z = LoadScheduleTimeZone(zone); !z.ok()) {
    return Usage(kAdd, std::string(z.status().message()), flags);
  }
  schedule->set_timezone(zone);
  v1::StartRunRequest* run = schedule->mutable_run();
  if (args.Has("bench") == args.Has("suite")) {
    return Usage(kAdd, "give exactly one of --suite or --bench", flags);
  }
  if (args.Has("suite")) {
    auto suite = FindSuite(args.Get("suite"));
    if (!suite.ok()) return Usage(kAdd, std::string(suite.status().message()), flags);
    for (const auto& spec : suite->benchmarks) *run->add_benchmarks() = spec;
    run->set_suite(suite->name);
  } else {
    for (const std::string& name : SplitList(args.Get("bench"))) run->add_benchmarks()->set_name(name);
    if (run->benchmarks().empty()) return Usage(kAdd, "--bench is empty", flags);
  }
  for (const std::string& kv : args.All("param")) {
    auto pair = ParseKeyValue(kv);
    const size_t dot = pair.ok() ? pair->first.find('.') : std::string::npos;
    if (dot == std::string::npos) {
      return Usage(kAdd, "--param wants BENCH.KEY=VALUE, got '" + ClipInput(kv) + "'", flags);
    }
    const std::string bench = pair->first.substr(0, dot);
    bool found = false;
    for (auto& spec : *run->mutable_benchmarks()) {
      if (spec.name() != bench) continue;
      (*spec.mutable_params())[pair->first.substr(dot + 1)] = pair->second;
      found = true;
    }
    if (!found) {
      return Usage(kAdd, "--param names benchmark '" + ClipInput(bench) + "' that is not in the run",
                   flags);
    }
  }
  for (const std::string& kv : args.All("select")) {
    auto pair = ParseKeyValue(kv);
    if (!pair.ok()) return Usage(kAdd, "--select " + std::string(pair.status().message()), flags);
    (*run->mutable_select_labels())[pair->first] = pair->second;
  }
  if (args.Has("max-parallel")) {
    uint32_t n = 0;
    if (!absl::SimpleAtoi(args.Get("max-parallel"), &n) || n > 100000) {
      return Usage(kAdd, "--max-parallel wants a count", flags);
    }
    run->set_max_parallel(n);
  }
  if (absl::Status s = CheckStartRunBounds(*run); !s.ok()) {
    return Usage(kAdd, std::string(s.message()), flags);
  }
  v1::AddScheduleResponse added;
  if (auto s = p->client->Call(&v1::Fleet::Stub::AddSchedule, request, &added); !s.ok()) {
    // A name taken is the user's request refused, like a bad one.
    if (absl::IsAlreadyExists(s)) {
      std::cerr << "fleetbench " << kAdd << ": " << ClipInput(s.message(), kMaxErrorLineLength)
                << "\n";
      return kExitUsage;
    }
    return RemoteError(kAdd, s);
  }
  if (args.Has("json")) {
    std::cout << ToJson(added) << "\n";
    return kExitOk;
  }
  const v1::Schedule& s = added.schedule();
  std::cout << "schedule " << s.name() << ": \"" << s.cron() << "\" "
            << (s.timezone().empty() ? "UTC" : s.timezone()) << ", " << RunText(s.run())
            << "; next " << When(s.next_firing_unix_ms(), ZoneOf(s.timezone())) << "\n";
  return kExitOk;
}

int ListCommand(const Argv& argv) {
  const std::vector<FlagSpec> flags = {kJsonFlag};
  int code = 0;
  auto p = Prepare(kList, argv, flags, 0, &code);
  if (!p) return code;
  v1::ListSchedulesResponse response;
  if (auto s = p->client->Call(&v1::Fleet::Stub::ListSchedules, v1::ListSchedulesRequest(),
                               &response);
      !s.ok()) {
    return RemoteError(kList, s);
  }
  if (p->args.Has("json")) {
    std::cout << ToJson(response) << "\n";
    return kExitOk;
  }
  Table table({"NAME", "CRON", "TIMEZONE", "RUN", "NEXT", "LAST", "OUTCOME"});
  for (const v1::Schedule& s : response.schedules()) {
    const absl::TimeZone zone = ZoneOf(s.timezone());
    table.AddRow({s.name(), s.cron(), s.timezone().empty() ? "UTC" : s.timezone(),
                  RunText(s.run()), When(s.next_firing_unix_ms(), zone),
                  s.has_last_firing() ? When(s.last_firing().fired_unix_ms(), zone) : "-",
                  s.has_last_firing() ? FiringText(s.last_firing()) : "-"});
  }
  std::cout << table.Render();
  return kExitOk;
}

int RmCommand(const Argv& argv) {
  int code = 0;
  auto p = Prepare(kRm, argv, {}, 1, &code);
  if (!p) return code;
  v1::RemoveScheduleRequest request;
  request.set_name(p->args.positional[0]);
  v1::RemoveScheduleResponse response;
  if (auto s = p->client->Call(&v1::Fleet::Stub::RemoveSchedule, request, &response); !s.ok()) {
    return RemoteError(kRm, s);
  }
  std::cout << "removed schedule " << request.name() << " and its firings\n";
  return kExitOk;
}

int RunNowCommand(const Argv& argv) {
  const std::vector<FlagSpec> flags = {kJsonFlag};
  int code = 0;
  auto p = Prepare(kRun, argv, flags, 1, &code);
  if (!p) return code;
  v1::RunScheduleRequest request;
  request.set_name(p->args.positional[0]);
  v1::RunScheduleResponse response;
  if (auto s = p->client->Call(&v1::Fleet::Stub::RunSchedule, request, &response); !s.ok()) {
    return RemoteError(kRun, s);
  }
  const v1::ScheduleFiring& f = response.firing();
  if (p->args.Has("json")) {
    std::cout << ToJson(response) << "\n";
  } else if (f.outcome() == v1::FIRING_OUTCOME_STARTED) {
    std::cout << f.run_id() << "\n";
  }
  if (!f.offline_nodes().empty() && !p->args.Has("json")) {
    std::cerr << "offline, not in the run: " << absl::StrJoin(f.offline_nodes(), ", ") << "\n";
  }
  if (f.outcome() == v1::FIRING_OUTCOME_STARTED) return kExitOk;
  // Not started (skipped while the previous run goes, or refused): a
  // failure for scripts, with the reason.
  return Fail(kRun, absl::StrCat(FiringOutcomeName(f.outcome()), ": ", f.reason()));
}

int FiringsCommand(const Argv& argv) {
  const std::vector<FlagSpec> flags = {
      {"limit", true, false, "the newest N firings (default 50, at most 1000)"}, kJsonFlag};
  int code = 0;
  auto p = Prepare(kHistory, argv, flags, 1, &code);
  if (!p) return code;
  v1::ListScheduleFiringsRequest request;
  request.set_name(p->args.positional[0]);
  if (p->args.Has("limit")) {
    uint32_t n = 0;
    if (!absl::SimpleAtoi(p->args.Get("limit"), &n) || n == 0 || n > 1000) {
      return Usage(kHistory, "--limit wants a count from 1 to 1000", flags);
    }
    request.set_limit(n);
  }
  v1::ListScheduleFiringsResponse response;
  if (auto s = p->client->Call(&v1::Fleet::Stub::ListScheduleFirings, request, &response);
      !s.ok()) {
    return RemoteError(kHistory, s);
  }
  if (p->args.Has("json")) {
    std::cout << ToJson(response) << "\n";
    return kExitOk;
  }
  // Times in the schedule's own zone, as its cron reads.
  absl::TimeZone zone = absl::UTCTimeZone();
  v1::ListSchedulesResponse schedules;
  if (p->client->Call(&v1::Fleet::Stub::ListSchedules, v1::ListSchedulesRequest(), &schedules)
          .ok()) {
    for (const v1::Schedule& s : schedules.schedules()) {
      if (s.name() == request.name()) zone = ZoneOf(s.timezone());
    }
  }
  Table table({"FIRED", "DUE", "OUTCOME", "RUN", "OFFLINE", "REASON"});
  for (const v1::ScheduleFiring& f : response.firings()) {
    std::string outcome = OutcomeCell(f.outcome());
    if (f.manual()) outcome += " (manual)";
    if (f.slots() > 1) absl::StrAppend(&outcome, " x", f.slots());
    table.AddRow({When(f.fired_unix_ms(), zone), f.manual() ? "-" : When(f.slot_unix_ms(), zone),
                  outcome, f.run_id().empty() ? "-" : f.run_id(),
                  f.offline_nodes().empty() ? "-" : absl::StrJoin(f.offline_nodes(), ","),
                  f.reason().empty() ? "-" : f.reason()});
  }
  std::cout << table.Render();
  return kExitOk;
}

}  // namespace

int ScheduleCommand(const Argv& argv) {
  const std::string help =
      "usage: fleetbench schedule SUBCOMMAND [flags]\n"
      "  add --name NAME --cron \"0 3 * * *\" (--suite S | --bench A,B) [--param B.K=V]\n"
      "      [--select k=v] [--max-parallel N] [--timezone Europe/Paris] [--json]\n"
      "                 store a schedule; the controller starts its run at each cron time\n"
      "  list [--json]  schedules with their next firing and the last one's outcome\n"
      "  rm NAME        remove a schedule and its firings\n"
      "  run NAME       fire it now (skipped while its previous run goes: exit 1)\n"
      "  history NAME [--limit N] [--json]\n"
      "                 its firings, newest first: started, skipped, missed or failed\n"
      "Cron fields, names, DST and the restart rules: docs/schedules.md.\n";
  if (!argv.empty() && (argv[0] == "--help" || argv[0] == "-h")) {
    std::cout << help;
    return kExitOk;
  }
  if (argv.empty()) {
    std::cerr << "fleetbench schedule: wants a subcommand, add, list, rm, run or history\n"
              << help;
    return kExitUsage;
  }
  const Argv rest(argv.begin() + 1, argv.end());
  if (argv[0] == "add") return AddCommand(rest);
  if (argv[0] == "list") return ListCommand(rest);
  if (argv[0] == "rm") return RmCommand(rest);
  if (argv[0] == "run") return RunNowCommand(rest);
  if (argv[0] == "history") return FiringsCommand(rest);
  std::cerr << "fleetbench schedule: unknown subcommand '" << ClipInput(argv[0])
            << "'; see fleetbench schedule --help\n";
  return kExitUsage;
}

}  // namespace fleetbench::cli
