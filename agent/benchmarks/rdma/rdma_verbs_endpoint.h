// agent/benchmarks/rdma/rdma_verbs_endpoint.h — the RdmaEndpoint over
// libibverbs, shared by the two files that implement it: rdma_verbs.cc
// (device discovery, opening the device and creating its objects, taking
// the queue pair to RTS) and rdma_verbs_writes.cc (the work requests and
// completions of the two tests). Internal to them: it includes
// <infiniband/verbs.h>, which nothing else in fleetbench includes; the
// public face is rdma_verbs.h.
//
// Ownership: every verbs object is held by a RAII owner; the members are
// declared so that they are released in dependency order.
#ifndef FLEETBENCH_AGENT_BENCHMARKS_RDMA_RDMA_VERBS_ENDPOINT_H_
#define FLEETBENCH_AGENT_BENCHMARKS_RDMA_RDMA_VERBS_ENDPOINT_H_

#include <infiniband/verbs.h>

#include <array>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "agent/benchmarks/rdma/rdma_session.h"
#include "agent/benchmarks/rdma/rdma_verbs.h"
#include "common/status_macros.h"

// The Status of an errno-style verbs call, with the call's text and place
// for VerbsReturnCodeStatus; it returns nothing itself:
//   FLEETBENCH_RETURN_IF_ERROR(FLEETBENCH_VERBS_CALL(ibv_query_port(...)));
#define FLEETBENCH_VERBS_CALL(call)                                         \
  ::fleetbench::agent::rdma::VerbsReturnCodeStatus((call), #call, __FILE__, \
                                                   __LINE__)

namespace fleetbench::agent::rdma {

// OK when `rc` is 0; else VerbsCallStatus for the call that returned it: the
// errno value itself, or -1 with errno set (verbs calls do either).
absl::Status VerbsReturnCodeStatus(int rc, absl::string_view call,
                                   absl::string_view file, int line);

struct ContextDeleter {
  void operator()(ibv_context* context) const { ibv_close_device(context); }
};
struct PdDeleter {
  void operator()(ibv_pd* pd) const { ibv_dealloc_pd(pd); }
};
struct MrDeleter {
  void operator()(ibv_mr* mr) const { ibv_dereg_mr(mr); }
};
struct CqDeleter {
  void operator()(ibv_cq* cq) const { ibv_destroy_cq(cq); }
};
struct QpDeleter {
  void operator()(ibv_qp* qp) const { ibv_destroy_qp(qp); }
};
struct FreeDeleter {
  void operator()(uint8_t* p) const { std::free(p); }
};

using ContextPtr = std::unique_ptr<ibv_context, ContextDeleter>;
using PdPtr = std::unique_ptr<ibv_pd, PdDeleter>;
using MrPtr = std::unique_ptr<ibv_mr, MrDeleter>;
using CqPtr = std::unique_ptr<ibv_cq, CqDeleter>;
using QpPtr = std::unique_ptr<ibv_qp, QpDeleter>;
using BufferPtr = std::unique_ptr<uint8_t, FreeDeleter>;

class VerbsEndpoint final : public RdmaEndpoint {
 public:
  static absl::StatusOr<std::unique_ptr<RdmaEndpoint>> Open(
      const EndpointOptions& options);

  EndpointFacts facts() const override { return facts_; }
  QueuePairInfo local_info() const override { return local_; }
  absl::Status Connect(const QueuePairInfo& remote) override;
  absl::StatusOr<BandwidthResult> WriteBandwidth(
      const BandwidthPlan& plan, const CancelFn& cancelled) override;
  absl::StatusOr<std::vector<double>> WritePingPong(
      const LatencyPlan& plan, bool initiator,
      const CancelFn& cancelled) override;

 private:
  VerbsEndpoint() = default;

  absl::Status PostWrite(const uint8_t* source, uint32_t bytes,
                         uint64_t remote_addr, uint64_t wr_id, bool signaled,
                         bool inline_data);
  // Polls until the signaled write `wr_id` completed.
  absl::Status AwaitCompletion(uint64_t wr_id, const CancelFn& cancelled,
                               absl::string_view what);
  // One bandwidth phase: `count` writes, at most `window` outstanding.
  absl::Status WritePhase(const BandwidthPlan& plan, int64_t count,
                          const CancelFn& cancelled);
  // Spins until *byte == value, looking at the CQ for errors now and then.
  absl::Status AwaitByte(const volatile uint8_t* byte, uint8_t value,
                         const CancelFn& cancelled);

  uint8_t* target() const { return buffer_.get(); }
  uint8_t* source() const { return buffer_.get() + source_offset_; }

  EndpointOptions options_;
  EndpointFacts facts_;
  QueuePairInfo local_;
  QueuePairInfo remote_;
  uint8_t link_layer_ = IBV_LINK_LAYER_UNSPECIFIED;
  size_t source_offset_ = 0;
  uint32_t max_inline_ = 0;
  bool connected_ = false;
  // Declaration order is release order reversed: the QP goes first, the
  // buffer last (after its registration).
  BufferPtr buffer_;
  ContextPtr context_;
  PdPtr pd_;
  MrPtr mr_;
  CqPtr cq_;
  QpPtr qp_;
};

}  // namespace fleetbench::agent::rdma

#endif  // FLEETBENCH_AGENT_BENCHMARKS_RDMA_RDMA_VERBS_ENDPOINT_H_
