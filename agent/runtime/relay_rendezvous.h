// agent/runtime/relay_rendezvous.h — a group task's Rendezvous over the
// agent's stream to the controller (docs/protocol.md, "Group tasks and
// the rendezvous relay"). Each Set and Get is one KvRequest; the controller's
// relay answers it with the KvResponse of the same request id, which the
// agent's reader hands to Deliver(). Request ids come from one counter per
// process, so a late answer to an earlier task's request never matches a
// later task's.
//
// Waits: Get(key, timeout) asks the controller to wait up to `timeout`
// (capped there by the group's deadline) and waits for the answer a little
// longer than that, so a controller that went silent cannot hang a member.
// Cancel() (the task was cancelled) ends every pending call with CANCELLED
// at once, and every later one; StreamLost() (the stream ended) ends the
// pending ones with UNAVAILABLE. A call made while not connected fails
// UNAVAILABLE without waiting.
//
// Thread-safe: members call Set/Get from any thread; the reader calls
// Deliver/Cancel/StreamLost.
#ifndef FLEETBENCH_AGENT_RUNTIME_RELAY_RENDEZVOUS_H_
#define FLEETBENCH_AGENT_RUNTIME_RELAY_RENDEZVOUS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "agent/benchmarks/benchmark.h"
#include "fleetbench/v1/agent.pb.h"

namespace fleetbench::agent {

class RelayRendezvous : public Rendezvous {
 public:
  // Writes one message on the agent's current stream; false when there is
  // none (not connected).
  using SendFn = std::function<bool(const v1::AgentMessage&)>;
  // How much longer than its own wait a call waits for the controller.
  static constexpr absl::Duration kAnswerSlack = absl::Seconds(10);

  RelayRendezvous(std::string task_id, SendFn send);

  absl::Status Set(const std::string& key, const std::string& value) override;
  absl::StatusOr<std::string> Get(const std::string& key, absl::Duration timeout) override;

  // The controller's answer to one of this relay's requests; others are
  // ignored.
  void Deliver(const v1::KvResponse& response);
  void Cancel();
  void StreamLost();

 private:
  absl::StatusOr<std::string> Call(v1::KvRequest request, absl::Duration wait);

  const std::string task_id_;
  const SendFn send_;
  absl::Mutex mu_;
  // Requests sent and not yet answered, with their answer once it came.
  std::map<uint64_t, std::optional<v1::KvResponse>> pending_ ABSL_GUARDED_BY(mu_);
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  // Bumped by StreamLost: a call sent on an earlier stream gives up.
  uint64_t stream_generation_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace fleetbench::agent

#endif  // FLEETBENCH_AGENT_RUNTIME_RELAY_RENDEZVOUS_H_
