// common/wire_limits.h — the one set of size limits every peer agrees on:
// the controller's server, the agent's channel and the CLI's channel use the
// same message limit, and every input is bounded at the door (a run's
// parameters and labels at StartRun, an agent's labels and facts at hello)
// far below it, so nothing a user or agent may send makes a message that
// another peer cannot read. Large reads are paged by bytes as well as by
// count (kPageBudgetBytes). docs/protocol.md ("Bounds") lists them.
//
// Pure functions, thread-safe. Errors: INVALID_ARGUMENT naming the first
// input out of bounds, with the bound; echoed input is clipped (ClipInput).
#ifndef FLEETBENCH_COMMON_WIRE_LIMITS_H_
#define FLEETBENCH_COMMON_WIRE_LIMITS_H_

#include <cstddef>

#include "absl/status/status.h"
#include "fleetbench/v1/run.pb.h"

namespace fleetbench {

// gRPC's send and receive limit on every server and channel.
inline constexpr int kMaxMessageBytes = 16 << 20;
// A page of a large read (runs, a run's samples) stops once it holds this
// many bytes, well inside kMaxMessageBytes.
inline constexpr size_t kPageBudgetBytes = 4 << 20;
// A task's log: the end of what its benchmarks printed, kept by the agent
// and stored with the task.
inline constexpr size_t kMaxTaskLogBytes = 64 << 10;
// Tasks whose logs one GetRun asks for by id (at most about the page
// budget's worth; one that still does not fit is asked for again).
inline constexpr int kMaxLogTasksPerCall = 64;

// A run's parameters: per key, per value, per benchmark and in total.
inline constexpr size_t kMaxParamKeyBytes = 128;
inline constexpr size_t kMaxParamValueBytes = 1024;
inline constexpr int kMaxParamsPerBenchmark = 64;
inline constexpr int kMaxBenchmarksPerRun = 64;
inline constexpr size_t kMaxRunParamBytes = 64 << 10;
inline constexpr size_t kMaxBenchmarkNameBytes = 128;
inline constexpr int kMaxRunNodes = 10000;
inline constexpr size_t kMaxSuiteNameBytes = 64;

// Labels, an agent's (--label) and a run's selection (--select).
inline constexpr int kMaxLabels = 64;
inline constexpr size_t kMaxLabelKeyBytes = 64;
inline constexpr size_t kMaxLabelValueBytes = 256;

// Node names: [A-Za-z0-9._-]{1,64}.
inline constexpr size_t kMaxNodeNameBytes = 64;
// A hello's node facts, serialized (a large host's facts are ~10 KiB), and
// the whole hello (facts, labels, capabilities with their metrics).
inline constexpr size_t kMaxFactsBytes = 256 << 10;
inline constexpr size_t kMaxHelloBytes = 2 << 20;

// The rendezvous relay of a group task (KvRequest): a key, a value, and
// what one group may hold at once.
inline constexpr size_t kMaxKvKeyBytes = 256;
inline constexpr size_t kMaxKvValueBytes = 64 << 10;
inline constexpr size_t kMaxKvKeysPerGroup = 4096;
inline constexpr size_t kMaxKvBytesPerGroup = 8 << 20;

// Label key and value against the bounds above; `what` names the flag or
// field ("--label", "select_labels").
absl::Status CheckLabel(absl::string_view what, absl::string_view key, absl::string_view value);
// Every bound above that a StartRunRequest can break.
absl::Status CheckStartRunBounds(const v1::StartRunRequest& request);

}  // namespace fleetbench

#endif  // FLEETBENCH_COMMON_WIRE_LIMITS_H_
