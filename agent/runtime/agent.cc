#include "agent/runtime/agent.h"

#include <algorithm>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "agent/facts/facts.h"
#include "agent/facts/gpu_facts.h"
#include "agent/runtime/controller_list.h"
#include "agent/runtime/identity.h"
#include "agent/runtime/reconnect_backoff.h"
#include "common/logging.h"
#include "common/token.h"
#include "common/wire_limits.h"
#include "grpcpp/grpcpp.h"

namespace fleetbench::agent {
namespace {

constexpr char kAgentVersion[] = "fleetbench-agent/0.1.0";

}  // namespace

Agent::Agent(AgentOptions options, std::unique_ptr<Spool> spool, TaskRunner* runner)
    : options_(std::move(options)), spool_(std::move(spool)), runner_(runner) {
  tls_ = options_.tls;
  capabilities_ = runner_->Capabilities();
  executor_ = std::thread([this] { ExecutorLoop(); });
}

Agent::~Agent() {
  Stop();
  if (executor_.joinable()) executor_.join();
}

void Agent::Stop() {
  absl::MutexLock lock(&mu_);
  stopping_ = true;
  cancel_running_ = true;
  if (context_ != nullptr) context_->TryCancel();
  if (renew_context_ != nullptr) renew_context_->TryCancel();
}

std::unique_ptr<v1::AgentGateway::Stub> Agent::NewStub(const std::string& address) {
  ClientTls tls;
  {
    absl::MutexLock lock(&mu_);
    tls = tls_;
  }
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 20000);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 10000);
  args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  // Our own backoff decides when to redial, on a new channel each time
  // (Run); gRPC's own, within one attempt, is kept short.
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  // The limit every peer agrees on (common/wire_limits.h).
  args.SetMaxReceiveMessageSize(kMaxMessageBytes);
  args.SetMaxSendMessageSize(kMaxMessageBytes);
  return v1::AgentGateway::NewStub(DialController(address, tls, args));
}

absl::Status Agent::Run() {
  std::thread preemption;
  if (options_.preemption) preemption = std::thread([this] { PreemptionLoop(); });
  absl::Cleanup join_preemption = [&] {
    if (!preemption.joinable()) return;
    {
      absl::MutexLock lock(&mu_);
      run_over_ = true;  // nothing is left to tell
    }
    preemption.join();
  };
  ReconnectBackoff backoff({.initial = options_.initial_backoff,
                            .max = options_.max_backoff,
                            .reset_after = options_.backoff_reset_after});
  ControllerList controllers(options_.controllers);
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) return absl::OkStatus();
    }
    // A new channel for every session: one that failed to connect while
    // the controller was away never reaches it again (DialController).
    // It also dials with the identity a renewal left in tls_.
    const std::string address = controllers.current();
    std::unique_ptr<v1::AgentGateway::Stub> stub = NewStub(address);
    std::optional<absl::Duration> connected_for;
    absl::Status s = Session(*stub, address, &connected_for);
    if (absl::IsUnauthenticated(s) || absl::IsInvalidArgument(s) || absl::IsPermissionDenied(s)) {
      return s;
    }
    bool renewed = false;
    {
      absl::MutexLock lock(&mu_);
      std::swap(renewed, identity_renewed_);
    }
    // Dialled again at once with the new certificate: nothing failed, and
    // the same address is dialled (a welcome starts the round over).
    if (renewed && connected_for.has_value()) {
      (void)controllers.SessionEnded(/*welcomed=*/true);
      continue;
    }
    // A session always ends in an error (the controller went away), so how
    // it went is judged by its welcome and its length, not by its status.
    if (!controllers.SessionEnded(connected_for.has_value())) {
      LOG(WARNING) << "controller " << address << ": " << s.message() << "; trying "
                   << controllers.current();
      continue;
    }
    const absl::Duration wait =
        backoff.NextWait(connected_for.has_value(), connected_for.value_or(absl::ZeroDuration()));
    LOG(WARNING) << "controller " << address << ": " << s.message() << "; reconnecting in "
                 << absl::FormatDuration(wait);
    absl::MutexLock lock(&mu_);
    auto stopping = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return stopping_; };
    mu_.AwaitWithTimeout(absl::Condition(&stopping), wait);
  }
}

v1::Hello Agent::MakeHello() {
  v1::Hello hello;
  hello.set_name(options_.name);
  for (const auto& [k, v] : options_.labels) (*hello.mutable_labels())[k] = v;
  FactsOptions facts;
  facts.scratch_dir = options_.scratch_dir;
  *hello.mutable_facts() = ReadNodeFacts(facts);
  // GPU facts come from NVML; the live readings (clocks, power, the idle
  // PCIe link) change from one hello to the next and would make every
  // hello a new facts version, so the hello leaves them out.
  gpu::FillGpuFacts(hello.mutable_facts());
  for (v1::GpuFacts& g : *hello.mutable_facts()->mutable_gpus()) g.clear_readings();
  hello.set_agent_version(kAgentVersion);
  hello.set_advertise_addr(options_.advertise_addr);
  {
    absl::MutexLock lock(&mu_);
    hello.set_running_task_id(running_task_);
  }
  for (const std::string& id : spool_->FinishedTaskIds()) hello.add_finished_task_ids(id);
  for (const auto& c : capabilities_) *hello.add_capabilities() = c;
  return hello;
}

absl::Status Agent::Session(v1::AgentGateway::Stub& stub, const std::string& address,
                             std::optional<absl::Duration>* connected_for) {
  grpc::ClientContext context;
  // A node with a certificate is its certificate; the shared token stays
  // home (docs/security.md, "One identity per node").
  bool certified = false;
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return absl::OkStatus();
    context_ = &context;
    certified = !tls_.cert_pem.empty();
  }
  if (!certified) context.AddMetadata(kAuthMetadataKey, "Bearer " + options_.token);
  std::unique_ptr<Stream> stream = stub.Connect(&context);
  auto end = [&](absl::Status why) {
    {
      absl::MutexLock lock(&write_mu_);
      stream_ = nullptr;
    }
    {
      absl::MutexLock lock(&mu_);
      context_ = nullptr;
    }
    return why;
  };

  v1::AgentMessage hello;
  *hello.mutable_hello() = MakeHello();
  // The controller would refuse it (INVALID_ARGUMENT, not retried); say
  // why here, where the operator reads the log, without sending megabytes.
  if (const size_t bytes = hello.hello().facts().ByteSizeLong(); bytes > kMaxFactsBytes) {
    return end(absl::InvalidArgumentError(absl::StrCat(
        "this node's facts are ", bytes, " bytes, over the ", kMaxFactsBytes,
        "-byte limit of a hello (docs/protocol.md, Bounds)")));
  }
  if (const size_t bytes = hello.hello().ByteSizeLong(); bytes > kMaxHelloBytes) {
    return end(absl::InvalidArgumentError(absl::StrCat(
        "this node's hello is ", bytes, " bytes, over the ", kMaxHelloBytes, "-byte limit")));
  }
  v1::ControllerMessage first;
  const bool sent = stream->Write(hello);
  if (!sent || !stream->Read(&first) || !first.has_welcome()) {
    // A stream that did read something other than a welcome is still open:
    // end it. One that failed already carries the controller's status (e.g.
    // UNAUTHENTICATED), which must reach the caller intact.
    if (sent && first.kind_case() != v1::ControllerMessage::KIND_NOT_SET) context.TryCancel();
    grpc::Status status = stream->Finish();
    if (status.ok()) status = grpc::Status(grpc::StatusCode::UNAVAILABLE, "no welcome");
    return end(absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                            status.error_message()));
  }
  LOG(INFO) << "connected to " << address << " as " << options_.name;
  const absl::Time welcomed_at = absl::Now();
  {
    absl::MutexLock lock(&write_mu_);
    stream_ = stream.get();
  }
  // Everything not acknowledged before goes again; the controller ignores
  // sample ids it already stored.
  for (const v1::Report& report : spool_->Pending()) {
    v1::AgentMessage m;
    *m.mutable_report() = report;
    if (!Send(m)) break;
  }
  SendPreempting();
  std::atomic<bool> connection_over{false};
  const absl::Duration interval =
      absl::Milliseconds(std::max<int64_t>(first.welcome().heartbeat_interval_ms(), 100));
  std::thread heartbeat([&] { HeartbeatLoop(interval, &connection_over); });
  std::thread renewal;
  if (certified) renewal = std::thread([&] { RenewalLoop(stub, &connection_over); });

  v1::ControllerMessage message;
  while (stream->Read(&message)) {
    HandleControllerMessage(message);
  }
  {
    absl::MutexLock lock(&write_mu_);
    stream_ = nullptr;
  }
  {
    // A member waiting for the relay hears no answer on a gone stream.
    absl::MutexLock lock(&mu_);
    if (relay_) relay_->StreamLost();
  }
  connection_over = true;
  {
    // Wake the heartbeat and renewal threads now rather than at their
    // next tick; a renewal under way ends with its stream.
    absl::MutexLock lock(&mu_);
    if (renew_context_ != nullptr) renew_context_->TryCancel();
  }
  heartbeat.join();
  if (renewal.joinable()) renewal.join();
  grpc::Status status = stream->Finish();
  *connected_for = absl::Now() - welcomed_at;
  // The controller ended this node's identity (nodes revoke): not retried.
  if (status.error_code() == grpc::StatusCode::UNAUTHENTICATED) {
    return end(absl::UnauthenticatedError(status.error_message()));
  }
  return end(absl::UnavailableError(
      status.ok() ? "stream closed by controller" : status.error_message()));
}

bool Agent::Send(const v1::AgentMessage& message) {
  absl::MutexLock lock(&write_mu_);
  if (stream_ == nullptr) return false;
  return stream_->Write(message);
}

void Agent::HeartbeatLoop(absl::Duration interval, std::atomic<bool>* connection_over) {
  v1::AgentMessage beat;
  beat.mutable_heartbeat();
  auto wake = [&]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return stopping_ || connection_over->load();
  };
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      if (mu_.AwaitWithTimeout(absl::Condition(&wake), interval)) return;
    }
    Send(beat);
  }
}

void Agent::PreemptionLoop() {
  auto stopping = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return stopping_ || run_over_; };
  while (true) {
    std::optional<PreemptionNotice> notice = options_.preemption->Check();
    if (notice) {
      v1::Preempting p;
      p.set_source(notice->source);
      if (notice->termination != absl::InfinitePast()) {
        p.set_termination_unix_ms(absl::ToUnixMillis(notice->termination));
      }
      p.set_noticed_unix_ms(absl::ToUnixMillis(absl::Now()));
      LOG(WARNING) << "preemption notice from " << notice->source
                   << (notice->termination != absl::InfinitePast()
                           ? ", ends at " + absl::FormatTime(notice->termination)
                           : std::string());
      {
        absl::MutexLock lock(&mu_);
        preempting_ = p;
      }
      SendPreempting();
      return;  // the node is going: one notice is all there is to say
    }
    absl::MutexLock lock(&mu_);
    if (mu_.AwaitWithTimeout(absl::Condition(&stopping), options_.preemption_poll)) return;
  }
}

void Agent::SendPreempting() {
  v1::AgentMessage m;
  {
    absl::MutexLock lock(&mu_);
    if (!preempting_) return;
    *m.mutable_preempting() = *preempting_;
  }
  Send(m);
}

void Agent::RenewalLoop(v1::AgentGateway::Stub& stub, std::atomic<bool>* connection_over) {
  ClientTls current;
  {
    absl::MutexLock lock(&mu_);
    current = tls_;
  }
  absl::StatusOr<x509::CertInfo> info = x509::ParseCert(current.cert_pem);
  if (!info.ok()) return;
  auto over = [&]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return stopping_ || connection_over->load();
  };
  absl::Time due = RenewalTime(*info, options_.renew_at);
  absl::StatusOr<ClientTls> renewed = absl::UnavailableError("not yet");
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      if (mu_.AwaitWithTimeout(absl::Condition(&over),
                               std::max(due - absl::Now(), absl::ZeroDuration()))) {
        return;
      }
    }
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(20)));
    {
      absl::MutexLock lock(&mu_);
      if (over()) return;
      renew_context_ = &context;
    }
    renewed = RenewIdentity(stub, &context, options_.state_dir, options_.name, current);
    {
      absl::MutexLock lock(&mu_);
      renew_context_ = nullptr;
    }
    if (renewed.ok()) break;
    // A revoked or replaced identity: the stream ends with the reason.
    if (absl::IsUnauthenticated(renewed.status()) || absl::IsPermissionDenied(renewed.status())) {
      LOG(ERROR) << renewed.status().message();
      return;
    }
    const absl::Duration retry = std::clamp((info->not_after - absl::Now()) / 20,
                                            absl::Seconds(1), absl::Minutes(5));
    LOG(WARNING) << renewed.status().message() << "; trying again in "
                 << absl::FormatDuration(retry);
    due = absl::Now() + retry;
  }
  absl::MutexLock lock(&mu_);
  tls_ = *renewed;
  identity_renewed_ = true;
  // The old certificate holds this stream up meanwhile; a group task
  // would end with it, so the switch waits for no task to run or wait.
  auto idle_or_over = [&]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return over() || (running_task_.empty() && queue_.empty());
  };
  mu_.Await(absl::Condition(&idle_or_over));
  if (over()) return;
  LOG(INFO) << "reconnecting with the renewed certificate";
  if (context_ != nullptr) context_->TryCancel();
}

void Agent::HandleControllerMessage(const v1::ControllerMessage& message) {
  if (message.has_ack()) {
    // Stored, or the part of it that could be, when `error` says what was
    // refused: resending would not change the answer, so it leaves the
    // spool either way.
    if (!message.ack().error().empty()) {
      LOG(WARNING) << "controller did not store all of report " << message.ack().report_id()
                   << ": " << message.ack().error();
    }
    if (absl::Status s = spool_->Remove(message.ack().report_id()); !s.ok()) {
      LOG(ERROR) << s;
    }
    return;
  }
  if (message.has_kv_response()) {
    std::shared_ptr<RelayRendezvous> relay;
    {
      absl::MutexLock lock(&mu_);
      relay = relay_;
    }
    if (relay) relay->Deliver(message.kv_response());
    return;
  }
  if (message.has_run_task()) {
    const v1::RunTask& task = message.run_task();
    absl::MutexLock lock(&mu_);
    if (running_task_ == task.task_id()) return;  // resent after a reconnect
    for (const auto& q : queue_) {
      if (q.task_id() == task.task_id()) return;
    }
    queue_.push_back(task);
    return;
  }
  if (message.has_cancel_task()) {
    const std::string& id = message.cancel_task().task_id();
    v1::RunTask dropped;
    {
      absl::MutexLock lock(&mu_);
      if (running_task_ == id) {
        cancel_running_ = true;
        if (relay_) relay_->Cancel();  // its waits end now
        return;
      }
      auto it = std::find_if(queue_.begin(), queue_.end(),
                             [&](const v1::RunTask& t) { return t.task_id() == id; });
      if (it == queue_.end()) return;
      dropped = *it;
      queue_.erase(it);
    }
    EmitReport(FinalReport(id, v1::TASK_STATE_CANCELLED, "cancelled before it started", {}));
  }
}

void Agent::EmitReport(const v1::Report& report) {
  if (absl::Status s = spool_->Put(report); !s.ok()) {
    // Still send it: the controller may store it. But say loudly that a
    // crash now would lose it.
    LOG(ERROR) << "spooling report: " << s;
  }
  v1::AgentMessage m;
  *m.mutable_report() = report;
  Send(m);
}

void Agent::ExecutorLoop() {
  while (true) {
    v1::RunTask task;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
        return stopping_ || !queue_.empty();
      };
      mu_.Await(absl::Condition(&ready));
      if (stopping_) return;
      task = std::move(queue_.front());
      queue_.pop_front();
      running_task_ = task.task_id();
      cancel_running_ = false;
      relay_.reset();
      if (task.has_group()) {
        relay_ = std::make_shared<RelayRendezvous>(
            task.task_id(), [this](const v1::AgentMessage& m) { return Send(m); });
      }
    }
    v1::AgentMessage started;
    started.mutable_task_started()->set_task_id(task.task_id());
    Send(started);
    LOG(INFO) << "task " << task.task_id() << ": " << task.benchmarks_size() << " benchmark(s)";
    TaskRunner::Hooks hooks;
    hooks.report = [this](const v1::Report& r) { EmitReport(r); };
    hooks.progress = [this](const v1::Progress& p) {
      v1::AgentMessage m;
      *m.mutable_progress() = p;
      Send(m);
    };
    hooks.publish_port = [this](const std::string& task_id, int port) -> absl::Status {
      v1::AgentMessage m;
      m.mutable_port_published()->set_task_id(task_id);
      m.mutable_port_published()->set_port(port);
      if (!Send(m)) return absl::UnavailableError("not connected to the controller");
      return absl::OkStatus();
    };
    std::shared_ptr<RelayRendezvous> relay;
    {
      absl::MutexLock lock(&mu_);
      relay = relay_;
    }
    hooks.rendezvous = relay.get();
    runner_->Execute(task, cancel_running_, hooks);
    absl::MutexLock lock(&mu_);
    running_task_.clear();
    relay_.reset();
  }
}

}  // namespace fleetbench::agent
