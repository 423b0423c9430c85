#include "agent/benchmarks/rdma/rdma_verbs.h"

#include <infiniband/verbs.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace fleetbench::agent::rdma {
namespace {

using Clock = std::chrono::steady_clock;

// Returns from the enclosing function when an errno-style verbs call (0 on
// success, an errno value or -1 with errno set on failure) fails.
#define FLEETBENCH_RDMA_RETURN_IF_FAILED(call)                        \
  do {                                                                \
    const int fleetbench_rdma_rc = (call);                            \
    if (fleetbench_rdma_rc != 0) {                                    \
      return VerbsCallStatus(                                         \
          fleetbench_rdma_rc < 0 ? errno : fleetbench_rdma_rc, #call, \
          __FILE__, __LINE__);                                        \
    }                                                                 \
  } while (0)

// For calls that return a null pointer and set errno.
#define FLEETBENCH_RDMA_ERRNO_STATUS(call) \
  VerbsCallStatus(errno, call, __FILE__, __LINE__)

struct DeviceListDeleter {
  void operator()(ibv_device** list) const { ibv_free_device_list(list); }
};
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

using DeviceList = std::unique_ptr<ibv_device*, DeviceListDeleter>;
using ContextPtr = std::unique_ptr<ibv_context, ContextDeleter>;
using PdPtr = std::unique_ptr<ibv_pd, PdDeleter>;
using MrPtr = std::unique_ptr<ibv_mr, MrDeleter>;
using CqPtr = std::unique_ptr<ibv_cq, CqDeleter>;
using QpPtr = std::unique_ptr<ibv_qp, QpDeleter>;
using BufferPtr = std::unique_ptr<uint8_t, FreeDeleter>;

constexpr size_t kPageBytes = 4096;
constexpr int kPollBatch = 16;
// How many empty spins between looks at the clock and the cancel flag.
constexpr uint32_t kSpinsPerCheck = 1u << 12;

size_t RoundUp(size_t value, size_t to) { return (value + to - 1) / to * to; }

absl::StatusOr<DeviceList> GetDevices(int* count) {
  errno = 0;
  ibv_device** list = ibv_get_device_list(count);
  if (list == nullptr) {
    const int error = errno;
    return absl::FailedPreconditionError(absl::StrCat(
        "no RDMA device (ibv_get_device_list failed: ", std::strerror(error),
        error == ENOSYS
            ? "; the kernel has no RDMA verbs support (ib_uverbs not loaded)"
            : "",
        ")"));
  }
  DeviceList owned(list);
  if (*count <= 0) {
    return absl::FailedPreconditionError(
        "no RDMA device (ibv_get_device_list found none)");
  }
  return owned;
}

std::string WcStatusText(const ibv_wc& wc) {
  return absl::StrCat(ibv_wc_status_str(wc.status), " (status ",
                      static_cast<int>(wc.status), ", vendor error 0x",
                      absl::Hex(wc.vendor_err), ")");
}

absl::Status CompletionError(const ibv_wc& wc, absl::string_view what) {
  const std::string message =
      absl::StrCat("rdma: ", what, ": completion failed: ", WcStatusText(wc));
  if (wc.status == IBV_WC_RETRY_EXC_ERR ||
      wc.status == IBV_WC_RNR_RETRY_EXC_ERR) {
    return absl::UnavailableError(absl::StrCat(
        message,
        "; the peer did not acknowledge (unreachable, wrong GID or "
        "LID, or its queue pair is gone)"));
  }
  return absl::InternalError(message);
}

const char* LinkLayerName(uint8_t link_layer) {
  switch (link_layer) {
    case IBV_LINK_LAYER_ETHERNET:
      return "Ethernet";
    case IBV_LINK_LAYER_INFINIBAND:
    case IBV_LINK_LAYER_UNSPECIFIED:
      return "InfiniBand";
    default:
      return "unknown";
  }
}

bool AllZero(const std::array<uint8_t, 16>& gid) {
  return std::all_of(gid.begin(), gid.end(), [](uint8_t b) { return b == 0; });
}

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

absl::StatusOr<std::unique_ptr<RdmaEndpoint>> VerbsEndpoint::Open(
    const EndpointOptions& options) {
  int count = 0;
  absl::StatusOr<DeviceList> devices = GetDevices(&count);
  if (!devices.ok()) return devices.status();
  ibv_device* device = nullptr;
  std::vector<std::string> names;
  for (int i = 0; i < count; ++i) {
    ibv_device* d = devices->get()[i];
    names.emplace_back(ibv_get_device_name(d));
    if (device == nullptr &&
        (options.device.empty() || names.back() == options.device)) {
      device = d;
    }
  }
  if (device == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        "rdma: device '", options.device, "' not found on this node (devices: ",
        absl::StrJoin(names, ", "), ")"));
  }

  auto endpoint = std::unique_ptr<VerbsEndpoint>(new VerbsEndpoint());
  endpoint->options_ = options;
  endpoint->facts_.device = ibv_get_device_name(device);
  endpoint->facts_.port = options.port;
  const std::string& name = endpoint->facts_.device;

  endpoint->context_.reset(ibv_open_device(device));
  if (!endpoint->context_) {
    return FLEETBENCH_RDMA_ERRNO_STATUS(
        absl::StrCat("ibv_open_device(", name, ")"));
  }
  ibv_context* context = endpoint->context_.get();

  ibv_device_attr device_attr{};
  FLEETBENCH_RDMA_RETURN_IF_FAILED(ibv_query_device(context, &device_attr));
  if (options.port < 1 || options.port > device_attr.phys_port_cnt) {
    return absl::InvalidArgumentError(absl::StrCat(
        "rdma: port=", options.port, ": device ", name, " has ports 1..",
        static_cast<int>(device_attr.phys_port_cnt)));
  }
  if (options.qp_depth > device_attr.max_qp_wr ||
      2 * options.qp_depth > device_attr.max_cqe) {
    return absl::InvalidArgumentError(absl::StrCat(
        "rdma: qp_depth=", options.qp_depth, " exceeds what device ", name,
        " supports (max_qp_wr ", device_attr.max_qp_wr, ", max_cqe ",
        device_attr.max_cqe, "; qp_depth needs 2x in the CQ)"));
  }

  ibv_port_attr port_attr{};
  FLEETBENCH_RDMA_RETURN_IF_FAILED(
      ibv_query_port(context, static_cast<uint8_t>(options.port), &port_attr));
  if (port_attr.state != IBV_PORT_ACTIVE) {
    return absl::FailedPreconditionError(
        absl::StrCat("rdma: port ", options.port, " of ", name, " is ",
                     ibv_port_state_str(port_attr.state), ", not ACTIVE"));
  }
  endpoint->link_layer_ = port_attr.link_layer;
  endpoint->facts_.link_layer = LinkLayerName(port_attr.link_layer);
  if (options.size > port_attr.max_msg_sz) {
    return absl::InvalidArgumentError(absl::StrCat(
        "rdma: size=", options.size, " exceeds the largest message ", name,
        " port ", options.port, " sends (", port_attr.max_msg_sz, " bytes)"));
  }
  if (options.gid_index < 0 || options.gid_index >= port_attr.gid_tbl_len) {
    return absl::InvalidArgumentError(absl::StrCat(
        "rdma: gid_index=", options.gid_index, ": port ", options.port, " of ",
        name, " has GID entries 0..", port_attr.gid_tbl_len - 1));
  }
  ibv_gid gid{};
  FLEETBENCH_RDMA_RETURN_IF_FAILED(ibv_query_gid(
      context, static_cast<uint8_t>(options.port), options.gid_index, &gid));
  std::memcpy(endpoint->local_.gid.data(), gid.raw, sizeof(gid.raw));
  if (port_attr.link_layer == IBV_LINK_LAYER_ETHERNET &&
      AllZero(endpoint->local_.gid)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "rdma: GID ", options.gid_index, " of ", name, " port ", options.port,
        " is empty; RoCE needs a GID backed by an IP address (list them "
        "with `ibv_devinfo -v` or `show_gids`, pass gid_index=N)"));
  }

  endpoint->pd_.reset(ibv_alloc_pd(context));
  if (!endpoint->pd_) return FLEETBENCH_RDMA_ERRNO_STATUS("ibv_alloc_pd");

  // Target region (the peer writes here): latency slot, then the bandwidth
  // target. Source region (we write from here): the same layout, on its own
  // cache lines so the two never share one.
  const size_t region = kLatencySlotBytes + options.size;
  endpoint->source_offset_ = RoundUp(region, kLatencySlotBytes);
  const size_t total = RoundUp(2 * endpoint->source_offset_, kPageBytes);
  endpoint->buffer_.reset(
      static_cast<uint8_t*>(std::aligned_alloc(kPageBytes, total)));
  if (!endpoint->buffer_) {
    return absl::ResourceExhaustedError(
        absl::StrCat("rdma: cannot allocate ", total, " bytes of buffer"));
  }
  // Zero: the latency slots start at 0 on both sides, and the pages are
  // faulted in before they are registered.
  std::memset(endpoint->buffer_.get(), 0, total);
  endpoint->mr_.reset(
      ibv_reg_mr(endpoint->pd_.get(), endpoint->buffer_.get(), total,
                 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE));
  if (!endpoint->mr_) {
    return FLEETBENCH_RDMA_ERRNO_STATUS(absl::StrCat(
        "ibv_reg_mr(", total, " bytes; locked-memory limit: ulimit -l)"));
  }

  endpoint->cq_.reset(
      ibv_create_cq(context, 2 * options.qp_depth, nullptr, nullptr, 0));
  if (!endpoint->cq_) return FLEETBENCH_RDMA_ERRNO_STATUS("ibv_create_cq");

  ibv_qp_init_attr init{};
  init.send_cq = endpoint->cq_.get();
  init.recv_cq = endpoint->cq_.get();
  init.qp_type = IBV_QPT_RC;
  init.sq_sig_all = 0;
  init.cap.max_send_wr = static_cast<uint32_t>(options.qp_depth);
  init.cap.max_recv_wr = 1;
  init.cap.max_send_sge = 1;
  init.cap.max_recv_sge = 1;
  // Inline the latency writes as perftest does; not every device can.
  init.cap.max_inline_data = kLatencySlotBytes;
  endpoint->qp_.reset(ibv_create_qp(endpoint->pd_.get(), &init));
  if (!endpoint->qp_) {
    init.cap.max_inline_data = 0;
    endpoint->qp_.reset(ibv_create_qp(endpoint->pd_.get(), &init));
  }
  if (!endpoint->qp_) return FLEETBENCH_RDMA_ERRNO_STATUS("ibv_create_qp(RC)");
  endpoint->max_inline_ = init.cap.max_inline_data;

  std::random_device entropy;
  endpoint->local_.qpn = endpoint->qp_->qp_num;
  endpoint->local_.psn = entropy() & 0xFFFFFF;
  endpoint->local_.rkey = endpoint->mr_->rkey;
  endpoint->local_.lid = port_attr.lid;
  endpoint->local_.mtu =
      static_cast<uint16_t>(MtuBytesFromEnum(port_attr.active_mtu));
  endpoint->local_.addr = reinterpret_cast<uint64_t>(endpoint->target());
  endpoint->local_.target_bytes = region;
  return endpoint;
}

absl::Status VerbsEndpoint::Connect(const QueuePairInfo& remote) {
  if (absl::Status s = ValidateQueuePairInfo(remote); !s.ok()) return s;
  const bool global = link_layer_ == IBV_LINK_LAYER_ETHERNET || remote.lid == 0;
  if (global && AllZero(remote.gid)) {
    return absl::FailedPreconditionError(
        "rdma: the peer sent no GID and has no LID; it cannot be addressed "
        "(RoCE: pass a gid_index with an IP-backed GID on the peer)");
  }
  const uint8_t port = static_cast<uint8_t>(options_.port);

  ibv_qp_attr init{};
  init.qp_state = IBV_QPS_INIT;
  init.pkey_index = 0;
  init.port_num = port;
  init.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
  FLEETBENCH_RDMA_RETURN_IF_FAILED(ibv_modify_qp(
      qp_.get(), &init,
      IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS));

  ibv_qp_attr rtr{};
  rtr.qp_state = IBV_QPS_RTR;
  rtr.path_mtu =
      static_cast<ibv_mtu>(MtuEnumFromBytes(std::min(local_.mtu, remote.mtu)));
  rtr.dest_qp_num = remote.qpn;
  rtr.rq_psn = remote.psn;
  rtr.max_dest_rd_atomic = 1;
  rtr.min_rnr_timer = 12;
  rtr.ah_attr.dlid = remote.lid;
  rtr.ah_attr.sl = 0;
  rtr.ah_attr.src_path_bits = 0;
  rtr.ah_attr.port_num = port;
  if (global) {
    rtr.ah_attr.is_global = 1;
    std::memcpy(rtr.ah_attr.grh.dgid.raw, remote.gid.data(), remote.gid.size());
    rtr.ah_attr.grh.sgid_index = static_cast<uint8_t>(options_.gid_index);
    rtr.ah_attr.grh.hop_limit = 64;
  }
  FLEETBENCH_RDMA_RETURN_IF_FAILED(ibv_modify_qp(
      qp_.get(), &rtr,
      IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
          IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER));

  ibv_qp_attr rts{};
  rts.qp_state = IBV_QPS_RTS;
  rts.timeout = 14;  // 4.096 us * 2^14 = 67 ms per try, as perftest
  rts.retry_cnt = 7;
  rts.rnr_retry = 7;
  rts.sq_psn = local_.psn;
  rts.max_rd_atomic = 1;
  FLEETBENCH_RDMA_RETURN_IF_FAILED(ibv_modify_qp(
      qp_.get(), &rts,
      IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
          IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC));
  remote_ = remote;
  connected_ = true;
  return absl::OkStatus();
}

absl::Status VerbsEndpoint::PostWrite(const uint8_t* source, uint32_t bytes,
                                      uint64_t remote_addr, uint64_t wr_id,
                                      bool signaled, bool inline_data) {
  ibv_sge sge{};
  sge.addr = reinterpret_cast<uint64_t>(source);
  sge.length = bytes;
  sge.lkey = mr_->lkey;
  ibv_send_wr wr{};
  wr.wr_id = wr_id;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_WRITE;
  unsigned int flags = 0;
  if (signaled) flags |= IBV_SEND_SIGNALED;
  if (inline_data) flags |= IBV_SEND_INLINE;
  wr.send_flags = flags;
  wr.wr.rdma.remote_addr = remote_addr;
  wr.wr.rdma.rkey = remote_.rkey;
  ibv_send_wr* bad = nullptr;
  FLEETBENCH_RDMA_RETURN_IF_FAILED(ibv_post_send(qp_.get(), &wr, &bad));
  return absl::OkStatus();
}

absl::Status VerbsEndpoint::AwaitCompletion(uint64_t wr_id,
                                            const CancelFn& cancelled,
                                            absl::string_view what) {
  Clock::time_point since = Clock::now();
  uint32_t spins = 0;
  while (true) {
    ibv_wc wc[kPollBatch];
    const int n = ibv_poll_cq(cq_.get(), kPollBatch, wc);
    if (n < 0) return absl::InternalError("rdma: ibv_poll_cq failed");
    for (int i = 0; i < n; ++i) {
      if (wc[i].status != IBV_WC_SUCCESS) return CompletionError(wc[i], what);
      if (wc[i].wr_id == wr_id) return absl::OkStatus();
    }
    if (n == 0 && ++spins % kSpinsPerCheck == 0) {
      if (cancelled && cancelled()) {
        return absl::CancelledError("rdma: cancelled");
      }
      if (Clock::now() - since > kNoProgressTimeout) {
        return absl::DeadlineExceededError(
            absl::StrCat("rdma: ", what, ": no completion within ",
                         kNoProgressTimeout.count(), " s"));
      }
    } else if (n > 0) {
      since = Clock::now();
    }
  }
}

absl::Status VerbsEndpoint::WritePhase(const BandwidthPlan& plan, int64_t count,
                                       const CancelFn& cancelled) {
  const int window = std::max(1, plan.window);
  const int signal_every = std::min(kSignalEvery, window);
  const uint8_t* from = source() + kLatencySlotBytes;
  const uint64_t to = remote_.addr + kLatencySlotBytes;
  const uint32_t bytes = static_cast<uint32_t>(plan.size);
  int64_t posted = 0;
  int64_t completed = 0;  // writes retired by a signaled completion
  Clock::time_point last_progress = Clock::now();
  uint32_t spins = 0;
  while (completed < count) {
    while (posted < count && posted - completed < window) {
      const int64_t id = posted + 1;
      const bool signaled = id % signal_every == 0 || id == count;
      if (absl::Status s = PostWrite(from, bytes, to, static_cast<uint64_t>(id),
                                     signaled, /*inline_data=*/false);
          !s.ok()) {
        return s;
      }
      posted = id;
    }
    ibv_wc wc[kPollBatch];
    const int n = ibv_poll_cq(cq_.get(), kPollBatch, wc);
    if (n < 0) return absl::InternalError("rdma: ibv_poll_cq failed");
    for (int i = 0; i < n; ++i) {
      if (wc[i].status != IBV_WC_SUCCESS) {
        return CompletionError(wc[i], "RDMA WRITE bandwidth");
      }
      // RC completes in order: a signaled completion retires every write
      // posted before it.
      completed = std::max(completed, static_cast<int64_t>(wc[i].wr_id));
    }
    if (n > 0) {
      last_progress = Clock::now();
    } else if (++spins % kSpinsPerCheck == 0) {
      if (cancelled && cancelled()) {
        return absl::CancelledError("rdma: cancelled");
      }
      if (Clock::now() - last_progress > kNoProgressTimeout) {
        return absl::DeadlineExceededError(
            absl::StrCat("rdma: RDMA WRITE bandwidth: no completion within ",
                         kNoProgressTimeout.count(), " s (", completed, " of ",
                         count, " writes done)"));
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<BandwidthResult> VerbsEndpoint::WriteBandwidth(
    const BandwidthPlan& plan, const CancelFn& cancelled) {
  if (!connected_) {
    return absl::FailedPreconditionError("rdma: queue pair not connected");
  }
  if (plan.size == 0 || plan.size > options_.size) {
    return absl::InvalidArgumentError(
        absl::StrCat("rdma: write size ", plan.size, " outside 1..",
                     options_.size, " (the registered buffer)"));
  }
  if (plan.warmup > 0) {
    if (absl::Status s = WritePhase(plan, plan.warmup, cancelled); !s.ok()) {
      return s;
    }
  }
  const Clock::time_point start = Clock::now();
  if (absl::Status s = WritePhase(plan, plan.iterations, cancelled); !s.ok()) {
    return s;
  }
  BandwidthResult result;
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  result.bytes = static_cast<uint64_t>(plan.iterations) * plan.size;
  return result;
}

absl::Status VerbsEndpoint::AwaitByte(const volatile uint8_t* byte,
                                      uint8_t value,
                                      const CancelFn& cancelled) {
  const Clock::time_point since = Clock::now();
  uint32_t spins = 0;
  while (*byte != value) {
    if (++spins % kSpinsPerCheck != 0) continue;
    // Errors complete even unsignaled writes: catch a broken path here
    // instead of after the timeout.
    ibv_wc wc;
    const int n = ibv_poll_cq(cq_.get(), 1, &wc);
    if (n < 0) return absl::InternalError("rdma: ibv_poll_cq failed");
    if (n > 0 && wc.status != IBV_WC_SUCCESS) {
      return CompletionError(wc, "RDMA WRITE latency");
    }
    if (cancelled && cancelled()) {
      return absl::CancelledError("rdma: cancelled");
    }
    if (Clock::now() - since > kNoProgressTimeout) {
      return absl::DeadlineExceededError(
          absl::StrCat("rdma: RDMA WRITE latency: the peer's write did not "
                       "arrive within ",
                       kNoProgressTimeout.count(), " s"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<double>> VerbsEndpoint::WritePingPong(
    const LatencyPlan& plan, bool initiator, const CancelFn& cancelled) {
  if (!connected_) {
    return absl::FailedPreconditionError("rdma: queue pair not connected");
  }
  if (plan.bytes < 1 || plan.bytes > kLatencySlotBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("rdma: latency write of ", plan.bytes,
                     " bytes outside 1..", kLatencySlotBytes));
  }
  const int64_t total =
      static_cast<int64_t>(plan.warmup) + static_cast<int64_t>(plan.iterations);
  const int signal_every = std::min(kSignalEvery, options_.qp_depth);
  const bool inline_data = plan.bytes <= max_inline_;
  // Like ib_write_lat: each side watches the last byte of its latency slot
  // for the peer's counter and answers with its own.
  const volatile uint8_t* watched = target() + plan.bytes - 1;
  uint8_t* counter = source() + plan.bytes - 1;
  std::vector<Clock::time_point> posted_at;
  if (initiator) posted_at.resize(static_cast<size_t>(total) + 1);

  for (int64_t i = 0; i < total; ++i) {
    const uint8_t value = static_cast<uint8_t>((i + 1) & 0xFF);
    if (!initiator) {
      if (absl::Status s = AwaitByte(watched, value, cancelled); !s.ok()) {
        return s;
      }
    }
    *counter = value;
    if (initiator) posted_at[static_cast<size_t>(i)] = Clock::now();
    const bool signaled = (i + 1) % signal_every == 0 || i + 1 == total;
    if (absl::Status s =
            PostWrite(source(), plan.bytes, remote_.addr,
                      static_cast<uint64_t>(i + 1), signaled, inline_data);
        !s.ok()) {
      return s;
    }
    if (signaled) {
      if (absl::Status s = AwaitCompletion(static_cast<uint64_t>(i + 1),
                                           cancelled, "RDMA WRITE latency");
          !s.ok()) {
        return s;
      }
    }
    if (initiator) {
      if (absl::Status s = AwaitByte(watched, value, cancelled); !s.ok()) {
        return s;
      }
    }
  }
  std::vector<double> round_trip_us;
  if (!initiator) return round_trip_us;
  posted_at[static_cast<size_t>(total)] = Clock::now();
  round_trip_us.reserve(plan.iterations);
  for (int64_t i = plan.warmup; i < total; ++i) {
    round_trip_us.push_back(std::chrono::duration<double, std::micro>(
                                posted_at[static_cast<size_t>(i) + 1] -
                                posted_at[static_cast<size_t>(i)])
                                .count());
  }
  return round_trip_us;
}

}  // namespace

absl::Status VerbsCallStatus(int error, absl::string_view call,
                             absl::string_view file, int line) {
  const std::string message =
      absl::StrCat("rdma: ", call, " failed: ", std::strerror(error),
                   " (errno ", error, ") at ", file, ":", line);
  switch (error) {
    case ENOMEM:
      return absl::ResourceExhaustedError(message);
    case ENODEV:
    case ENXIO:
    case ENOSYS:
    case EOPNOTSUPP:
    case EPROTONOSUPPORT:
      return absl::FailedPreconditionError(message);
    case EPERM:
    case EACCES:
      return absl::PermissionDeniedError(message);
    default:
      return absl::InternalError(message);
  }
}

absl::StatusOr<std::vector<std::string>> ListRdmaDevices() {
  int count = 0;
  absl::StatusOr<DeviceList> devices = GetDevices(&count);
  if (!devices.ok()) return devices.status();
  std::vector<std::string> names;
  for (int i = 0; i < count; ++i) {
    names.emplace_back(ibv_get_device_name(devices->get()[i]));
  }
  return names;
}

absl::StatusOr<std::unique_ptr<RdmaEndpoint>> OpenVerbsEndpoint(
    const EndpointOptions& options) {
  return VerbsEndpoint::Open(options);
}

}  // namespace fleetbench::agent::rdma
