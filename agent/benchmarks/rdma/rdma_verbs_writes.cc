// The endpoint's two tests as work requests: RDMA WRITEs posted to the
// queue pair and their completions polled from the CQ, for bandwidth
// (windowed, moderated signaling) and latency (ping-pong on one slot). The
// setup is in rdma_verbs.cc.
#include <infiniband/verbs.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "agent/benchmarks/rdma/rdma_verbs.h"
#include "agent/benchmarks/rdma/rdma_verbs_endpoint.h"

namespace fleetbench::agent::rdma {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kPollBatch = 16;
// How many empty spins between looks at the clock and the cancel flag.
constexpr uint32_t kSpinsPerCheck = 1u << 12;

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

}  // namespace

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
  FLEETBENCH_RETURN_IF_ERROR(
      FLEETBENCH_VERBS_CALL(ibv_post_send(qp_.get(), &wr, &bad)));
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

}  // namespace fleetbench::agent::rdma
