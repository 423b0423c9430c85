// Device discovery and the endpoint's setup: opening the device, checking
// the options against what it supports, creating PD, buffer, MR, CQ and QP,
// and the queue pair's INIT -> RTR -> RTS transitions. The tests' work
// requests are in rdma_verbs_writes.cc.
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
#include "agent/benchmarks/rdma/rdma_verbs_endpoint.h"

namespace fleetbench::agent::rdma {
namespace {

struct DeviceListDeleter {
  void operator()(ibv_device** list) const { ibv_free_device_list(list); }
};
using DeviceList = std::unique_ptr<ibv_device*, DeviceListDeleter>;

constexpr size_t kPageBytes = 4096;

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

}  // namespace

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
    return VerbsCallStatus(errno, absl::StrCat("ibv_open_device(", name, ")"),
                           __FILE__, __LINE__);
  }
  ibv_context* context = endpoint->context_.get();

  ibv_device_attr device_attr{};
  FLEETBENCH_RETURN_IF_ERROR(
      FLEETBENCH_VERBS_CALL(ibv_query_device(context, &device_attr)));
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
  FLEETBENCH_RETURN_IF_ERROR(FLEETBENCH_VERBS_CALL(
      ibv_query_port(context, static_cast<uint8_t>(options.port), &port_attr)));
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
  FLEETBENCH_RETURN_IF_ERROR(FLEETBENCH_VERBS_CALL(ibv_query_gid(
      context, static_cast<uint8_t>(options.port), options.gid_index, &gid)));
  std::memcpy(endpoint->local_.gid.data(), gid.raw, sizeof(gid.raw));
  if (port_attr.link_layer == IBV_LINK_LAYER_ETHERNET &&
      AllZero(endpoint->local_.gid)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "rdma: GID ", options.gid_index, " of ", name, " port ", options.port,
        " is empty; RoCE needs a GID backed by an IP address (list them "
        "with `ibv_devinfo -v` or `show_gids`, pass gid_index=N)"));
  }

  endpoint->pd_.reset(ibv_alloc_pd(context));
  if (!endpoint->pd_) {
    return VerbsCallStatus(errno, "ibv_alloc_pd", __FILE__, __LINE__);
  }

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
    return VerbsCallStatus(errno,
                           absl::StrCat("ibv_reg_mr(", total,
                                        " bytes; locked-memory limit: "
                                        "ulimit -l)"),
                           __FILE__, __LINE__);
  }

  endpoint->cq_.reset(
      ibv_create_cq(context, 2 * options.qp_depth, nullptr, nullptr, 0));
  if (!endpoint->cq_) {
    return VerbsCallStatus(errno, "ibv_create_cq", __FILE__, __LINE__);
  }

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
  if (!endpoint->qp_) {
    return VerbsCallStatus(errno, "ibv_create_qp(RC)", __FILE__, __LINE__);
  }
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
  FLEETBENCH_RETURN_IF_ERROR(FLEETBENCH_VERBS_CALL(ibv_modify_qp(
      qp_.get(), &init,
      IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)));

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
  FLEETBENCH_RETURN_IF_ERROR(FLEETBENCH_VERBS_CALL(ibv_modify_qp(
      qp_.get(), &rtr,
      IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
          IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)));

  ibv_qp_attr rts{};
  rts.qp_state = IBV_QPS_RTS;
  rts.timeout = 14;  // 4.096 us * 2^14 = 67 ms per try, as perftest
  rts.retry_cnt = 7;
  rts.rnr_retry = 7;
  rts.sq_psn = local_.psn;
  rts.max_rd_atomic = 1;
  FLEETBENCH_RETURN_IF_ERROR(FLEETBENCH_VERBS_CALL(ibv_modify_qp(
      qp_.get(), &rts,
      IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
          IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC)));
  remote_ = remote;
  connected_ = true;
  return absl::OkStatus();
}

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

absl::Status VerbsReturnCodeStatus(int rc, absl::string_view call,
                                   absl::string_view file, int line) {
  if (rc == 0) return absl::OkStatus();
  return VerbsCallStatus(rc < 0 ? errno : rc, call, file, line);
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
