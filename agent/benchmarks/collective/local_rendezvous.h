// agent/benchmarks/collective/local_rendezvous.h — a Rendezvous held in this
// process: what a collective run alone (a group of one) meets itself
// through, and what the engine's tests give N ranks running in N threads.
// Across agents the controller's relay takes its place.
//
// Thread-safe. Get() waits on a condition, never polls; Close() wakes every
// waiter with ABORTED (the group ended).
#ifndef FLEETBENCH_AGENT_BENCHMARKS_COLLECTIVE_LOCAL_RENDEZVOUS_H_
#define FLEETBENCH_AGENT_BENCHMARKS_COLLECTIVE_LOCAL_RENDEZVOUS_H_

#include <map>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "agent/benchmarks/benchmark.h"

namespace fleetbench::collective {

class LocalRendezvous final : public agent::Rendezvous {
 public:
  absl::Status Set(const std::string& key, const std::string& value) override;
  absl::StatusOr<std::string> Get(const std::string& key,
                                  absl::Duration timeout) override;
  // Every waiting and later Get() answers ABORTED.
  void Close();

 private:
  absl::Mutex mu_;
  std::map<std::string, std::string> values_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace fleetbench::collective

#endif  // FLEETBENCH_AGENT_BENCHMARKS_COLLECTIVE_LOCAL_RENDEZVOUS_H_
