// agent/benchmarks/collective/gloo_engine.h — CPU collectives over gloo's
// TCP transport between the members of a group: all-reduce, all-gather and
// reduce-scatter of float32, timed per size of a sweep and checked against
// known values (kernels/collective_pattern.h, the arithmetic the NCCL
// backend checks with).
//
// One GlooEngine is one member: Connect() meets the other members through
// the group's Rendezvous (gloo's full mesh of TCP pairs, each rank
// listening on its own address), Sweep() runs one op over the sizes. Every
// member must call the same Sweep()s in the same order (they are
// collective). Sizes follow nccl-tests: `bytes` rounds down to whole floats
// divisible by the rank count; all-reduce sends and receives bytes,
// all-gather sends bytes/n and receives bytes, reduce-scatter sends bytes
// and receives bytes/n.
//
// Timing: per size, `warmup` untimed operations, then `iters` timed ones
// (steady clock around each); this rank's time per operation is the mean.
// After the sweep every rank's times are gathered (a small gloo
// all-gather), so each point also carries the group's time: the slowest
// rank's, and which rank that was.
//
// Errors: CANCELLED when cancelled() turned true (looked at every 100 ms;
// the operations stop at the next one); DEADLINE_EXCEEDED when a member did
// not come or an operation outlived the deadline (every gloo operation's
// timeout is the time left to it, so no rank hangs when a peer dies
// silently); UNAVAILABLE when a connection broke; INVALID_ARGUMENT for a
// size below one float per rank. A wrong result is not an error here: the
// point counts it (mismatches) and the caller fails the run with DATA_LOSS.
//
// A peer that stops closes its connections, which fails a blocked
// operation at once, with one exception in gloo's TCP transport: a send
// still queued on the broken connection (a message larger than the socket
// buffer) is never told and waits for its timeout, the deadline. So the
// operations run on a thread of their own, and a connection that breaks (a
// receive posted from every peer on a slot nobody sends to fails with it)
// or a cancel that the operations have not answered within 10 s ends
// Sweep() anyway: the stuck thread is left to gloo's timeout with all it
// uses (buffers), the caller is not. The engine's connections are closed
// then, so peers waiting on this rank fail at once, and every later
// Sweep() returns the same error.
//
// Thread safety: one engine per thread; engines of the same group may run
// in threads of one process (the tests do).
#ifndef FLEETBENCH_AGENT_BENCHMARKS_COLLECTIVE_GLOO_ENGINE_H_
#define FLEETBENCH_AGENT_BENCHMARKS_COLLECTIVE_GLOO_ENGINE_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/benchmarks/benchmark.h"

namespace gloo {
class Context;
}  // namespace gloo

namespace fleetbench::collective {

// Who this member is and how it meets the others.
struct GlooMember {
  int rank = 0;
  int size = 1;
  // The address this member listens on and peers dial (its IP in its
  // network namespace): an IP or host name, no port.
  std::string address = "127.0.0.1";
  agent::Rendezvous* rendezvous = nullptr;  // not owned; outlives the engine
  // Rendezvous keys are put under it (one connection per prefix).
  std::string key_prefix = "gloo/";
  absl::Time deadline = absl::InfiniteFuture();
  std::function<bool()> cancelled;  // may be empty
};

// One size of a sweep.
struct GlooPoint {
  uint64_t bytes = 0;        // after rounding, as nccl-tests counts it
  double seconds = 0;        // this rank, per operation
  double group_seconds = 0;  // the slowest rank, per operation
  int slowest_rank = 0;
  int64_t checked = 0;        // receive elements compared
  int64_t mismatches = 0;     // of those, how many were wrong
  double first_expected = 0;  // the first mismatch, when mismatches > 0
  double first_actual = 0;
};

class GlooEngine {
 public:
  // Meets every member of the group; DEADLINE_EXCEEDED naming the rank(s)
  // not there by `member.deadline`; CANCELLED within ~0.3 s of cancelled().
  // The meeting runs on a thread of its own (gloo's connect blocks); a
  // cancel interrupts it (gloo_mesh.h closes the pairs waiting for a peer)
  // and the thread has ended, with gloo's device, when Connect() returns.
  static absl::StatusOr<std::unique_ptr<GlooEngine>> Connect(
      const GlooMember& member);
  ~GlooEngine();

  // `op`: allreduce, allgather or reducescatter (kernels' op numbers via
  // agent::CollectiveOpNumber); `sizes` in bytes; iters >= 1.
  absl::StatusOr<std::vector<GlooPoint>> Sweep(
      const std::string& op, const std::vector<uint64_t>& sizes, int warmup,
      int iters);

  int rank() const;
  int size() const;

 private:
  // What the operations touch, shared with the thread that runs them.
  struct Session;
  GlooEngine(const GlooMember& member, std::shared_ptr<Session> session);

  std::function<bool()> cancelled_;  // may be empty; read on this thread only
  std::shared_ptr<Session> session_;
  std::thread sentinel_waiter_;  // waits for a broken connection
  // What Sweep() said when it left its operations behind: every later
  // Sweep() says it again.
  absl::Status left_behind_;
};

}  // namespace fleetbench::collective

#endif  // FLEETBENCH_AGENT_BENCHMARKS_COLLECTIVE_GLOO_ENGINE_H_
