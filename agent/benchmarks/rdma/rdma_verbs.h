// agent/benchmarks/rdma/rdma_verbs.h — the libibverbs side of the "rdma"
// benchmark: device discovery and an RdmaEndpoint that owns one RC queue
// pair, its completion queue and a registered buffer.
//
// Only the implementation (rdma_verbs.cc: discovery and setup;
// rdma_verbs_writes.cc: the tests' work requests; rdma_verbs_endpoint.h:
// the endpoint class they share) includes <infiniband/verbs.h>; this header
// exposes plain C++ types. Every verbs object is held by a RAII owner and
// released in dependency order (QP, CQ, MR, PD, device context, buffer) on
// every path.
//
// Errors: FAILED_PRECONDITION when the node has no usable RDMA device, the
// named device or an active port is missing, or RoCE has no GID at
// gid_index; INVALID_ARGUMENT when a parameter exceeds what the device
// supports (port number, GID index, qp_depth, size); RESOURCE_EXHAUSTED for
// ENOMEM (registration also needs `ulimit -l`); UNAVAILABLE when writes are
// not acknowledged (transport retries exhausted); DEADLINE_EXCEEDED when no
// completion or peer write arrives for kNoProgressTimeout; CANCELLED on
// cancel (checked while spinning, a few times a millisecond); INTERNAL for
// any other failed verbs call, with the call, errno, file and line.
//
// Thread safety: an endpoint is used by one thread at a time. The probe
// functions keep no state.
//
// Nothing here has run on RDMA hardware (docs/rdma.md, "What is validated").
#ifndef FLEETBENCH_AGENT_BENCHMARKS_RDMA_RDMA_VERBS_H_
#define FLEETBENCH_AGENT_BENCHMARKS_RDMA_RDMA_VERBS_H_

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "agent/benchmarks/rdma/rdma_session.h"

namespace fleetbench::agent::rdma {

// A test stalls this long without a completion or a peer write before it
// fails DEADLINE_EXCEEDED (the peer died, the path is broken).
inline constexpr std::chrono::seconds kNoProgressTimeout{10};
// perftest's default completion moderation (--cq-mod): one signaled write
// per this many, or per window when that is smaller.
inline constexpr int kSignalEvery = 100;

// The names of the RDMA devices on this node, in ibv_get_device_list order;
// FAILED_PRECONDITION with the reason when there are none.
absl::StatusOr<std::vector<std::string>> ListRdmaDevices();

// Opens options.device (the first device when empty) and creates the queue
// pair in RESET with a buffer of 2 x (kLatencySlotBytes + size) bytes.
absl::StatusOr<std::unique_ptr<RdmaEndpoint>> OpenVerbsEndpoint(
    const EndpointOptions& options);

// A failed verbs call as a Status: "<call> failed: <strerror> (errno N) at
// file:line". The code follows errno (see the header comment).
absl::Status VerbsCallStatus(int error, absl::string_view call,
                             absl::string_view file, int line);

}  // namespace fleetbench::agent::rdma

#endif  // FLEETBENCH_AGENT_BENCHMARKS_RDMA_RDMA_VERBS_H_
