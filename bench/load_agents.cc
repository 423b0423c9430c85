// bench/load_agents.cc — fake agents that load a controller, for the spine's
// speed goals (docs/controller-speed.md, "Ingest"). Speaks the real
// protocol (docs/protocol.md): bearer token, Hello -> Welcome, Heartbeat,
// TaskStarted, Reports with ULID ids -> Ack. No spool: the point is the
// controller's cost, not the agent's.
//
//   fleetbench_load --mode ingest --controller 127.0.0.1:PORT
//       [--streams 4] [--batch 1000] [--window 8] [--samples 2000000]
//       [--params 2] [--prefix ingest]
//     K streams say hello as PREFIX-0..K-1 and print "ready K". Someone
//     (bench/run_controller_bench.sh) then starts a run on those nodes; on
//     each RunTask the stream sends TaskStarted and reports of `batch`
//     samples, at most `window` unacked, until `samples` (over all streams)
//     are acked, then the final report. Prints one JSON line: acked samples
//     per second from the first report sent to the last ack.
//
//   fleetbench_load --mode idle --controller 127.0.0.1:PORT
//       [--agents 1000] [--hold 60] [--prefix idle]
//     `agents` streams (one channel, so one TCP connection, each) say hello
//     with small facts and heartbeat at the interval from Welcome. All are
//     driven by gRPC's callback API plus one heartbeat thread, not a thread
//     per agent. Prints "ready N" once all are welcomed, holds `hold`
//     seconds, prints one JSON line with how many streams were still up.
//
// The token comes from $FLEETBENCH_TOKEN.
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/token.h"
#include "common/transport.h"
#include "common/ulid.h"
#include "fleetbench/v1/agent_service.grpc.pb.h"
#include "grpcpp/grpcpp.h"

namespace fleetbench::bench {
namespace {

using Stream = grpc::ClientReaderWriter<v1::AgentMessage, v1::ControllerMessage>;

struct LoadOptions {
  std::string mode;
  std::string controller = "127.0.0.1:7070";
  std::string token;
  ClientTls tls;  // TLS with $FLEETBENCH_CA, as real agents; --insecure for plaintext
  std::string prefix;
  int streams = 4;
  int batch = 1000;
  int window = 8;
  int64_t samples = 2'000'000;
  int params = 2;
  int agents = 1000;
  absl::Duration hold = absl::Seconds(60);
  absl::Duration connect_timeout = absl::Seconds(60);
};

double Seconds(absl::Duration d) { return absl::ToDoubleSeconds(d); }

double CpuSecondsOfThisProcess() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

double Percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t i = static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

// Unique ULID-shaped ids without a random draw per sample: 16 characters
// of a fresh ULID (its time and 30 random bits), then a 50-bit counter.
class IdSource {
 public:
  IdSource() : prefix_(NewUlid().substr(0, 16)) {}
  std::string Next() {
    static constexpr char kAlphabet[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
    std::string id = prefix_;
    id.resize(26);
    uint64_t n = counter_++;
    for (int i = 25; i >= 16; --i) {
      id[i] = kAlphabet[n & 31];
      n >>= 5;
    }
    return id;
  }

 private:
  std::string prefix_;
  uint64_t counter_ = 0;
};

v1::NodeFacts SmallFacts(const std::string& name) {
  v1::NodeFacts facts;
  facts.set_hostname(name);
  facts.set_kernel("6.1.0-bench");
  facts.set_os("fleetbench load generator");
  facts.mutable_cpu()->set_model("Fake CPU @ 2.0GHz");
  facts.mutable_cpu()->set_sockets(1);
  facts.mutable_cpu()->set_physical_cores(4);
  facts.mutable_cpu()->set_logical_cores(8);
  facts.mutable_cpu()->set_numa_nodes(1);
  facts.set_memory_total_bytes(uint64_t{16} << 30);
  return facts;
}

v1::AgentMessage MakeHello(const std::string& name) {
  v1::AgentMessage m;
  v1::Hello* hello = m.mutable_hello();
  hello->set_name(name);
  (*hello->mutable_labels())["instance_type"] = "bench.fake";
  *hello->mutable_facts() = SmallFacts(name);
  hello->set_agent_version("fleetbench-load/0.1.0");
  v1::Capability* gemm = hello->add_capabilities();
  gemm->set_benchmark("gemm");
  gemm->set_status(v1::CAPABILITY_STATUS_AVAILABLE);
  // What the real gemm plugin declares (agent/benchmarks/gemm/cpu_gemm.cc),
  // so a controller fed only by this program can rank it.
  const std::pair<const char*, const char*> kGemmMetrics[] = {
      {"gemm.cpu.fp32.tflops",
       "CPU single-precision GEMM (OpenBLAS sgemm), median over repetitions"},
      {"gemm.cpu.fp64.tflops",
       "CPU double-precision GEMM (OpenBLAS dgemm), median over repetitions"},
  };
  for (const auto& [name, description] : kGemmMetrics) {
    v1::MetricDescriptor* d = gemm->add_metrics();
    d->set_name(name);
    d->set_unit("tflops");
    d->set_direction(v1::METRIC_DIRECTION_HIGHER_IS_BETTER);
    d->set_description(description);
    d->set_benchmark("gemm");
  }
  return m;
}

// ------------------------------------------------------------------ ingest

struct IngestShared {
  std::atomic<int64_t> acked_samples{0};
  std::atomic<int> welcomed{0};
  absl::Mutex mu;
  absl::Time first_send ABSL_GUARDED_BY(mu) = absl::InfiniteFuture();
  absl::Time last_ack ABSL_GUARDED_BY(mu) = absl::InfinitePast();
  std::vector<double> ack_latency_ms ABSL_GUARDED_BY(mu);
};

// One fake agent on its own channel: a writer (this thread), a reader and
// a heartbeat thread.
class IngestStream {
 public:
  IngestStream(const LoadOptions& options, int index, int64_t quota, IngestShared* shared)
      : options_(options), name_(absl::StrCat(options.prefix, "-", index)), quota_(quota),
        shared_(shared) {}

  absl::Status Run() {
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);  // a connection of its own
    args.SetMaxSendMessageSize(16 << 20);
    auto channel = grpc::CreateCustomChannel(
        options_.controller, ChannelCredentialsFor(options_.controller, options_.tls), args);
    auto stub = v1::AgentGateway::NewStub(channel);
    grpc::ClientContext context;
    context.AddMetadata(kAuthMetadataKey, "Bearer " + options_.token);
    std::unique_ptr<Stream> stream = stub->Connect(&context);
    stream_ = stream.get();
    v1::ControllerMessage first;
    if (!stream->Write(MakeHello(name_)) || !stream->Read(&first) || !first.has_welcome()) {
      grpc::Status s = stream->Finish();
      return absl::UnavailableError(absl::StrCat(name_, ": no welcome: ", s.error_message()));
    }
    interval_ = absl::Milliseconds(std::max<int64_t>(first.welcome().heartbeat_interval_ms(), 100));
    shared_->welcomed.fetch_add(1);

    std::thread reader([this] { ReadLoop(); });
    std::thread heartbeat([this] { HeartbeatLoop(); });
    absl::Status status = Produce();
    {
      absl::MutexLock lock(&mu_);
      done_ = true;
    }
    heartbeat.join();
    {
      absl::MutexLock lock(&write_mu_);
      stream->WritesDone();
    }
    reader.join();
    grpc::Status finish = stream->Finish();
    if (status.ok() && !finish.ok()) {
      status = absl::UnavailableError(absl::StrCat(name_, ": ", finish.error_message()));
    }
    return status;
  }

 private:
  struct InFlight {
    std::string report_id;
    int samples;
    absl::Time sent;
  };

  bool Write(const v1::AgentMessage& m) {
    absl::MutexLock lock(&write_mu_);
    return stream_->Write(m);
  }

  void ReadLoop() {
    v1::ControllerMessage m;
    while (stream_->Read(&m)) {
      const absl::Time now = absl::Now();
      absl::MutexLock lock(&mu_);
      if (m.has_run_task()) {
        if (task_id_.empty()) task_id_ = m.run_task().task_id();
      } else if (m.has_ack()) {
        if (in_flight_.empty() || in_flight_.front().report_id != m.ack().report_id()) {
          ack_errors_++;
          int pos = -1;
          for (size_t i = 0; i < in_flight_.size(); ++i) {
            if (in_flight_[i].report_id == m.ack().report_id()) pos = static_cast<int>(i);
          }
          std::cerr << name_ << ": ack " << m.ack().report_id() << " is at position " << pos
                    << " of " << in_flight_.size() << " unacked reports (acked so far "
                    << acked_ << ")\n";
          continue;
        }
        const InFlight f = in_flight_.front();
        in_flight_.pop_front();
        acked_ += f.samples;
        if (f.samples > 0) {
          shared_->acked_samples.fetch_add(f.samples);
          absl::MutexLock slock(&shared_->mu);
          shared_->last_ack = std::max(shared_->last_ack, now);
          shared_->ack_latency_ms.push_back(absl::ToDoubleMilliseconds(now - f.sent));
        } else {
          final_acked_ = true;
        }
      } else if (m.has_cancel_task()) {
        cancelled_ = true;
      }
    }
    absl::MutexLock lock(&mu_);
    stream_over_ = true;
  }

  void HeartbeatLoop() {
    v1::AgentMessage beat;
    beat.mutable_heartbeat();
    while (true) {
      {
        absl::MutexLock lock(&mu_);
        auto over = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return done_ || stream_over_; };
        if (mu_.AwaitWithTimeout(absl::Condition(&over), interval_)) return;
      }
      Write(beat);
    }
  }

  absl::Status Produce() {
    std::string task_id;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
        return !task_id_.empty() || stream_over_;
      };
      if (!mu_.AwaitWithTimeout(absl::Condition(&ready), absl::Minutes(5)) || stream_over_) {
        return absl::DeadlineExceededError(absl::StrCat(name_, ": no RunTask"));
      }
      task_id = task_id_;
    }
    v1::AgentMessage started;
    started.mutable_task_started()->set_task_id(task_id);
    if (!Write(started)) return absl::UnavailableError(absl::StrCat(name_, ": stream broke"));

    // One message reused for every report: ids and values change, the rest
    // stays, as it would in an agent that streams one benchmark's results.
    v1::AgentMessage message;
    v1::Report* report = message.mutable_report();
    report->set_task_id(task_id);
    for (int i = 0; i < options_.batch; ++i) {
      v1::Sample* s = report->add_samples();
      s->set_benchmark("gemm");
      s->set_metric("load.ingest.tflops");
      s->set_unit("tflops");
      if (options_.params >= 1) (*s->mutable_params())["size"] = "4096";
      if (options_.params >= 2) (*s->mutable_params())["dtype"] = "fp32";
      for (int p = 2; p < options_.params; ++p) {
        (*s->mutable_params())[absl::StrCat("p", p)] = "x";
      }
    }
    int64_t sent = 0;
    uint64_t seq = 0;
    while (sent < quota_) {
      const int n = static_cast<int>(std::min<int64_t>(options_.batch, quota_ - sent));
      while (report->samples_size() > n) report->mutable_samples()->RemoveLast();
      const int64_t now_ms = absl::ToUnixMillis(absl::Now());
      for (v1::Sample& s : *report->mutable_samples()) {
        s.set_id(ids_.Next());
        s.set_value(1.0 + static_cast<double>(seq++ % 1000) / 1000.0);
        s.set_time_unix_ms(now_ms);
      }
      report->set_report_id(ids_.Next());
      {
        absl::MutexLock lock(&mu_);
        auto room = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
          return static_cast<int>(in_flight_.size()) < options_.window || stream_over_;
        };
        mu_.Await(absl::Condition(&room));
        if (stream_over_) return absl::UnavailableError(absl::StrCat(name_, ": stream ended"));
        const absl::Time now = absl::Now();
        in_flight_.push_back({report->report_id(), n, now});
        absl::MutexLock slock(&shared_->mu);
        shared_->first_send = std::min(shared_->first_send, now);
      }
      if (!Write(message)) return absl::UnavailableError(absl::StrCat(name_, ": stream broke"));
      sent += n;
    }
    // The final report: no samples, the task's end state and outcome.
    v1::AgentMessage final_message;
    v1::Report* final_report = final_message.mutable_report();
    final_report->set_report_id(ids_.Next());
    final_report->set_task_id(task_id);
    final_report->set_task_finished(true);
    final_report->set_task_state(v1::TASK_STATE_SUCCEEDED);
    v1::BenchmarkOutcome* outcome = final_report->add_outcomes();
    outcome->set_benchmark("gemm");
    outcome->set_state(v1::TASK_STATE_SUCCEEDED);
    {
      absl::MutexLock lock(&mu_);
      in_flight_.push_back({final_report->report_id(), 0, absl::Now()});
    }
    if (!Write(final_message)) return absl::UnavailableError(absl::StrCat(name_, ": stream broke"));
    absl::MutexLock lock(&mu_);
    auto finished = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
      return final_acked_ || stream_over_;
    };
    mu_.AwaitWithTimeout(absl::Condition(&finished), absl::Minutes(1));
    if (!final_acked_) return absl::DeadlineExceededError(absl::StrCat(name_, ": final report not acked"));
    if (ack_errors_ > 0) {
      return absl::InternalError(absl::StrCat(name_, ": ", ack_errors_, " acks out of order"));
    }
    return absl::OkStatus();
  }

  const LoadOptions& options_;
  const std::string name_;
  const int64_t quota_;
  IngestShared* const shared_;
  IdSource ids_;
  Stream* stream_ = nullptr;
  absl::Duration interval_;
  absl::Mutex write_mu_;  // one writer at a time on the stream

  absl::Mutex mu_;
  std::string task_id_ ABSL_GUARDED_BY(mu_);
  std::deque<InFlight> in_flight_ ABSL_GUARDED_BY(mu_);
  int64_t acked_ ABSL_GUARDED_BY(mu_) = 0;
  int ack_errors_ ABSL_GUARDED_BY(mu_) = 0;
  bool final_acked_ ABSL_GUARDED_BY(mu_) = false;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  bool stream_over_ ABSL_GUARDED_BY(mu_) = false;
  bool done_ ABSL_GUARDED_BY(mu_) = false;
};

int RunIngest(const LoadOptions& options) {
  IngestShared shared;
  std::vector<std::unique_ptr<IngestStream>> streams;
  std::vector<absl::Status> results(static_cast<size_t>(options.streams));
  for (int i = 0; i < options.streams; ++i) {
    int64_t quota = options.samples / options.streams;
    if (i < options.samples % options.streams) ++quota;
    streams.push_back(std::make_unique<IngestStream>(options, i, quota, &shared));
  }
  const double cpu0 = CpuSecondsOfThisProcess();
  std::vector<std::thread> threads;
  for (int i = 0; i < options.streams; ++i) {
    threads.emplace_back([&, i] { results[static_cast<size_t>(i)] = streams[static_cast<size_t>(i)]->Run(); });
  }
  const absl::Time give_up = absl::Now() + options.connect_timeout;
  while (shared.welcomed.load() < options.streams && absl::Now() < give_up) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  std::cout << "ready " << shared.welcomed.load() << std::endl;
  for (auto& t : threads) t.join();
  const double cpu = CpuSecondsOfThisProcess() - cpu0;
  int failures = 0;
  for (const absl::Status& s : results) {
    if (!s.ok()) {
      std::cerr << "fleetbench_load: " << s << "\n";
      ++failures;
    }
  }
  absl::MutexLock lock(&shared.mu);
  const int64_t acked = shared.acked_samples.load();
  const double wall = Seconds(shared.last_ack - shared.first_send);
  const double rate = wall > 0 ? static_cast<double>(acked) / wall : 0;
  std::printf(
      "{\"mode\":\"ingest\",\"streams\":%d,\"batch\":%d,\"window\":%d,\"params\":%d,"
      "\"samples_acked\":%lld,\"seconds\":%.3f,\"samples_per_s\":%.0f,"
      "\"ack_latency_ms_p50\":%.2f,\"ack_latency_ms_p99\":%.2f,"
      "\"load_cpu_s\":%.2f,\"failures\":%d}\n",
      options.streams, options.batch, options.window, options.params,
      static_cast<long long>(acked), wall, rate, Percentile(shared.ack_latency_ms, 0.5),
      Percentile(shared.ack_latency_ms, 0.99), cpu, failures);
  std::fflush(stdout);
  return failures == 0 && acked == options.samples ? 0 : 1;
}

// -------------------------------------------------------------------- idle

// One idle agent: a callback-API stream. A hold keeps the reactor alive
// while the heartbeat thread may still start writes on it; it is released
// once the read side ended, under the same mutex that guards writes.
class IdleAgent final : public grpc::ClientBidiReactor<v1::AgentMessage, v1::ControllerMessage> {
 public:
  IdleAgent(const LoadOptions& options, const std::string& name)
      : name_(name), token_(options.token), hello_(MakeHello(name)) {
    beat_.mutable_heartbeat();
  }

  void Start(v1::AgentGateway::Stub* stub) {
    context_.AddMetadata(kAuthMetadataKey, "Bearer " + token_);
    stub->async()->Connect(&context_, this);
    {
      absl::MutexLock lock(&mu_);
      write_in_flight_ = true;
    }
    StartWrite(&hello_);
    StartRead(&in_);
    AddHold();
    StartCall();
  }

  // Called by the heartbeat thread; false when not sent now.
  // StartWrite is called without mu_ held: gRPC may run OnWriteDone inline.
  // The hold cannot be released while write_in_flight_ is set.
  bool MaybeHeartbeat(absl::Time now) {
    {
      absl::MutexLock lock(&mu_);
      if (!welcomed_ || read_over_ || write_in_flight_ || now < next_beat_) return false;
      write_in_flight_ = true;
      next_beat_ = now + interval_;
    }
    StartWrite(&beat_);
    return true;
  }

  void Cancel() { context_.TryCancel(); }

  bool Welcomed() {
    absl::MutexLock lock(&mu_);
    return welcomed_;
  }
  bool Up() {
    absl::MutexLock lock(&mu_);
    return welcomed_ && !read_over_;
  }
  bool Done() {
    absl::MutexLock lock(&mu_);
    return done_;
  }
  grpc::Status FinalStatus() {
    absl::MutexLock lock(&mu_);
    return status_;
  }

  void OnWriteDone(bool /*ok*/) override {
    bool release = false;
    {
      absl::MutexLock lock(&mu_);
      write_in_flight_ = false;
      release = read_over_ && !hold_released_;
      hold_released_ |= release;
    }
    if (release) RemoveHold();
  }

  void OnReadDone(bool ok) override {
    if (!ok) {
      bool release = false;
      {
        absl::MutexLock lock(&mu_);
        read_over_ = true;
        release = !write_in_flight_ && !hold_released_;
        hold_released_ |= release;
      }
      if (release) RemoveHold();
      return;
    }
    if (in_.has_welcome()) {
      absl::MutexLock lock(&mu_);
      welcomed_ = true;
      interval_ = absl::Milliseconds(std::max<int64_t>(in_.welcome().heartbeat_interval_ms(), 100));
      next_beat_ = absl::Now() + interval_;
    }
    in_.Clear();
    StartRead(&in_);
  }

  void OnDone(const grpc::Status& status) override {
    absl::MutexLock lock(&mu_);
    status_ = status;
    done_ = true;
  }

 private:
  const std::string name_;
  const std::string token_;
  grpc::ClientContext context_;
  v1::AgentMessage hello_;
  v1::AgentMessage beat_;
  v1::ControllerMessage in_;

  absl::Mutex mu_;
  bool welcomed_ ABSL_GUARDED_BY(mu_) = false;
  bool read_over_ ABSL_GUARDED_BY(mu_) = false;
  bool write_in_flight_ ABSL_GUARDED_BY(mu_) = false;
  bool hold_released_ ABSL_GUARDED_BY(mu_) = false;
  bool done_ ABSL_GUARDED_BY(mu_) = false;
  absl::Duration interval_ ABSL_GUARDED_BY(mu_) = absl::Seconds(5);
  absl::Time next_beat_ ABSL_GUARDED_BY(mu_);
  grpc::Status status_ ABSL_GUARDED_BY(mu_);
};

int RunIdle(const LoadOptions& options) {
  std::vector<std::unique_ptr<v1::AgentGateway::Stub>> stubs;
  std::vector<std::unique_ptr<IdleAgent>> agents;
  for (int i = 0; i < options.agents; ++i) {
    grpc::ChannelArguments args;
    // One TCP connection per agent, as in a real fleet (gRPC would
    // otherwise share one subchannel between identical channels).
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 20000);
    args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 10000);
    args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
    stubs.push_back(v1::AgentGateway::NewStub(grpc::CreateCustomChannel(
        options.controller, ChannelCredentialsFor(options.controller, options.tls), args)));
    char name[80];
    std::snprintf(name, sizeof name, "%s-%04d", options.prefix.c_str(), i);
    agents.push_back(std::make_unique<IdleAgent>(options, name));
  }
  const absl::Time start = absl::Now();
  // Dial in waves of 50 so the listen backlog is not the thing measured.
  for (int i = 0; i < options.agents; ++i) {
    agents[static_cast<size_t>(i)]->Start(stubs[static_cast<size_t>(i)].get());
    if (i % 50 == 49) absl::SleepFor(absl::Milliseconds(20));
  }
  std::atomic<bool> stop{false};
  std::atomic<int64_t> beats{0};
  std::thread heartbeat([&] {
    while (!stop.load()) {
      const absl::Time now = absl::Now();
      for (auto& a : agents) beats += a->MaybeHeartbeat(now) ? 1 : 0;
      absl::SleepFor(absl::Milliseconds(20));
    }
  });
  const absl::Time give_up = start + options.connect_timeout;
  int welcomed = 0;
  while (absl::Now() < give_up) {
    welcomed = static_cast<int>(std::count_if(agents.begin(), agents.end(),
                                              [](auto& a) { return a->Welcomed(); }));
    if (welcomed == options.agents) break;
    absl::SleepFor(absl::Milliseconds(50));
  }
  const double connect_s = Seconds(absl::Now() - start);
  std::cout << "ready " << welcomed << std::endl;
  const double cpu0 = CpuSecondsOfThisProcess();
  absl::SleepFor(options.hold);
  const double cpu = CpuSecondsOfThisProcess() - cpu0;
  const int up = static_cast<int>(std::count_if(agents.begin(), agents.end(),
                                                [](auto& a) { return a->Up(); }));
  stop = true;
  heartbeat.join();
  for (auto& a : agents) a->Cancel();
  const absl::Time drain = absl::Now() + absl::Seconds(30);
  while (absl::Now() < drain &&
         !std::all_of(agents.begin(), agents.end(), [](auto& a) { return a->Done(); })) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  std::map<std::string, int> errors;  // why streams ended during the hold
  for (auto& a : agents) {
    if (!a->Done()) {
      errors["not done"]++;
      continue;
    }
    grpc::Status s = a->FinalStatus();
    if (s.error_code() != grpc::StatusCode::CANCELLED) errors[s.error_message()]++;
  }
  for (const auto& [why, n] : errors) std::cerr << "fleetbench_load: " << n << " x " << why << "\n";
  std::printf(
      "{\"mode\":\"idle\",\"agents\":%d,\"welcomed\":%d,\"connected_after_hold\":%d,"
      "\"connect_s\":%.2f,\"hold_s\":%.0f,\"heartbeats_sent\":%lld,\"load_cpu_s\":%.2f}\n",
      options.agents, welcomed, up, connect_s, Seconds(options.hold),
      static_cast<long long>(beats.load()), cpu);
  std::fflush(stdout);
  bool all_done = std::all_of(agents.begin(), agents.end(), [](auto& a) { return a->Done(); });
  if (!all_done) {
    // A reactor that never finished must not be destroyed under gRPC.
    std::fflush(nullptr);
    std::_Exit(up == options.agents ? 0 : 1);
  }
  return up == options.agents ? 0 : 1;
}

// ------------------------------------------------------------------- flags

int Usage(const std::string& error) {
  std::cerr << "fleetbench_load: " << error << "\n"
            << "usage: fleetbench_load --mode ingest|idle --controller HOST:PORT\n"
            << "  ingest: [--streams 4] [--batch 1000] [--window 8] [--samples 2000000]\n"
            << "          [--params 2] [--prefix ingest]\n"
            << "  idle:   [--agents 1000] [--hold 60] [--prefix idle]\n"
            << "token from $FLEETBENCH_TOKEN\n";
  return 2;
}

}  // namespace
}  // namespace fleetbench::bench

int main(int argc, char** argv) {
  using fleetbench::bench::Usage;
  fleetbench::bench::LoadOptions options;
  std::map<std::string, std::string> flags;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--", 0) != 0) return Usage("unexpected argument " + a);
    a = a.substr(2);
    if (auto eq = a.find('='); eq != std::string::npos) {
      flags[a.substr(0, eq)] = a.substr(eq + 1);
    } else if (i + 1 < argc) {
      flags[a] = argv[++i];
    } else {
      return Usage("--" + a + " needs a value");
    }
  }
  auto take_int = [&](const char* name, auto* out) {
    auto it = flags.find(name);
    if (it == flags.end()) return true;
    int64_t v = 0;
    if (!absl::SimpleAtoi(it->second, &v) || v < 0) return false;
    *out = static_cast<std::remove_pointer_t<decltype(out)>>(v);
    flags.erase(it);
    return true;
  };
  options.mode = flags["mode"];
  flags.erase("mode");
  if (flags.contains("controller")) options.controller = flags["controller"];
  flags.erase("controller");
  options.prefix = flags.contains("prefix") ? flags["prefix"] : options.mode;
  flags.erase("prefix");
  options.tls.insecure = flags.contains("insecure");
  flags.erase("insecure");
  int64_t hold_s = 60;
  if (!take_int("streams", &options.streams) || !take_int("batch", &options.batch) ||
      !take_int("window", &options.window) || !take_int("samples", &options.samples) ||
      !take_int("params", &options.params) || !take_int("agents", &options.agents) ||
      !take_int("hold", &hold_s)) {
    return Usage("numeric flags want a count >= 0");
  }
  options.hold = absl::Seconds(hold_s);
  if (!flags.empty()) return Usage("unknown flag --" + flags.begin()->first);
  if (options.streams < 1 || options.batch < 1 || options.window < 1 || options.agents < 1) {
    return Usage("--streams, --batch, --window and --agents want at least 1");
  }
  const char* token = std::getenv("FLEETBENCH_TOKEN");
  if (token == nullptr || *token == '\0') return Usage("set FLEETBENCH_TOKEN");
  options.token = token;
  if (!options.tls.insecure) {
    absl::StatusOr<std::string> ca = fleetbench::LoadCaPem("");
    if (!ca.ok()) return Usage(std::string(ca.status().message()));
    options.tls.ca_pem = *ca;
  }
  // 1000 agents need 1000+ sockets.
  rlimit nofile{};
  if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
    nofile.rlim_cur = nofile.rlim_max;
    setrlimit(RLIMIT_NOFILE, &nofile);
  }
  if (options.mode == "ingest") return fleetbench::bench::RunIngest(options);
  if (options.mode == "idle") return fleetbench::bench::RunIdle(options);
  return Usage("--mode is ingest or idle");
}
