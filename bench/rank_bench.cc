// bench/rank_bench.cc — the "rank over 1,000,000 samples in < 100 ms" goal
// (docs/controller-speed.md, "Rank and history over a large history").
//
//   fleetbench_rank_bench --fleetbench build-bench/cli/fleetbench
//       [--db DIR/history.db] [--nodes 1000] [--runs 1000]
//       [--samples-per-task 1] [--repeats 10] [--reuse 1] [--cli 1] [--raw 1]
//       [--load build-bench/bench/fleetbench_load --agents 1000] [--findings 3]
//
// 1. Builds a history through the real store API (storage/store.h): nodes
//    with instance_type/region/provider/price_per_hour labels, `runs` runs of
//    one task per node, and per task `samples-per-task` samples of
//    gemm.cpu.fp32.tflops committed the way the controller commits them
//    (CommitReports, one transaction per run: every node's final report with
//    its task update). Run times spread over the last 6 days, so the default
//    7-day window covers them all. With --reuse 1 an existing file that
//    already holds the samples is used as is. Either way the metric's
//    declaration (unit, direction) is stored, as an agent's hello would.
// 2. Starts `fleetbench controller` on that file and times the CLI end to
//    end (process start, connect, Rank RPC, JSON printing, exit):
//    `fleetbench rank --metric M --by node --json` and `--by instance_type`,
//    and `fleetbench history --node rank-0500 --metric M --json` (the
//    newest 100 samples of one node), one cold call then `repeats` timed
//    ones each (and with --findings N, N timed `fleetbench findings --json`
//    calls); with --load and --agents, that many idle fake agents stay
//    connected meanwhile. The controller's memory is read after all calls.
// 3. Stops the controller and times FleetCore::Rank in process on a fresh
//    store, and the store's scans alone: MetricPointTableSince (what Rank
//    reads) and MetricPointsSince (one MetricPoint, with strings, per point).
//    --cli 0 skips step 2 (for profiling the in-process path), --raw 0 the
//    raw scans (they read every point of the window: minutes at 50M).
//
// Prints one JSON line per measurement: wall times (cold call, then median,
// min, max of the repeats) and CPU times (in process: the calling thread's;
// CLI: the controller's per call, and the CLI process's own), plus the
// controller's memory after the CLI calls. On shared cores the wall time
// includes waiting for a CPU; the CPU time mostly does not. Token: taken
// from FLEETBENCH_TOKEN, else one is made up for the processes started here.
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "common/ulid.h"
#include "common/api_enums.h"
#include "controller/core/fleet_core.h"
#include "storage/sqlite_store.h"
#include "storage/store.h"

extern char** environ;

namespace fleetbench::bench {
namespace {

constexpr char kMetric[] = "gemm.cpu.fp32.tflops";

struct RankBenchOptions {
  std::string fleetbench;
  std::string db;
  int nodes = 1000;
  int runs = 1000;
  int samples_per_task = 1;
  int repeats = 10;
  bool reuse = true;
  bool cli = true;  // false: only the in-process timings (for profiling)
  bool raw = true;  // false: no raw scans in process (slow at 50M)
  // With a load tool (bench/load_agents.cc), this many idle fake agents
  // stay connected to the controller while the CLI is timed.
  std::string load;
  int agents = 0;
  int findings = 0;  // timed `fleetbench findings` calls (0: none)
};

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Wall times, and CPU times: on shared cores the wall time includes waiting
// for a CPU, the CPU time (mostly) does not.
struct Summary {
  std::string what;
  double cold_ms = 0;
  std::vector<double> ms;
  std::vector<double> cpu_ms;
};

void Print(const Summary& s, const std::string& extra) {
  const auto [lo, hi] = std::minmax_element(s.ms.begin(), s.ms.end());
  std::printf(
      "{\"what\":\"%s\",\"cold_ms\":%.1f,\"median_ms\":%.1f,\"min_ms\":%.1f,"
      "\"max_ms\":%.1f,\"repeats\":%zu,\"median_cpu_ms\":%.1f%s}\n",
      s.what.c_str(), s.cold_ms, Median(s.ms), s.ms.empty() ? 0 : *lo,
      s.ms.empty() ? 0 : *hi, s.ms.size(), Median(s.cpu_ms), extra.c_str());
  std::fflush(stdout);
}

double ThreadCpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

// utime + stime of a process in ms (/proc/PID/stat fields 14 and 15).
double ProcessCpuMs(pid_t pid) {
  std::FILE* f = std::fopen(absl::StrCat("/proc/", pid, "/stat").c_str(), "r");
  if (f == nullptr) return 0;
  char buf[1024];
  const size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  buf[n] = '\0';
  const char* p = std::strrchr(buf, ')');
  if (p == nullptr) return 0;
  unsigned long utime = 0, stime = 0;
  // After ")": state, then fields 4..13, then utime and stime.
  if (std::sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime,
                  &stime) != 2) {
    return 0;
  }
  return 1000.0 * static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// --------------------------------------------------------------- the data

absl::Status BuildHistory(const RankBenchOptions& o, storage::Store& store) {
  static const char* kTypes[] = {"c7i.large", "c7i.xlarge", "c7i.2xlarge", "m7i.large",
                                 "m7i.xlarge", "r7i.large",  "c6a.large",   "c6a.xlarge",
                                 "n2-standard-4", "n2-standard-8"};
  static const double kPrices[] = {0.089, 0.178, 0.357, 0.101, 0.202,
                                   0.132, 0.077, 0.153, 0.194, 0.388};
  static const char* kRegions[] = {"us-east-1", "eu-west-1", "europe-west4"};
  const absl::Time now = absl::Now();
  std::vector<std::string> names;
  for (int n = 0; n < o.nodes; ++n) {
    char name[32];
    std::snprintf(name, sizeof name, "rank-%04d", n);
    names.push_back(name);
    storage::NodeRecord node;
    node.name = name;
    const int t = n % 10;
    node.labels = {{"instance_type", kTypes[t]},
                   {"region", kRegions[n % 3]},
                   {"provider", t >= 8 ? "gcp" : "aws"},
                   {"price_per_hour", absl::StrCat(kPrices[t])}};
    node.facts.set_hostname(name);
    node.facts.mutable_cpu()->set_logical_cores(2 << (t % 3));
    node.agent_version = "fleetbench-agent/0.1.0";
    node.first_seen = node.last_seen = now - absl::Hours(24 * 6);
    if (absl::Status s = store.UpsertNode(node); !s.ok()) return s;
  }

  std::mt19937_64 rng(1);
  std::normal_distribution<double> noise(1.0, 0.03);
  const absl::Duration span = absl::Hours(24 * 6);
  absl::Duration commit_time;
  int64_t stored = 0;
  const absl::Time build_start = absl::Now();
  for (int r = 0; r < o.runs; ++r) {
    const absl::Time created = now - span + span * r / o.runs;
    storage::RunRecord run;
    run.run_id = NewUlid(created);
    run.state = "running";
    run.created = created;
    run.finished = absl::InfinitePast();
    run.benchmarks.emplace_back().set_name("gemm");
    std::vector<storage::TaskRecord> tasks;
    tasks.reserve(names.size());
    for (const std::string& name : names) {
      storage::TaskRecord& t = tasks.emplace_back();
      t.task_id = NewUlid(created);
      t.run_id = run.run_id;
      t.node = name;
      t.state = v1::TASK_STATE_RUNNING;
      t.updated = created;
    }
    if (absl::Status s = store.CreateRun(run, tasks); !s.ok()) return s;

    // What the controller would commit for this run: each node's final
    // report (its samples and the task's end state) in one transaction.
    std::vector<storage::Store::ReportWrite> writes(tasks.size());
    v1::BenchmarkOutcome ok;
    ok.set_benchmark("gemm");
    ok.set_state(v1::TASK_STATE_SUCCEEDED);
    for (size_t n = 0; n < tasks.size(); ++n) {
      storage::TaskRecord& t = tasks[n];
      const absl::Time when = created + absl::Milliseconds(static_cast<int64_t>(n));
      // Each instance type has its own speed, so ranks differ.
      const double base = 0.5 + 0.15 * static_cast<double>(n % 10);
      for (int k = 0; k < o.samples_per_task; ++k) {
        v1::Sample& s = writes[n].samples.emplace_back();
        s.set_id(NewUlid(when));
        s.set_run_id(run.run_id);
        s.set_node(t.node);
        s.set_benchmark("gemm");
        s.set_metric(kMetric);
        s.set_unit("tflops");
        s.set_value(base * noise(rng));
        (*s.mutable_params())["size"] = "4096";
        (*s.mutable_params())["dtype"] = "fp32";
        s.set_time_unix_ms(absl::ToUnixMillis(when));
      }
      t.state = v1::TASK_STATE_SUCCEEDED;
      t.outcomes = {ok};
      t.updated = when;
      writes[n].task = &t;
    }
    const absl::Time start = absl::Now();
    absl::StatusOr<int> added = store.CommitReports(writes);
    commit_time += absl::Now() - start;
    if (!added.ok()) return added.status();
    stored += *added;
    if (absl::Status s = store.SetRunState(run.run_id, "succeeded", created + absl::Seconds(5));
        !s.ok()) {
      return s;
    }
  }
  std::printf(
      "{\"what\":\"build\",\"samples\":%lld,\"seconds\":%.1f,"
      "\"commit_samples_per_s\":%.0f}\n",
      static_cast<long long>(stored), absl::ToDoubleSeconds(absl::Now() - build_start),
      static_cast<double>(stored) / absl::ToDoubleSeconds(commit_time));
  std::fflush(stdout);
  return absl::OkStatus();
}

// --------------------------------------------------------------- processes

// Runs argv, returns its exit status and stdout.
struct Spawned {
  pid_t pid = -1;
  int stdout_fd = -1;
};

Spawned Spawn(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int fds[2];
  if (pipe(fds) != 0) return {};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  posix_spawn_file_actions_addclose(&actions, fds[1]);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    return {};
  }
  return {pid, fds[0]};
}

std::string ReadAll(int fd) {
  std::string out;
  char buf[65536];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  close(fd);
  return out;
}

// Times one CLI call end to end; -1 on failure. `rows` gets the row count,
// `cli_cpu_ms` the CLI process's own CPU time.
// The declaration Rank reads the unit and direction from: a controller
// learns it from the agents' hellos (the gemm plugin's metrics()), and none
// connect here. Stored on every start, so a reused older file has it too.
absl::Status DeclareMetric(storage::Store& store) {
  v1::MetricDescriptor d;
  d.set_name(kMetric);
  d.set_unit("tflops");
  d.set_direction(v1::METRIC_DIRECTION_HIGHER_IS_BETTER);
  d.set_description("CPU single-precision GEMM (OpenBLAS sgemm), median over repetitions");
  d.set_benchmark("gemm");
  return store.UpsertMetricDescriptors({d});
}

// `expect_ok` false: a call that must fail (exit status 1) is timed too.
double TimeCli(const std::vector<std::string>& argv, int* rows, double* cli_cpu_ms,
               bool expect_ok = true, const char* row_key = "\"group\"") {
  const auto start = std::chrono::steady_clock::now();
  Spawned p = Spawn(argv);
  if (p.pid < 0) return -1;
  const std::string out = ReadAll(p.stdout_fd);
  int status = 0;
  rusage usage{};
  wait4(p.pid, &status, 0, &usage);
  *cli_cpu_ms = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e3 +
                static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e3;
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (!WIFEXITED(status) || (WEXITSTATUS(status) == 0) != expect_ok) return -1;
  *rows = 0;
  for (size_t at = out.find(row_key); at != std::string::npos; at = out.find(row_key, at + 1)) {
    ++*rows;
  }
  return ms;
}

int TimeCliAgainstController(const RankBenchOptions& o);
int TimeInProcess(const RankBenchOptions& o);

int Run(const RankBenchOptions& o) {
  std::filesystem::create_directories(std::filesystem::path(o.db).parent_path());
  const int64_t want = int64_t{o.nodes} * o.runs * o.samples_per_task;
  {
    bool build = true;
    if (o.reuse && std::filesystem::exists(o.db)) {
      storage::SqliteOptions so;
      so.path = o.db;
      auto store = storage::OpenSqliteStore(so);
      if (!store.ok()) {
        std::cerr << "rank_bench: " << store.status() << "\n";
        return 1;
      }
      auto count = (*store)->CountSamples();
      build = !count.ok() || *count != want;
      if (!build) {
        if (absl::Status s = DeclareMetric(**store); !s.ok()) {
          std::cerr << "rank_bench: declaring " << kMetric << ": " << s << "\n";
          return 1;
        }
      }
    }
    if (build) {
      for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(o.db + suffix);
      storage::SqliteOptions so;
      so.path = o.db;
      auto store = storage::OpenSqliteStore(so);
      if (!store.ok()) {
        std::cerr << "rank_bench: " << store.status() << "\n";
        return 1;
      }
      if (absl::Status s = BuildHistory(o, **store); !s.ok()) {
        std::cerr << "rank_bench: building the history: " << s << "\n";
        return 1;
      }
      if (absl::Status s = DeclareMetric(**store); !s.ok()) {
        std::cerr << "rank_bench: declaring " << kMetric << ": " << s << "\n";
        return 1;
      }
    }
  }
  std::printf("{\"what\":\"data\",\"samples\":%lld,\"nodes\":%d,\"runs\":%d,\"db_mib\":%.1f}\n",
              static_cast<long long>(want), o.nodes, o.runs,
              static_cast<double>(std::filesystem::file_size(o.db)) / (1 << 20));
  std::fflush(stdout);

  int failures = 0;
  if (o.cli) failures += TimeCliAgainstController(o);
  return failures + TimeInProcess(o) == 0 ? 0 : 1;
}

// Starts a controller on the history and times the CLI; returns failures.
int TimeCliAgainstController(const RankBenchOptions& o) {
  Spawned controller =
      Spawn({o.fleetbench, "controller", "--listen", "127.0.0.1:0", "--db", o.db});
  if (controller.pid < 0) {
    std::cerr << "rank_bench: cannot start " << o.fleetbench << "\n";
    return 1;
  }
  std::string port;
  {
    std::string line;
    char c;
    while (read(controller.stdout_fd, &c, 1) == 1) {
      if (c == '\n') {
        if (line.rfind("listening ", 0) == 0) {
          port = line.substr(10);
          break;
        }
        line.clear();
      } else {
        line += c;
      }
    }
  }
  if (port.empty()) {
    std::cerr << "rank_bench: the controller did not say \"listening PORT\"\n";
    kill(controller.pid, SIGTERM);
    waitpid(controller.pid, nullptr, 0);
    return 1;
  }
  int failures = 0;
  int calls = 0;
  Spawned load{-1, -1};
  if (!o.load.empty() && o.agents > 0) {
    setenv("FLEETBENCH_CA", (o.db + ".tls/ca.pem").c_str(), 1);  // the load tool's CA
    load = Spawn({o.load, "--mode", "idle", "--controller", "127.0.0.1:" + port, "--agents",
                  absl::StrCat(o.agents), "--hold", "86400", "--prefix", "idle"});
    std::string line;
    char c;
    while (load.pid > 0 && read(load.stdout_fd, &c, 1) == 1) {
      if (c != '\n') {
        line += c;
        continue;
      }
      if (line.rfind("ready ", 0) == 0) break;
      line.clear();
    }
    if (line.rfind("ready ", 0) != 0) {
      std::cerr << "rank_bench: the load tool's agents were not welcomed\n";
      ++failures;
    } else {
      std::printf("{\"what\":\"idle agents connected\",\"agents\":%s}\n", line.substr(6).c_str());
      std::fflush(stdout);
    }
  }
  // What the calls cost the controller in memory (RSS, its peak and the
  // anonymous part: the rest is the page cache's share of the file).
  auto print_memory = [&](const char* when) {
    std::FILE* f = std::fopen(absl::StrCat("/proc/", controller.pid, "/status").c_str(), "r");
    char line[256];
    std::string rss, hwm, anon;
    while (f != nullptr && std::fgets(line, sizeof line, f) != nullptr) {
      long kb = 0;
      if (std::sscanf(line, "VmRSS: %ld", &kb) == 1) rss = absl::StrCat(kb);
      if (std::sscanf(line, "VmHWM: %ld", &kb) == 1) hwm = absl::StrCat(kb);
      if (std::sscanf(line, "RssAnon: %ld", &kb) == 1) anon = absl::StrCat(kb);
    }
    if (f != nullptr) std::fclose(f);
    std::printf("{\"what\":\"controller memory %s\",\"calls\":%d,"
                "\"agents\":%d,\"rss_kb\":%s,\"peak_rss_kb\":%s,\"anon_kb\":%s}\n",
                when, calls, load.pid > 0 ? o.agents : 0, rss.empty() ? "0" : rss.c_str(),
                hwm.empty() ? "0" : hwm.c_str(), anon.empty() ? "0" : anon.c_str());
    std::fflush(stdout);
  };
  std::vector<std::pair<std::string, std::vector<std::string>>> cases;
  for (const char* by : {"node", "instance_type"}) {
    cases.push_back({absl::StrCat("cli rank --by ", by),
                     {o.fleetbench, "rank", "--metric", kMetric, "--by", by, "--json",
                      "--controller", "127.0.0.1:" + port, "--ca", o.db + ".tls/ca.pem"}});
  }
  cases.push_back({"cli history --node N --metric M (newest 100)",
                   {o.fleetbench, "history", "--node", absl::StrFormat("rank-%04d", o.nodes / 2),
                    "--metric", kMetric, "--json", "--controller", "127.0.0.1:" + port, "--ca",
                    o.db + ".tls/ca.pem"}});
  if (o.findings > 0) {
    cases.push_back({"cli findings (14-day window)",
                     {o.fleetbench, "findings", "--json", "--controller", "127.0.0.1:" + port,
                      "--ca", o.db + ".tls/ca.pem"}});
  }
  for (const auto& [name, argv] : cases) {
    const bool findings = name.rfind("cli findings", 0) == 0;
    if (findings) print_memory("after the rank and history calls");
    const int repeats = findings ? o.findings : o.repeats;
    const char* row_key = name.rfind("cli rank", 0) == 0 ? "\"group\"" : "\"id\"";
    Summary s{name, 0, {}, {}};
    int rows = 0;
    double cli_cpu = 0;
    std::vector<double> cli_cpu_ms;
    s.cold_ms = TimeCli(argv, &rows, &cli_cpu, true, row_key);
    ++calls;
    const double controller_cpu0 = ProcessCpuMs(controller.pid);
    for (int i = 0; i < repeats; ++i) {
      const double ms = TimeCli(argv, &rows, &cli_cpu, true, row_key);
      ++calls;
      if (ms < 0) {
        ++failures;
        continue;
      }
      s.ms.push_back(ms);
      cli_cpu_ms.push_back(cli_cpu);
    }
    // The controller's CPU per call, averaged (its clock ticks are 10 ms).
    s.cpu_ms = {(ProcessCpuMs(controller.pid) - controller_cpu0) / repeats};
    Print(s, absl::StrFormat(",\"rows\":%d,\"median_cli_process_cpu_ms\":%.1f", rows,
                             Median(cli_cpu_ms)));
  }
  // A CLI call that does no work: the floor of the round trip. The metric
  // is declared by no one, so the controller answers NOT_FOUND before any
  // scan and the CLI exits 1.
  {
    const std::vector<std::string> argv = {o.fleetbench, "rank", "--metric", "no.such.metric_tflops",
                                           "--json", "--controller", "127.0.0.1:" + port,
                                           "--ca", o.db + ".tls/ca.pem"};
    Summary s{"cli rank, unknown metric (floor)", 0, {}, {}};
    int rows = 0;
    double cli_cpu = 0;
    std::vector<double> cli_cpu_ms;
    s.cold_ms = TimeCli(argv, &rows, &cli_cpu, /*expect_ok=*/false);
    for (int i = 0; i < o.repeats; ++i) {
      const double ms = TimeCli(argv, &rows, &cli_cpu, /*expect_ok=*/false);
      if (ms >= 0) s.ms.push_back(ms);
      cli_cpu_ms.push_back(cli_cpu);
    }
    s.cpu_ms = cli_cpu_ms;
    Print(s, "");
  }
  print_memory("after the CLI calls");
  if (load.pid > 0) {
    kill(load.pid, SIGTERM);
    waitpid(load.pid, nullptr, 0);
  }
  kill(controller.pid, SIGTERM);
  ReadAll(controller.stdout_fd);
  waitpid(controller.pid, nullptr, 0);
  return failures;
}

// FleetCore::Rank and the store scan in this process, on a fresh store (the
// first call runs with cold caches); returns failures.
int TimeInProcess(const RankBenchOptions& o) {
  int failures = 0;
  storage::SqliteOptions so;
  so.path = o.db;
  auto store = storage::OpenSqliteStore(so);
  if (!store.ok()) {
    std::cerr << "rank_bench: " << store.status() << "\n";
    return 1;
  }
  controller::FleetCore core(store->get(), Clock::Real(), controller::FleetOptions());
  for (const char* by : {"node", "instance_type"}) {
    v1::RankRequest request;
    request.set_metric(kMetric);
    request.set_by(*ParseRankGrouping(by));
    Summary s{absl::StrCat("FleetCore::Rank by ", by), 0, {}, {}};
    int rows = 0;
    for (int i = 0; i <= o.repeats; ++i) {
      const double cpu0 = ThreadCpuMs();
      const absl::Time start = absl::Now();
      auto response = core.Rank(request);
      const double ms = absl::ToDoubleMilliseconds(absl::Now() - start);
      const double cpu = ThreadCpuMs() - cpu0;
      if (!response.ok()) {
        std::cerr << "rank_bench: " << response.status() << "\n";
        ++failures;
        continue;
      }
      rows = response->rows_size();
      if (i == 0) {
        s.cold_ms = ms;
      } else {
        s.ms.push_back(ms);
        s.cpu_ms.push_back(cpu);
      }
    }
    Print(s, absl::StrCat(",\"rows\":", rows));
  }
  if (!o.raw) return failures;
  {
    Summary s{"Store::MetricPointsSince (7 days)", 0, {}, {}};
    size_t points = 0;
    for (int i = 0; i <= o.repeats; ++i) {
      const double cpu0 = ThreadCpuMs();
      const absl::Time start = absl::Now();
      auto got = (*store)->MetricPointsSince(kMetric, absl::Now() - absl::Hours(24 * 7));
      const double ms = absl::ToDoubleMilliseconds(absl::Now() - start);
      const double cpu = ThreadCpuMs() - cpu0;
      if (!got.ok()) {
        ++failures;
        continue;
      }
      points = got->size();
      if (i == 0) {
        s.cold_ms = ms;
      } else {
        s.ms.push_back(ms);
        s.cpu_ms.push_back(cpu);
      }
    }
    Print(s, absl::StrCat(",\"points\":", points));
  }
  {
    // The compact form Rank reads: node and run names once, not per point.
    Summary s{"Store::MetricPointTableSince (7 days)", 0, {}, {}};
    size_t points = 0;
    for (int i = 0; i <= o.repeats; ++i) {
      const double cpu0 = ThreadCpuMs();
      const absl::Time start = absl::Now();
      auto got = (*store)->MetricPointTableSince(kMetric, absl::Now() - absl::Hours(24 * 7));
      const double ms = absl::ToDoubleMilliseconds(absl::Now() - start);
      const double cpu = ThreadCpuMs() - cpu0;
      if (!got.ok()) {
        ++failures;
        continue;
      }
      points = got->points.size();
      if (i == 0) {
        s.cold_ms = ms;
      } else {
        s.ms.push_back(ms);
        s.cpu_ms.push_back(cpu);
      }
    }
    Print(s, absl::StrCat(",\"points\":", points));
  }
  return failures;
}

int Usage(const std::string& error) {
  std::cerr << "fleetbench_rank_bench: " << error << "\n"
            << "usage: fleetbench_rank_bench --fleetbench PATH [--db FILE] [--nodes 1000]\n"
            << "         [--runs 1000] [--samples-per-task 1] [--repeats 10] [--reuse 1] [--cli 1]\n"
            << "         [--raw 1] [--load PATH/fleetbench_load --agents N] [--findings 0]\n";
  return 2;
}

}  // namespace
}  // namespace fleetbench::bench

int main(int argc, char** argv) {
  using fleetbench::bench::Usage;
  fleetbench::bench::RankBenchOptions o;
  std::map<std::string, std::string> flags;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--", 0) != 0 || i + 1 >= argc) return Usage("flags are --name VALUE");
    flags[a.substr(2)] = argv[++i];
  }
  auto take_int = [&](const char* name, int* out) {
    auto it = flags.find(name);
    if (it == flags.end()) return true;
    if (!absl::SimpleAtoi(it->second, out) || *out < 0) return false;
    flags.erase(it);
    return true;
  };
  int reuse = 1;
  int cli = 1;
  int raw = 1;
  if (!take_int("nodes", &o.nodes) || !take_int("runs", &o.runs) ||
      !take_int("samples-per-task", &o.samples_per_task) || !take_int("repeats", &o.repeats) ||
      !take_int("reuse", &reuse) || !take_int("cli", &cli) || !take_int("raw", &raw) ||
      !take_int("agents", &o.agents) || !take_int("findings", &o.findings)) {
    return Usage("numeric flags want a count >= 0");
  }
  o.reuse = reuse != 0;
  o.cli = cli != 0;
  o.raw = raw != 0;
  o.load = flags["load"];
  flags.erase("load");
  o.fleetbench = flags["fleetbench"];
  flags.erase("fleetbench");
  o.db = flags.contains("db") ? flags["db"] : "/tmp/fleetbench-rank-bench/history.db";
  flags.erase("db");
  if (!flags.empty()) return Usage("unknown flag --" + flags.begin()->first);
  if (o.fleetbench.empty()) return Usage("--fleetbench PATH is required");
  if (o.nodes < 1 || o.runs < 1 || o.samples_per_task < 1 || o.repeats < 1) {
    return Usage("--nodes, --runs, --samples-per-task and --repeats want at least 1");
  }
  o.db = std::filesystem::absolute(o.db).string();
  // The controller and the CLI read the token from the environment.
  if (const char* t = std::getenv("FLEETBENCH_TOKEN"); t == nullptr || *t == '\0') {
    setenv("FLEETBENCH_TOKEN", "rank-bench-token", 1);
  }
  signal(SIGPIPE, SIG_IGN);
  return fleetbench::bench::Run(o);
}
