#include "agent/benchmarks/collective/gloo_engine.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <memory>
#include <optional>
#include <thread>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "agent/benchmarks/collective/gloo_mesh.h"
#include "agent/benchmarks/collective/rendezvous_store.h"
#include "agent/benchmarks/collective_sweep.h"
#include "gloo/allgather.h"
#include "gloo/allreduce.h"
#include "gloo/math.h"
#include "gloo/transport/tcp/device.h"
#include "gloo/transport/unbound_buffer.h"
#include "kernels/collective_pattern.h"
#include "kernels/gpu_module_api.h"

namespace fleetbench::collective {
namespace {

// A run without a deadline still must not wait forever on a dead peer.
constexpr absl::Duration kNoDeadlineTimeout = absl::Minutes(30);
// Receive elements compared per rank and size (evenly spaced, plus the
// last), as the NCCL backend does.
constexpr uint64_t kCheckedPerSize = 1024;
// How often a member waiting to meet the group, or for its operations,
// looks at cancelled().
constexpr absl::Duration kWatchSlice = absl::Milliseconds(100);
// How long an interrupted meeting may take to end (a store call in
// progress finishes its slice first, 200 ms at most).
constexpr absl::Duration kMeetingEndBound = absl::Seconds(5);
// How long operations asked to stop (a cancel), or running beside a broken
// connection, have to end by themselves before Sweep() leaves them behind:
// a normal end takes microseconds (one more operation, or one that already
// has its data), so only a stuck operation is still running by then.
constexpr absl::Duration kStuckBound = absl::Seconds(10);
// A slot no operation uses: the sentinel's receives (Session::sentinel).
constexpr uint64_t kSentinelSlot = uint64_t{0xfb} << 56;
// Longer than any engine lives; the engine's end aborts the wait.
constexpr std::chrono::milliseconds kSentinelWait = std::chrono::hours(24 * 365);

void FillPattern(int rank, std::vector<float>* buffer) {
  for (uint64_t i = 0; i < buffer->size(); ++i) {
    (*buffer)[i] = static_cast<float>(kernels::PatternValue(rank, i));
  }
}

void Verify(int op, int ranks, int rank, uint64_t send_count,
            const std::vector<float>& recv, GlooPoint* point) {
  const uint64_t n = recv.size();
  if (n == 0) return;
  const uint64_t stride = std::max<uint64_t>(1, n / kCheckedPerSize);
  auto check = [&](uint64_t index) {
    const double expected =
        kernels::ExpectedAfter(op, ranks, rank, send_count, index);
    ++point->checked;
    if (static_cast<double>(recv[index]) != expected) {
      if (point->mismatches == 0) {
        point->first_expected = expected;
        point->first_actual = recv[index];
      }
      ++point->mismatches;
    }
  };
  for (uint64_t index = 0; index < n; index += stride) check(index);
  if ((n - 1) % stride != 0) check(n - 1);
}

}  // namespace

// Everything the operations use, shared by the engine and the thread that
// runs them: a thread left behind in a stuck gloo operation keeps it alive
// until gloo's timeout, so nothing here points outside it (the caller's
// cancelled() is mirrored into `cancel` by the engine).
struct GlooEngine::Session {
  Session(const GlooMember& member, std::shared_ptr<gloo::Context> gloo_context)
      : rank(member.rank),
        size(member.size),
        deadline(member.deadline),
        context(std::move(gloo_context)) {}

  // The time left before the deadline as a gloo timeout (at least 1 ms).
  std::chrono::milliseconds TimeLeft() const;
  // A caught gloo exception as a Status (CANCELLED once cancelled).
  absl::Status FromGloo(const std::string& what, const std::string& where) const;
  absl::StatusOr<std::vector<GlooPoint>> Sweep(const std::string& op_name, int op,
                                               const std::vector<uint64_t>& sizes, int warmup,
                                               int iters);
  // Runs one size; fills `point` except the group fields.
  absl::Status RunSize(const std::string& op_name, int op, uint64_t bytes, int warmup,
                       int iters, GlooPoint* point);
  // All ranks' seconds for every point, gathered; fills the group fields.
  absl::Status GatherTimes(std::vector<GlooPoint>* points);

  void SetWhere(std::string where) {
    absl::MutexLock lock(&mu);
    current = std::move(where);
  }
  std::string Where() const {
    absl::MutexLock lock(&mu);
    return current;
  }

  const int rank;
  const int size;
  const absl::Time deadline;
  const std::shared_ptr<gloo::Context> context;
  // A receive of one byte posted from every peer on kSentinelSlot, which
  // nobody sends to: gloo fails it when any connection breaks. Declared
  // after `context`, which must outlive it.
  char sentinel_byte = 0;
  std::unique_ptr<gloo::transport::UnboundBuffer> sentinel;
  std::atomic<bool> cancel{false};
  absl::Notification broken;
  std::string broken_what;  // written once, before `broken` is notified
  uint64_t next_slot = 1;   // reduce-scatter's message slots (operations' thread)

  mutable absl::Mutex mu;
  std::string current ABSL_GUARDED_BY(mu);  // the operation under way
};

absl::StatusOr<std::unique_ptr<GlooEngine>> GlooEngine::Connect(
    const GlooMember& member) {
  if (member.size < 1 || member.rank < 0 || member.rank >= member.size) {
    return absl::InvalidArgumentError(absl::StrCat(
        "gloo: rank ", member.rank, " is not in a group of ", member.size));
  }
  if (member.rendezvous == nullptr) {
    return absl::InvalidArgumentError("gloo: no rendezvous to meet the group");
  }
  if (member.address.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "gloo: rank ", member.rank, " has no address to listen on"));
  }
  const absl::Time deadline = member.deadline == absl::InfiniteFuture()
                                  ? absl::Now() + kNoDeadlineTimeout
                                  : member.deadline;
  // Meeting runs on a thread of its own that owns everything it touches,
  // and this one waits for it while watching cancelled(). On a cancel (or
  // the deadline) it abandons the store (which then never touches the
  // rendezvous or the RunContext again) and interrupts the mesh, which
  // closes the pairs: a pair waiting for a peer that will never dial in
  // returns at once, so the thread ends, and is joined, before Connect()
  // returns.
  struct Meeting {
    Meeting(agent::Rendezvous* rendezvous, std::string prefix, absl::Time until,
            std::function<bool()> cancelled)
        : store(rendezvous, std::move(prefix), until, std::move(cancelled)) {}
    RendezvousStore store;
    std::shared_ptr<GlooMesh> context;
    std::string failure;  // what gloo threw; empty on success
    absl::Notification done;
  };
  auto meeting = std::make_shared<Meeting>(member.rendezvous, member.key_prefix,
                                           deadline, member.cancelled);
  meeting->context = std::make_shared<GlooMesh>(member.rank, member.size);
  const absl::Duration left =
      std::max(deadline - absl::Now(), absl::Milliseconds(1));
  meeting->context->setTimeout(
      std::chrono::milliseconds(absl::ToInt64Milliseconds(left)));
  std::thread meeting_thread([meeting, address = member.address] {
    try {
      gloo::transport::tcp::attr attr;
      attr.hostname = address;
      std::shared_ptr<gloo::transport::Device> device =
          gloo::transport::tcp::CreateDevice(attr);
      meeting->context->Connect(meeting->store, device);
    } catch (const std::exception& e) {
      meeting->failure = e.what();
      if (meeting->failure.empty()) meeting->failure = "gloo failed";
    }
    meeting->done.Notify();
  });

  const std::string where =
      absl::StrCat("gloo: rank ", member.rank, " of ", member.size,
                   " meeting the group at ", member.address);
  while (!meeting->done.WaitForNotificationWithTimeout(kWatchSlice)) {
    const bool cancelled = member.cancelled && member.cancelled();
    if (cancelled || absl::Now() > deadline + kWatchSlice) {
      meeting->store.Abandon();
      meeting->context->Interrupt();
      if (meeting->done.WaitForNotificationWithTimeout(kMeetingEndBound)) {
        meeting_thread.join();
      } else {
        // Not expected (every wait of the meeting was just ended); never
        // block the agent on it.
        meeting_thread.detach();
      }
      return cancelled
                 ? absl::CancelledError(absl::StrCat(where, ": cancelled"))
                 : absl::DeadlineExceededError(
                       absl::StrCat(where, ": not met by the deadline"));
    }
  }
  meeting_thread.join();
  if (meeting->failure.empty()) {
    GlooMember kept = member;
    kept.deadline = deadline;
    auto session = std::make_shared<Session>(kept, meeting->context);
    if (member.size > 1) {
      try {
        session->sentinel =
            session->context->createUnboundBuffer(&session->sentinel_byte, 1);
        for (int peer = 0; peer < member.size; ++peer) {
          if (peer != member.rank) session->sentinel->recv(peer, kSentinelSlot);
        }
      } catch (const std::exception& e) {
        return absl::UnavailableError(absl::StrCat(where, ": ", e.what()));
      }
    }
    return std::unique_ptr<GlooEngine>(new GlooEngine(kept, std::move(session)));
  }
  const RendezvousStore& store = meeting->store;
  if (!store.error().ok()) {
    int missing = -1;
    if (absl::IsDeadlineExceeded(store.error()) &&
        absl::SimpleAtoi(store.missing_key(), &missing)) {
      return absl::DeadlineExceededError(absl::StrCat(
          where, ": rank ", missing, " did not arrive by the deadline"));
    }
    return absl::Status(store.error().code(),
                        absl::StrCat(where, ": ", store.error().message()));
  }
  if (member.cancelled && member.cancelled()) {
    return absl::CancelledError(absl::StrCat(where, ": cancelled"));
  }
  if (absl::Now() >= deadline) {
    return absl::DeadlineExceededError(
        absl::StrCat(where, ": not met by the deadline: ", meeting->failure));
  }
  return absl::UnavailableError(absl::StrCat(where, ": ", meeting->failure));
}

GlooEngine::GlooEngine(const GlooMember& member, std::shared_ptr<Session> session)
    : cancelled_(member.cancelled),
      session_(std::move(session)) {
  if (session_->sentinel == nullptr) return;
  sentinel_waiter_ = std::thread([session = session_] {
    try {
      // False when the engine ends and aborts the wait. No timeout of its
      // own: gloo's would close every connection (the operations' timeouts
      // keep the deadline).
      session->sentinel->waitRecv(nullptr, kSentinelWait);
    } catch (const std::exception& e) {
      session->broken_what = e.what();
      session->broken.Notify();
    }
  });
}

int GlooEngine::rank() const { return session_->rank; }
int GlooEngine::size() const { return session_->size; }

GlooEngine::~GlooEngine() {
  if (session_->sentinel != nullptr) session_->sentinel->abortWaitRecv();
  if (sentinel_waiter_.joinable()) sentinel_waiter_.join();
}

std::chrono::milliseconds GlooEngine::Session::TimeLeft() const {
  const absl::Duration left = deadline - absl::Now();
  return std::chrono::milliseconds(
      std::max<int64_t>(1, absl::ToInt64Milliseconds(left)));
}

absl::Status GlooEngine::Session::FromGloo(const std::string& what,
                                           const std::string& where) const {
  const std::string text =
      absl::StrCat("gloo: rank ", rank, " of ", size, ": ", where, ": ");
  if (cancel) return absl::CancelledError(absl::StrCat(text, "cancelled"));
  if (absl::Now() >= deadline) {
    return absl::DeadlineExceededError(
        absl::StrCat(text, "past the group's deadline: ", what));
  }
  return absl::UnavailableError(absl::StrCat(text, what));
}

absl::Status GlooEngine::Session::RunSize(const std::string& op_name, int op,
                                          uint64_t bytes, int warmup,
                                          int iters, GlooPoint* point) {
  const uint64_t n = static_cast<uint64_t>(size);
  const uint64_t total = bytes / sizeof(float) / n * n;
  if (total == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("gloo: size ", bytes, " B is below one float per rank (",
                     n, " ranks)"));
  }
  point->bytes = total * sizeof(float);
  uint64_t send_count = total, recv_count = total;
  if (op == FLEETBENCH_GPU_ALLGATHER) send_count = total / n;
  if (op == FLEETBENCH_GPU_REDUCESCATTER) recv_count = total / n;
  // All-reduce runs in place, as torch.distributed's does (gloo's
  // out-of-place variant copies the input first): the timed operations sum
  // zeros, then one more untimed operation over the pattern is checked.
  const bool in_place = op == FLEETBENCH_GPU_ALLREDUCE;
  std::vector<float> send(in_place ? 0 : send_count);
  std::vector<float> recv(recv_count, 0.0f);
  if (!in_place) FillPattern(rank, &send);
  // reduce-scatter's ring reduces into a copy of the send buffer and
  // receives each neighbour's chunk into `incoming`.
  std::vector<float> work;
  std::vector<float> incoming;
  if (op == FLEETBENCH_GPU_REDUCESCATTER) {
    work.resize(send_count);
    incoming.resize(recv_count);
  }

  auto once = [&]() {
    switch (op) {
      case FLEETBENCH_GPU_ALLGATHER: {
        gloo::AllgatherOptions opts(context);
        opts.setInput(send.data(), send.size());
        opts.setOutput(recv.data(), recv.size());
        opts.setTimeout(TimeLeft());
        gloo::allgather(opts);
        break;
      }
      case FLEETBENCH_GPU_REDUCESCATTER: {
        // A ring over gloo's transport: at step s rank r sends its partial
        // sum of chunk (r-s-1) mod n to r+1 and adds the one from r-1
        // (chunk r-s-2) to its own; after n-1 steps chunk r is complete.
        // (gloo's ReduceScatterHalvingDoubling counts bytes in an int and
        // so stops at 2 GiB.)
        std::copy(send.begin(), send.end(), work.begin());
        const int r = rank;
        const size_t chunk_bytes = recv_count * sizeof(float);
        if (size > 1) {
          auto out = context->createUnboundBuffer(work.data(),
                                                   work.size() * sizeof(float));
          auto in = context->createUnboundBuffer(incoming.data(), chunk_bytes);
          const int right = (r + 1) % size;
          const int left = (r + size - 1) % size;
          for (int s = 0; s < size - 1; ++s) {
            const uint64_t slot = next_slot++;
            const int send_chunk = ((r - s - 1) % size + size) % size;
            const int recv_chunk = ((r - s - 2) % size + size) % size;
            out->send(right, slot, send_chunk * chunk_bytes, chunk_bytes);
            in->recv(left, slot, 0, chunk_bytes);
            in->waitRecv(TimeLeft());
            gloo::sum<float>(work.data() + recv_chunk * recv_count,
                             incoming.data(), recv_count);
            out->waitSend(TimeLeft());
          }
        }
        std::copy_n(work.begin() + r * recv_count, recv_count, recv.begin());
        break;
      }
      default: {
        gloo::AllreduceOptions opts(context);
        opts.setOutput(recv.data(), recv.size());
        opts.setReduceFunction(
            static_cast<void (*)(void*, const void*, const void*, size_t)>(
                &gloo::sum<float>));
        opts.setTimeout(TimeLeft());
        gloo::allreduce(opts);
        break;
      }
    }
  };

  const std::string where = absl::StrCat(op_name, " at ", point->bytes, " B");
  SetWhere(where);
  try {
    for (int i = 0; i < warmup; ++i) {
      if (cancel) return FromGloo("", where);
      once();
    }
    double seconds = 0;
    for (int i = 0; i < iters; ++i) {
      if (cancel) return FromGloo("", where);
      const auto start = std::chrono::steady_clock::now();
      once();
      seconds += std::chrono::duration<double>(
                     std::chrono::steady_clock::now() - start)
                     .count();
    }
    point->seconds = seconds / iters;
    if (in_place) {
      FillPattern(rank, &recv);
      once();
    }
  } catch (const std::exception& e) {
    return FromGloo(e.what(), where);
  }
  Verify(op, size, rank, send_count, recv, point);
  return absl::OkStatus();
}

absl::Status GlooEngine::Session::GatherTimes(std::vector<GlooPoint>* points) {
  const size_t count = points->size();
  std::vector<double> mine(count);
  for (size_t i = 0; i < count; ++i) mine[i] = (*points)[i].seconds;
  std::vector<double> all(count * static_cast<size_t>(size));
  const std::string where = "gathering the ranks' times";
  SetWhere(where);
  try {
    gloo::AllgatherOptions opts(context);
    opts.setInput(mine.data(), mine.size());
    opts.setOutput(all.data(), all.size());
    opts.setTimeout(TimeLeft());
    gloo::allgather(opts);
  } catch (const std::exception& e) {
    return FromGloo(e.what(), where);
  }
  for (size_t i = 0; i < count; ++i) {
    GlooPoint& point = (*points)[i];
    for (int r = 0; r < size; ++r) {
      const double t = all[static_cast<size_t>(r) * count + i];
      if (r == 0 || t > point.group_seconds) {
        point.group_seconds = t;
        point.slowest_rank = r;
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<GlooPoint>> GlooEngine::Session::Sweep(
    const std::string& op_name, int op, const std::vector<uint64_t>& sizes,
    int warmup, int iters) {
  std::vector<GlooPoint> points(sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (absl::Status s =
            RunSize(op_name, op, sizes[i], warmup, iters, &points[i]);
        !s.ok()) {
      return s;
    }
  }
  if (absl::Status s = GatherTimes(&points); !s.ok()) return s;
  return points;
}

absl::StatusOr<std::vector<GlooPoint>> GlooEngine::Sweep(
    const std::string& op, const std::vector<uint64_t>& sizes, int warmup,
    int iters) {
  const int op_number = agent::CollectiveOpNumber(op);
  if (op_number < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("gloo: unknown op '", op, "'"));
  }
  if (iters < 1 || warmup < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "gloo: iters must be >= 1 and warmup >= 0, not ", iters, ", ", warmup));
  }
  // The engine's connections are gone with the operations left behind.
  if (!left_behind_.ok()) return left_behind_;
  struct Outcome {
    absl::StatusOr<std::vector<GlooPoint>> points;
    absl::Notification done;
  };
  auto outcome = std::make_shared<Outcome>();
  std::thread operations([session = session_, outcome, op, op_number, sizes,
                          warmup, iters] {
    outcome->points = session->Sweep(op, op_number, sizes, warmup, iters);
    outcome->done.Notify();
  });
  // Since when the operations have been asked to stop (a cancel) or may be
  // stuck (a broken connection).
  std::optional<absl::Time> stopping_since;
  while (!outcome->done.WaitForNotificationWithTimeout(kWatchSlice)) {
    if (!session_->cancel && cancelled_ && cancelled_()) session_->cancel = true;
    if (!stopping_since &&
        (session_->cancel || session_->broken.HasBeenNotified())) {
      stopping_since = absl::Now();
    }
    if (stopping_since && absl::Now() - *stopping_since >= kStuckBound) {
      // Left to gloo's timeout; it stops at its next operation if it ever
      // gets one.
      const absl::Status status =
          session_->cancel
              ? session_->FromGloo("", session_->Where())
              : session_->FromGloo(
                    absl::StrCat(session_->broken_what,
                                 " (an operation still waited ",
                                 absl::FormatDuration(kStuckBound),
                                 " later and was left behind)"),
                    session_->Where());
      session_->cancel = true;
      // The peers still waiting on this rank fail now, not at the deadline.
      session_->context->closeConnections();
      operations.detach();
      left_behind_ = status;
      return status;
    }
  }
  operations.join();
  // A peer cancelled a moment sooner closes its connections while this
  // rank's operation is under way: a failure then is the cancel's, as it
  // is when the operations see the cancel themselves.
  if (!outcome->points.ok() && !absl::IsCancelled(outcome->points.status()) &&
      (session_->cancel || (cancelled_ && cancelled_()))) {
    session_->cancel = true;
    return session_->FromGloo("", session_->Where());
  }
  return std::move(outcome->points);
}

}  // namespace fleetbench::collective
