// agent/runtime/agent.h — the node agent: dials out to the controller, holds
// one bidirectional stream, runs the tasks it is given one at a time, and
// spools every report until the controller acknowledged it.
//
// Connection: hello (identity, labels, facts, capabilities, the task it is
// running and the finished tasks still spooled), then the spool is resent,
// then heartbeats. On any stream error it reconnects with exponential
// backoff and full jitter (reconnect_backoff.h), starting over after a
// session that was up for `backoff_reset_after`; with several controllers
// a dial nobody answers goes on to the next at once (controller_list.h).
// UNAUTHENTICATED,
// PERMISSION_DENIED (a hello as another node, an enrolled name without its
// certificate) and INVALID_ARGUMENT from the controller are not retried:
// they need the operator.
//
// Renewal (agent/runtime/identity.h): with a certificate, a renewal
// thread per connection renews it once `renew_at` of its life has passed,
// then, when no task runs or waits (a group task ends with its stream),
// ends the session so that the next one dials with the new identity, at
// once. Until then the stream stays up on the old certificate.
//
// Preemption (preemption_watch.h): with a notice source, a thread polls it
// while Run() runs; the first notice is sent to the controller at once and
// again after each hello until the node goes (the controller counts it
// once), so the node is recorded as preempted and given no new task.
//
// Threads: Run() owns the connection (reader); one heartbeat thread and
// one renewal thread per connection; one executor thread for tasks; one
// preemption thread with a notice source.
// Stop() may be called from any thread (a signal handler thread).
#ifndef FLEETBENCH_AGENT_RUNTIME_AGENT_H_
#define FLEETBENCH_AGENT_RUNTIME_AGENT_H_

#include <atomic>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>
#include <thread>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "agent/runtime/preemption_watch.h"
#include "agent/runtime/relay_rendezvous.h"
#include "agent/runtime/spool.h"
#include "agent/runtime/task_runner.h"
#include "common/transport.h"
#include "fleetbench/v1/agent_service.grpc.pb.h"

namespace fleetbench::agent {

struct AgentOptions {
  // HOST:PORT each: a controller, or a leader and its standbys on one
  // history, dialled in turn (controller_list.h).
  std::vector<std::string> controllers = {"127.0.0.1:7070"};
  std::string name;
  std::map<std::string, std::string> labels;
  std::string state_dir;
  std::string scratch_dir;  // empty: <state_dir>/scratch
  std::string token;  // the shared token; not sent once the node has a certificate
  // TLS to the controller, with this node's certificate once enrolled
  // (agent/runtime/identity.h).
  ClientTls tls;
  std::string advertise_addr;  // empty: the controller uses the stream's source
  absl::Duration initial_backoff = absl::Milliseconds(200);
  absl::Duration max_backoff = absl::Seconds(30);
  // A welcomed session up this long resets the backoff to initial_backoff.
  absl::Duration backoff_reset_after = absl::Seconds(5);
  // The part of its certificate's life after which the node renews it.
  double renew_at = 2.0 / 3;
  // Where a preemption notice comes from (null: none), polled this often.
  std::shared_ptr<const PreemptionWatch> preemption;
  absl::Duration preemption_poll = absl::Seconds(5);
};

class Agent {
 public:
  // `runner` must outlive the agent.
  Agent(AgentOptions options, std::unique_ptr<Spool> spool, TaskRunner* runner);
  ~Agent();

  // Serves until Stop(); returns the reason for giving up, OK after Stop().
  absl::Status Run();
  void Stop();

 private:
  using Stream = grpc::ClientReaderWriter<v1::AgentMessage, v1::ControllerMessage>;

  // One connection, from hello to the stream's end. `connected_for` is set
  // to the time from the welcome to the end when there was a welcome.
  absl::Status Session(v1::AgentGateway::Stub& stub, const std::string& address,
                       std::optional<absl::Duration>* connected_for);
  bool Send(const v1::AgentMessage& message);
  void HandleControllerMessage(const v1::ControllerMessage& message);
  void HeartbeatLoop(absl::Duration interval, std::atomic<bool>* connection_over);
  void RenewalLoop(v1::AgentGateway::Stub& stub, std::atomic<bool>* connection_over);
  void PreemptionLoop();
  // The notice, when there is one, on the current stream.
  void SendPreempting();
  std::unique_ptr<v1::AgentGateway::Stub> NewStub(const std::string& address);
  void ExecutorLoop();
  v1::Hello MakeHello();
  // Spools then sends; kept in the spool until acked.
  void EmitReport(const v1::Report& report);

  const AgentOptions options_;
  std::unique_ptr<Spool> spool_;
  TaskRunner* const runner_;
  std::vector<v1::Capability> capabilities_;

  absl::Mutex write_mu_;
  Stream* stream_ ABSL_GUARDED_BY(write_mu_) = nullptr;

  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  grpc::ClientContext* context_ ABSL_GUARDED_BY(mu_) = nullptr;
  // This node's transport: options_.tls until a renewal replaces it.
  ClientTls tls_ ABSL_GUARDED_BY(mu_);
  // Set by a renewal: the next session dials with tls_, on a new channel.
  bool identity_renewed_ ABSL_GUARDED_BY(mu_) = false;
  grpc::ClientContext* renew_context_ ABSL_GUARDED_BY(mu_) = nullptr;
  std::deque<v1::RunTask> queue_ ABSL_GUARDED_BY(mu_);
  std::string running_task_ ABSL_GUARDED_BY(mu_);
  std::atomic<bool> cancel_running_{false};
  // The running task's rendezvous when it is a group task: the reader
  // hands it the controller's KvResponses, a cancel and the stream's end.
  std::shared_ptr<RelayRendezvous> relay_ ABSL_GUARDED_BY(mu_);
  std::optional<v1::Preempting> preempting_ ABSL_GUARDED_BY(mu_);
  bool run_over_ ABSL_GUARDED_BY(mu_) = false;  // Run() returned
  std::thread executor_;
};

}  // namespace fleetbench::agent

#endif  // FLEETBENCH_AGENT_RUNTIME_AGENT_H_
