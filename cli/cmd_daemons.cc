// `fleetbench controller` and `fleetbench agent`: the two long-running
// processes. Flags are read here and only here; they fill Options structs.
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <system_error>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "agent/benchmarks/disk_common/scratch_path.h"
#include "agent/benchmarks/registry.h"
#include "agent/benchmarks/smallfiles/smallfiles_paths.h"
#include "agent/benchmarks/workload_process/secret_names.h"
#include "agent/runtime/agent.h"
#include "agent/runtime/identity.h"
#include "common/pem_files.h"
#include "common/transport.h"
#include "common/x509.h"
#include "common/logging.h"
#include "common/token.h"
#include "controller/controller_server.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/usage.h"
#include "common/reason.h"
#include "common/wire_limits.h"
#include "storage/postgres_store.h"

namespace fleetbench::cli {
namespace {

int Usage(const std::string& command, const std::string& error,
          const std::vector<FlagSpec>& flags) {
  return UsageError(command, error, flags);
}

// Blocks until SIGINT or SIGTERM (or SIGHUP, with `hangup`). main()
// blocked the first two before any thread started, the controller SIGHUP
// before its first, so only this sigwait sees them.
int WaitForTerminationSignal(bool hangup = false) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  if (hangup) sigaddset(&set, SIGHUP);
  int sig = 0;
  sigwait(&set, &sig);
  return sig;
}

bool ParseDurationFlag(const std::string& text, absl::Duration* out) {
  return absl::ParseDuration(text, out) && *out > absl::ZeroDuration();
}

// A duration as ParseDurationFlag takes it, or whole days ("30d", at most a
// century, far from overflow).
bool ParseDaysOrDuration(const std::string& text, absl::Duration* out) {
  int64_t days = 0;
  if (!text.empty() && text.back() == 'd' &&
      absl::SimpleAtoi(text.substr(0, text.size() - 1), &days)) {
    if (days <= 0 || days > 36525) return false;
    *out = absl::Hours(24 * days);
    return true;
  }
  return ParseDurationFlag(text, out);
}

std::string DefaultController() {
  const char* env = std::getenv("FLEETBENCH_CONTROLLER");
  return env && *env ? env : "127.0.0.1:7070";
}

// The controller checks a run's parameters with the plugins this binary
// links (the same ValidateParams each agent calls), so a bad value is
// refused at `run` instead of stored as a run that fails on every node.
controller::SpecValidator PluginSpecValidator() {
  std::shared_ptr<const std::vector<std::unique_ptr<agent::Benchmark>>> plugins =
      std::make_shared<std::vector<std::unique_ptr<agent::Benchmark>>>(
          agent::MakeAllBenchmarks());
  return [plugins](const v1::BenchmarkSpec& spec) -> absl::Status {
    for (const auto& plugin : *plugins) {
      if (plugin->name() != spec.name()) continue;
      return plugin->ValidateParams(agent::Params(spec.params().begin(), spec.params().end()));
    }
    // A benchmark this build does not know: agents may be newer than the
    // controller, so the ones that have the plugin decide.
    return absl::OkStatus();
  };
}

// The plugins' DefaultTimeout for a spec's parameters (a collective's
// group deadline follows its sweep); zero for a benchmark this build does
// not know or parameters it refuses.
controller::SpecTimeout PluginSpecTimeout() {
  std::shared_ptr<const std::vector<std::unique_ptr<agent::Benchmark>>> plugins =
      std::make_shared<std::vector<std::unique_ptr<agent::Benchmark>>>(
          agent::MakeAllBenchmarks());
  return [plugins](const v1::BenchmarkSpec& spec) -> absl::Duration {
    const agent::Params params(spec.params().begin(), spec.params().end());
    for (const auto& plugin : *plugins) {
      if (plugin->name() != spec.name()) continue;
      if (!plugin->ValidateParams(params).ok()) return absl::ZeroDuration();
      return plugin->DefaultTimeout(params);
    }
    return absl::ZeroDuration();
  };
}

}  // namespace

int ControllerCommand(const Argv& argv) {
  // SIGHUP reloads the server certificate (docs/security.md, Rotation):
  // blocked here, before the server's threads exist, and taken by sigwait.
  sigset_t hangup;
  sigemptyset(&hangup);
  sigaddset(&hangup, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &hangup, nullptr);
  const std::vector<FlagSpec> flags = {
      {"listen", true, false, "address to serve on (default 127.0.0.1:7070)"},
      {"db", true, false,
       "the history: a SQLite file (created if missing), or a PostgreSQL database "
       "postgresql://USER@HOST[:PORT]/DB (docs/operations.md)"},
      {"db-password-file", true, false,
       "with a PostgreSQL --db: the file holding its password (default: libpq's PGPASSFILE)"},
      {"state-dir", true, false,
       "with a PostgreSQL --db: the folder for this controller's own files (token, TLS, "
       "local socket, backups), required"},
      {"standby", false, false,
       "with a PostgreSQL --db led by another controller: wait, and take over when it goes "
       "(default: refuse to start)"},
      {"token-file", true, false,
       "file with the shared token (else $FLEETBENCH_TOKEN; else one is generated next to --db)"},
      {"heartbeat-timeout", true, false, "node offline after this silence (default 15s)"},
      {"sync-full", false, false, "fsync every commit (survives power loss, slower)"},
      {"node-expiry", true, false,
       "remove nodes offline and unseen this long, e.g. 30d (default: never)"},
      {"http-listen", true, false,
       "also serve HTTP here, e.g. 127.0.0.1:9464: /metrics for Prometheus and the web "
       "dashboard (log in with a token), same token (default: no HTTP)"},
      {"metrics-open", false, false,
       "with --http-listen: serve /metrics without a token (logged as a warning)"},
      {"schedule-grace", true, false,
       "after a restart, run a schedule's missed cron time once if it is at most this old "
       "(default 1h; 0: never)"},
      {"retain-days", true, false,
       "remove samples older than this many days, in small batches, hourly (default: keep all)"},
      {"insecure", false, false,
       "serve plaintext, no TLS (tokens and results readable on the wire; default: TLS with a "
       "CA made beside --db)"},
      {"local-socket", true, false,
       "also serve clients on this host at this Unix socket, without TLS, mode 0600 "
       "(fleetbench --controller unix:PATH; default DB.sock; off: none)"},
      {"tls-dir", true, false,
       "folder of the CA and the server certificate (default DB.tls, made on first start); "
       "controllers that share a PostgreSQL history share one CA: give each the CA's ca.pem "
       "and ca.key in its folder"},
      {"tls-san", true, true,
       "another name or address clients dial, for the server certificate (repeatable)"},
      {"node-cert-validity", true, false,
       "how long a node certificate lasts, 20s to 397d; nodes renew at 2/3 (default 90d)"},
      {"verify-inline-mib", true, false,
       "check (quick_check) a history up to this many MiB before serving, a larger one "
       "beside serving; damage found then stops the writes (default 1024; 0: always beside)"},
  };
  auto args = ParseArgs(argv, flags);
  if (!args.ok()) return Usage("controller", std::string(args.status().message()), flags);
  if (!args->positional.empty()) {
    return Usage("controller", "unexpected argument " + ClipInput(args->positional[0]), flags);
  }
  controller::ControllerOptions options;
  if (!args->Has("listen") && absl::StrContains(DefaultController(), ",")) {
    return Usage("controller",
                 "FLEETBENCH_CONTROLLER lists several controllers (that is for agents and the "
                 "CLI); pass --listen HOST:PORT",
                 flags);
  }
  options.listen = args->Get("listen", DefaultController());
  // Port 0 asks for any free port (the "listening" line names it); 99999
  // is a typo, not a request for a random one.
  if (absl::Status s = CheckHostPort("--listen", options.listen, /*allow_any_port=*/true);
      !s.ok()) {
    return Usage("controller", std::string(s.message()), flags);
  }
  if (IsLocalAddress(options.listen)) {
    return Usage("controller",
                 "--listen wants HOST:PORT (TLS, for agents and remote clients); a Unix socket "
                 "for clients on this host is --local-socket PATH",
                 flags);
  }
  if (args->Has("http-listen")) {
    options.http_listen = args->Get("http-listen");
    if (absl::StartsWith(options.http_listen, "unix:")) {
      return Usage("controller", "--http-listen wants HOST:PORT, not a unix: socket", flags);
    }
    if (absl::Status s =
            CheckHostPort("--http-listen", options.http_listen, /*allow_any_port=*/true);
        !s.ok()) {
      return Usage("controller", std::string(s.message()), flags);
    }
  }
  options.metrics_open = args->Has("metrics-open");
  if (options.metrics_open && options.http_listen.empty()) {
    return Usage("controller", "--metrics-open needs --http-listen", flags);
  }
  options.db_path = args->Get("db");
  if (options.db_path.empty()) return Usage("controller", "--db is required", flags);
  if (storage::IsPostgresUrl(options.db_path)) {
    // The history is on a server; the controller's own files need a home.
    options.store_url = options.db_path;
    options.store_password_file = args->Get("db-password-file");
    options.standby = args->Has("standby");
    if (!args->Has("state-dir")) {
      return Usage("controller",
                   "a PostgreSQL --db needs --state-dir DIR for the controller's own files "
                   "(token, TLS, local socket)",
                   flags);
    }
    std::error_code ec;
    std::filesystem::create_directories(args->Get("state-dir"), ec);
    if (ec) {
      return Usage("controller",
                   absl::StrCat("--state-dir ", args->Get("state-dir"), ": ", ec.message()),
                   flags);
    }
    options.db_path = args->Get("state-dir") + "/controller";
  } else {
    for (const char* postgres_only : {"db-password-file", "state-dir", "standby"}) {
      if (args->Has(postgres_only)) {
        return Usage("controller",
                     absl::StrCat("--", postgres_only, " is for a PostgreSQL --db "
                                  "(postgresql://...); a SQLite history keeps its files beside it"),
                     flags);
      }
    }
  }
  options.synchronous_full = args->Has("sync-full");
  options.fleet.validate_spec = PluginSpecValidator();
  options.fleet.spec_timeout = PluginSpecTimeout();
  if (args->Has("heartbeat-timeout")) {
    absl::Duration d;
    if (!ParseDurationFlag(args->Get("heartbeat-timeout"), &d)) {
      return Usage("controller", "--heartbeat-timeout wants a duration like 15s", flags);
    }
    options.fleet.heartbeat_timeout = d;
    options.fleet.heartbeat_interval = d / 3;
  }
  if (args->Has("node-expiry")) {
    absl::Duration d;
    if (!ParseDaysOrDuration(args->Get("node-expiry"), &d)) {
      return Usage("controller", "--node-expiry wants a duration like 30d or 12h", flags);
    }
    options.fleet.node_expiry = d;
  }
  if (args->Has("schedule-grace")) {
    absl::Duration d = absl::ZeroDuration();
    if (args->Get("schedule-grace") != "0" && !ParseDaysOrDuration(args->Get("schedule-grace"), &d)) {
      return Usage("controller", "--schedule-grace wants a duration like 1h or 30m, or 0", flags);
    }
    options.fleet.schedule_grace = d;
  }
  if (args->Has("verify-inline-mib")) {
    int64_t mib = 0;
    if (!absl::SimpleAtoi(args->Get("verify-inline-mib"), &mib) || mib < 0 ||
        mib > (int64_t{1} << 30)) {
      return Usage("controller", "--verify-inline-mib wants a whole number of MiB, 0 to 2^30",
                   flags);
    }
    options.verify_inline_max_bytes = mib << 20;
  }
  if (args->Has("retain-days")) {
    int days = 0;
    if (!absl::SimpleAtoi(args->Get("retain-days"), &days) || days < 1 || days > 36500) {
      return Usage("controller", "--retain-days wants a whole number of days, 1 to 36500", flags);
    }
    options.fleet.retain_samples = absl::Hours(24) * days;
  }
  absl::StatusOr<std::string> token = LoadToken(args->Get("token-file"));
  if (absl::IsNotFound(token.status())) {
    const std::string path = options.db_path + ".token";
    token = LoadToken(path);
    if (!token.ok()) token = GenerateTokenFile(path);
    if (token.ok()) {
      std::cerr << "token in " << path << " (export FLEETBENCH_TOKEN_FILE=" << path << ")\n";
    }
  }
  if (!token.ok()) {
    std::cerr << "fleetbench controller: " << token.status().message() << "\n";
    return kExitFailure;
  }
  options.token = *token;
  options.insecure = args->Has("insecure");
  options.tls_sans = args->All("tls-san");
  options.tls_dir = args->Get("tls-dir");
  if (options.insecure && !options.tls_dir.empty()) {
    return Usage("controller", "--tls-dir holds TLS material; --insecure has none", flags);
  }
  if (options.insecure && !options.tls_sans.empty()) {
    return Usage("controller", "--tls-san names a TLS certificate; --insecure has none", flags);
  }
  if (args->Has("node-cert-validity")) {
    absl::Duration d;
    if (!ParseDaysOrDuration(args->Get("node-cert-validity"), &d) || d < absl::Seconds(20) ||
        d > absl::Hours(24 * 397)) {
      return Usage("controller", "--node-cert-validity wants a duration from 20s to 397d, e.g. 90d",
                   flags);
    }
    if (options.insecure) {
      return Usage("controller", "--node-cert-validity is for TLS; --insecure issues none", flags);
    }
    options.node_cert_validity = d;
  }
  // The local socket: asked for, it must be made; by default, a path too
  // long for a socket's name only costs the local clients their shortcut.
  const std::string local_socket = args->Get("local-socket", options.db_path + ".sock");
  if (local_socket != "off") {
    if (local_socket.size() <= controller::kMaxLocalSocketPath) {
      options.local_socket = local_socket;
    } else if (args->Has("local-socket")) {
      return Usage(
          "controller",
          absl::StrCat("--local-socket: ", local_socket.size(), " bytes is longer than ",
                       controller::kMaxLocalSocketPath, ", the most a Unix socket's name holds"),
          flags);
    } else {
      LOG(WARNING) << "no local socket: " << local_socket << " is longer than "
                   << controller::kMaxLocalSocketPath
                   << " bytes, the most a Unix socket's name holds (--local-socket PATH)";
    }
  }
  // A controller that lost the lead of a PostgreSQL history stops at once
  // and exits with a failure, so its service manager starts it again as a
  // standby (docs/operations.md).
  static std::atomic<bool> lost_lead = false;
  options.lost_lead = [] {
    LOG(ERROR) << "lost the lead of the history (its lease): stopping";
    lost_lead = true;
    kill(getpid(), SIGTERM);
  };
  if (options.standby) std::cerr << "standby: waiting for the lead of " << options.store_url << "\n";
  auto server = controller::ControllerServer::Start(options);
  if (!server.ok()) {
    std::cerr << "fleetbench controller: " << server.status().message() << "\n";
    return kExitFailure;
  }
  if (const controller::ServerTls* tls = (*server)->tls(); tls != nullptr) {
    if (tls->made_ca) LOG(INFO) << "made a new CA in " << tls->ca_path;
    if (tls->made_server_cert) LOG(INFO) << "made a new server certificate, signed by the CA";
    std::cerr << "TLS: CA " << tls->ca_path << " (export FLEETBENCH_CA=" << tls->ca_path
              << "), fingerprint " << tls->ca_fingerprint
              << " (agent --ca-fingerprint)\n";
  } else {
    LOG(WARNING) << "--insecure: serving PLAINTEXT; tokens and results can be read and "
                    "changed on the wire";
  }
  if (!options.local_socket.empty()) {
    std::cerr << "local socket " << options.local_socket
              << " (on this host: export FLEETBENCH_CONTROLLER=unix:" << options.local_socket
              << ")\n";
  }
  LOG(INFO) << "controller listening on port " << (*server)->port() << ", history in "
            << (options.store_url.empty() ? options.db_path : options.store_url);
  // Scripts wait for this line rather than sleeping.
  std::cout << "listening " << (*server)->port() << std::endl;
  if ((*server)->http_port() != 0) {
    LOG(INFO) << "HTTP (/metrics, dashboard at /) on port " << (*server)->http_port();
    std::cout << "http listening " << (*server)->http_port() << std::endl;
  }
  while (WaitForTerminationSignal(/*hangup=*/true) == SIGHUP) {
    absl::StatusOr<x509::CertInfo> served = (*server)->ReloadTls();
    if (!served.ok()) {
      LOG(ERROR) << "SIGHUP: TLS not reloaded, the certificate served stays: "
                 << served.status().message();
    }
  }
  LOG(INFO) << "shutting down";
  (*server)->Shutdown();
  return lost_lead ? kExitFailure : kExitOk;
}

int AgentCommand(const Argv& argv) {
  const std::vector<FlagSpec> flags = {
      {"controller", true, false,
       "controller address HOST:PORT, or a leader and its standbys as HOST:PORT,HOST:PORT,... "
       "dialled in turn (default $FLEETBENCH_CONTROLLER or 127.0.0.1:7070)"},
      {"name", true, false, "node name (default: the hostname)"},
      {"label", true, true,
       "key=value; meaningful keys: provider, region, instance_type, price_per_hour (USD), spot"},
      {"state-dir", true, false, "folder for the spool of unacknowledged results (required)"},
      {"scratch", true, false, "the only folder benchmarks may write to (default STATE_DIR/scratch)"},
      {"dataset-root", true, true,
       "a folder benchmarks may read, e.g. a mounted dataset for smallfiles path=... (default: none)"},
      {"workload-dir", true, false,
       "folder of workload manifests, DIR/NAME.json each: the commands the workload benchmark "
       "may run here (docs/workloads.md; default: none)"},
      {"token-file", true, false, "file with the shared token (else $FLEETBENCH_TOKEN)"},
      {"advertise-addr", true, false,
       "address peers use to reach this node in two-node benchmarks (default: as the controller sees it)"},
      {"backoff-reset-after", true, false,
       "a session up this long redials at the initial 200ms backoff when it ends (default 5s)"},
      {"ca", true, false, "the controller's CA certificate (else $FLEETBENCH_CA)"},
      {"ca-fingerprint", true, false,
       "sha256:HEX of the controller's CA (printed at its start): fetch the CA and check it"},
      {"enroll-token-file", true, false,
       "file with an enrollment token (else $FLEETBENCH_ENROLL_TOKEN): enroll once, then "
       "connect with this node's certificate"},
      {"insecure", false, false, "plaintext, for a controller started with --insecure"},
      {"preemption-notice", true, false,
       "where this node's provider announces taking it away, polled every 5s: file:PATH (a file "
       "that appears), url:http://HOST/PATH (a metadata endpoint: 200 with a body is a notice), "
       "or cmd:PROGRAM [ARGS] (exit 0 is a notice); docs/reliability.md"},
  };
  auto args = ParseArgs(argv, flags);
  if (!args.ok()) return Usage("agent", std::string(args.status().message()), flags);
  if (!args->positional.empty()) {
    return Usage("agent", "unexpected argument " + ClipInput(args->positional[0]), flags);
  }
  agent::AgentOptions options;
  absl::StatusOr<std::vector<std::string>> controllers =
      ParseControllerList("--controller", args->Get("controller", DefaultController()));
  if (!controllers.ok()) return Usage("agent", std::string(controllers.status().message()), flags);
  // The local socket carries no certificate: an enrolled node could never
  // prove who it is there.
  if (IsLocalAddress(controllers->front())) {
    return Usage("agent",
                 "--controller: agents dial the controller's TCP port (HOST:PORT); its unix: "
                 "socket is for the CLI on its host and carries no node certificate",
                 flags);
  }
  options.controllers = *std::move(controllers);
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  options.name = args->Get("name", host);
  options.state_dir = args->Get("state-dir");
  if (options.state_dir.empty()) return Usage("agent", "--state-dir is required", flags);
  options.scratch_dir = args->Get("scratch", options.state_dir + "/scratch");
  // What a run may read besides the scratch folder is the operator's choice,
  // made here, never a run parameter's (agent/benchmarks/smallfiles/smallfiles.h).
  std::vector<std::string> dataset_roots;
  for (const std::string& root : args->All("dataset-root")) {
    if (absl::Status s = agent::CheckAbsoluteFolder("--dataset-root", root); !s.ok()) {
      return Usage("agent", std::string(s.message()), flags);
    }
    dataset_roots.push_back(agent::CollapseSlashes(root));
  }
  // What a run may execute is the operator's choice too: a run names a
  // workload declared here, never a command. A bad manifest stops the
  // start, naming its file and field.
  agent::PluginSetup plugins;
  if (args->Has("workload-dir")) {
    absl::StatusOr<std::vector<agent::Workload>> workloads =
        agent::LoadWorkloadDir(args->Get("workload-dir"));
    if (!workloads.ok()) {
      std::cerr << "fleetbench agent: " << workloads.status().message() << "\n";
      return kExitUsage;
    }
    for (const agent::Workload& w : *workloads) {
      // What it runs and with which environment, for the operator; a value
      // whose name looks like a secret is never written out.
      std::string env;
      for (const auto& [key, value] : w.manifest.env()) {
        absl::StrAppend(&env, env.empty() ? "" : " ", key, "=",
                        agent::LooksLikeSecret(key) ? "(secret)" : value);
      }
      LOG(INFO) << "workload " << w.name << " declared: " << w.manifest.command(0)
                << (env.empty() ? "" : " with " + env);
    }
    plugins.workloads = *std::move(workloads);
  }
  options.advertise_addr = args->Get("advertise-addr");
  if (args->Has("preemption-notice")) {
    auto watch = agent::PreemptionWatch::Parse(args->Get("preemption-notice"));
    if (!watch.ok()) return Usage("agent", std::string(watch.status().message()), flags);
    options.preemption = *std::move(watch);
  }
  if (args->Has("backoff-reset-after")) {
    absl::Duration d;
    if (!ParseDurationFlag(args->Get("backoff-reset-after"), &d)) {
      return Usage("agent", "--backoff-reset-after wants a duration like 5s", flags);
    }
    options.backoff_reset_after = d;
  }
  for (const std::string& kv : args->All("label")) {
    auto pair = ParseKeyValue(kv);
    if (!pair.ok()) return Usage("agent", "--label " + std::string(pair.status().message()), flags);
    if (absl::Status s = CheckLabel("--label", pair->first, pair->second); !s.ok()) {
      return Usage("agent", std::string(s.message()), flags);
    }
    if (pair->first == "price_per_hour") {
      double price = 0;
      if (!absl::SimpleAtod(pair->second, &price) || !std::isfinite(price) || price < 0) {
        return Usage("agent", "--label price_per_hour wants a number of USD >= 0", flags);
      }
    }
    if (pair->first == "spot" && pair->second != "true" && pair->second != "false") {
      return Usage("agent", "--label spot wants true or false", flags);
    }
    options.labels[pair->first] = pair->second;
  }
  if (options.labels.size() > static_cast<size_t>(kMaxLabels)) {
    return Usage("agent", absl::StrCat("at most ", kMaxLabels, " labels"), flags);
  }
  agent::AgentTlsOptions tls;
  tls.controllers = options.controllers;
  tls.name = options.name;
  tls.state_dir = options.state_dir;
  tls.insecure = args->Has("insecure");
  if (args->Has("ca-fingerprint")) {
    absl::StatusOr<std::string> pin = x509::NormalizeFingerprint(args->Get("ca-fingerprint"));
    if (!pin.ok()) return Usage("agent", "--ca-fingerprint: " + std::string(pin.status().message()), flags);
    tls.ca_fingerprint = *pin;
  }
  const char* ca_env = std::getenv("FLEETBENCH_CA");
  if (!tls.insecure && (args->Has("ca") || (ca_env != nullptr && *ca_env != '\0'))) {
    absl::StatusOr<std::string> ca = LoadCaPem(args->Get("ca"));
    if (!ca.ok()) return Usage("agent", std::string(ca.status().message()), flags);
    tls.ca_pem = *ca;
  } else if (args->Has("ca")) {
    return Usage("agent", "--ca and --insecure contradict each other", flags);
  }
  if (args->Has("enroll-token-file")) {
    absl::StatusOr<std::string> enroll = LoadToken(args->Get("enroll-token-file"));
    if (!enroll.ok()) {
      std::cerr << "fleetbench agent: " << enroll.status().message() << "\n";
      return kExitFailure;
    }
    tls.enroll_token = *enroll;
  } else if (const char* env = std::getenv("FLEETBENCH_ENROLL_TOKEN"); env && *env) {
    tls.enroll_token = env;
  }
  absl::StatusOr<std::string> token = LoadToken(args->Get("token-file"));
  // A node that is enrolled, or enrolling, needs no shared token.
  const bool has_identity =
      !tls.enroll_token.empty() || FileExists(agent::IdentityDir(options.state_dir) + "/cert.pem");
  if (!token.ok() && !(absl::IsNotFound(token.status()) && has_identity && !tls.insecure)) {
    std::cerr << "fleetbench agent: " << token.status().message()
              << (absl::IsNotFound(token.status())
                      ? " (or enroll the node: --enroll-token-file)"
                      : "")
              << "\n";
    return kExitFailure;
  }
  if (token.ok()) options.token = *token;
  if (tls.insecure) {
    LOG(WARNING) << "--insecure: talking PLAINTEXT to the controller; the token and results "
                    "can be read and changed on the wire";
  }
  // Made one component at a time, never through a symlink: the benchmarks
  // may write only inside it (agent/benchmarks/disk_common/scratch_path.h).
  if (absl::Status s = agent::CreateScratchDirs(options.scratch_dir); !s.ok()) {
    std::cerr << "fleetbench agent: scratch folder: " << s.message() << "\n";
    return kExitFailure;
  }
  auto spool = agent::Spool::Open(options.state_dir + "/spool");
  if (!spool.ok()) {
    std::cerr << "fleetbench agent: " << spool.status().message() << "\n";
    return kExitFailure;
  }
  // After the spool: a state folder it cannot write is named as such first.
  absl::StatusOr<ClientTls> transport = agent::PrepareAgentTls(tls);
  if (!transport.ok()) {
    std::cerr << "fleetbench agent: " << transport.status().message() << "\n";
    return absl::IsInvalidArgument(transport.status()) ? kExitUsage : kExitFailure;
  }
  options.tls = *transport;
  if (!options.tls.cert_pem.empty()) {
    LOG(INFO) << "identity: node " << options.name << "'s certificate (mTLS)";
  } else if (!options.tls.insecure) {
    LOG(INFO) << "no node certificate: connecting with the shared token over TLS";
  }
  agent::TaskRunner runner(agent::MakeAllBenchmarks(std::move(plugins)), options.scratch_dir);
  runner.set_dataset_roots(std::move(dataset_roots));
  agent::Agent node(options, std::move(*spool), &runner);
  std::thread signals([&] {
    WaitForTerminationSignal();
    node.Stop();
  });
  signals.detach();
  absl::Status s = node.Run();
  if (!s.ok()) {
    std::cerr << "fleetbench agent: " << s.message() << "\n";
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace fleetbench::cli
