// agent/benchmarks/collective/rendezvous_store.h — gloo's rendezvous store
// over the group's agent::Rendezvous (the controller's relay, or a
// LocalRendezvous), so gloo's ranks find each other's TCP addresses through
// the controller with no shared file system and no extra port.
//
// gloo's Store interface reports failure by throwing; this one throws
// gloo::IoException and keeps the Rendezvous' status (error()), so the
// engine returns the code the relay gave (DEADLINE_EXCEEDED when a member
// never came, CANCELLED, ABORTED) rather than a bare exception text.
// Every key is put under `prefix`. A wait never outlasts `deadline` and
// gives up within a slice of `cancelled()` turning true.
//
// Abandon() (from any thread) makes every later call fail at once without
// touching the rendezvous or `cancelled`, and waits for a call in progress
// to return (one Get slice at most): after it, the caller may destroy both
// while gloo still holds the store. Otherwise used by one thread, as gloo
// does.
#ifndef FLEETBENCH_AGENT_BENCHMARKS_COLLECTIVE_RENDEZVOUS_STORE_H_
#define FLEETBENCH_AGENT_BENCHMARKS_COLLECTIVE_RENDEZVOUS_STORE_H_

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "agent/benchmarks/benchmark.h"
#include "gloo/rendezvous/store.h"

namespace fleetbench::collective {

class RendezvousStore final : public gloo::rendezvous::Store {
 public:
  // `rendezvous` must outlive the store; `cancelled` may be empty.
  RendezvousStore(agent::Rendezvous* rendezvous, std::string prefix,
                  absl::Time deadline, std::function<bool()> cancelled);

  void set(const std::string& key, const std::vector<char>& data) override;
  std::vector<char> get(const std::string& key) override;
  void wait(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys,
            const std::chrono::milliseconds& timeout) override;

  void Abandon();

  // OK until a call failed; then the first failure.
  const absl::Status& error() const { return error_; }
  // The key (without prefix) no member set in time; empty if none.
  const std::string& missing_key() const { return missing_key_; }

 private:
  // The value under prefix+key, waiting until `until`; throws on failure.
  const std::string& Fetch(const std::string& key, absl::Time until);
  [[noreturn]] void Fail(absl::Status status);

  absl::Mutex mu_;  // held around every use of rendezvous_ and cancelled_
  bool abandoned_ ABSL_GUARDED_BY(mu_) = false;
  agent::Rendezvous* rendezvous_;
  std::string prefix_;
  absl::Time deadline_;
  std::function<bool()> cancelled_;
  std::map<std::string, std::string> fetched_;  // key -> value
  absl::Status error_;
  std::string missing_key_;
};

}  // namespace fleetbench::collective

#endif  // FLEETBENCH_AGENT_BENCHMARKS_COLLECTIVE_RENDEZVOUS_STORE_H_
