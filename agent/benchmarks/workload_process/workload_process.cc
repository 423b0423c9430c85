#include "agent/benchmarks/workload_process/workload_process.h"

#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "agent/benchmarks/workload_process/output_capture.h"
#include "agent/benchmarks/workload_process/process_group.h"
#include "agent/benchmarks/workload_process/workload_spawn.h"

namespace fleetbench::agent {
namespace {

// While the group is being taken down (or left behind by its leader), it
// is looked at this often, so a run ends soon after its last process.
constexpr absl::Duration kTeardownTick = absl::Milliseconds(10);
// One pipe read; at most kReadsPerWake of them per pipe before the loop
// looks at the clock again, so endless output cannot starve the timeout.
constexpr size_t kReadChunk = 64 * 1024;
constexpr int kReadsPerWake = 16;

// Elapsed time must not jump with the wall clock (NTP, an operator).
absl::Duration MonotonicNow() {
  return absl::FromChrono(std::chrono::steady_clock::now().time_since_epoch());
}

// poll()'s timeout for waiting `d`: whole milliseconds, rounded up so a
// wait never ends just short of its deadline and spins.
int PollMillis(absl::Duration d) {
  if (d <= absl::ZeroDuration()) return 0;
  return static_cast<int>(std::min<int64_t>(
      absl::ToInt64Milliseconds(absl::Ceil(d, absl::Milliseconds(1))), 60'000));
}

double Seconds(const timeval& t) {
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
}

// One started workload, watched until its group is gone.
class Supervisor {
 public:
  Supervisor(const WorkloadCommand& command, SpawnedWorkload spawned,
             absl::Duration start,
             const std::function<void(std::string_view)>& on_stdout_line)
      : command_(command),
        spawned_(std::move(spawned)),
        start_(start),
        tail_(command.keep_tail_bytes),
        lines_(kMaxStdoutLine, on_stdout_line),
        buffer_(kReadChunk) {}

  absl::StatusOr<WorkloadExit> Run(const std::function<bool()>& cancelled);

 private:
  bool LeaderExited();
  void Signal(int signal) { kill(-spawned_.pid, signal); }
  void Terminate(absl::Duration now);
  // Reads what `fd` has now; closes it at end of file. At most
  // `max_reads` reads.
  void Drain(UniqueFd& fd, bool is_stdout, int max_reads);
  // Reaps the (exited) leader and fills in how it ended.
  absl::Status Reap();

  const WorkloadCommand& command_;
  SpawnedWorkload spawned_;
  absl::Duration start_;
  OutputTail tail_;
  LineSplitter lines_;
  std::vector<char> buffer_;
  WorkloadExit exit_;
  bool leader_exited_ = false;
  std::optional<absl::Duration> terminated_at_;
  std::optional<absl::Duration> killed_at_;
  int live_ = 0;  // live processes in the group at the last sample
};

bool Supervisor::LeaderExited() {
  siginfo_t info;
  std::memset(&info, 0, sizeof(info));
  // WNOWAIT: the leader stays a zombie, keeping its pid and so the group
  // id reserved until Reap().
  if (waitid(P_PID, spawned_.pid, &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
    return errno != EINTR;  // ECHILD: someone else reaped it (Reap says so)
  }
  return info.si_pid == spawned_.pid;
}

void Supervisor::Terminate(absl::Duration now) {
  Signal(SIGTERM);
  // A stopped process would hold SIGTERM pending until continued.
  Signal(SIGCONT);
  terminated_at_ = now;
}

void Supervisor::Drain(UniqueFd& fd, bool is_stdout, int max_reads) {
  for (int i = 0; i < max_reads && fd.get() >= 0; ++i) {
    const ssize_t n = read(fd.get(), buffer_.data(), buffer_.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n <= 0) {  // end of file, or an error no retry fixes
      fd.reset();
      return;
    }
    if (exit_.first_output == absl::InfiniteDuration()) {
      exit_.first_output = MonotonicNow() - start_;
    }
    const std::string_view bytes(buffer_.data(), static_cast<size_t>(n));
    tail_.Append(bytes);
    if (is_stdout) lines_.Append(bytes);
  }
}

absl::Status Supervisor::Reap() {
  int status = 0;
  rusage usage;
  std::memset(&usage, 0, sizeof(usage));
  pid_t reaped;
  do {
    reaped = wait4(spawned_.pid, &status, 0, &usage);
  } while (reaped < 0 && errno == EINTR);
  if (reaped < 0) {
    return absl::InternalError(absl::StrCat(
        "workload: cannot reap process ", spawned_.pid, " (",
        std::strerror(errno),
        "): something else in the agent reaps children it did not start"));
  }
  if (WIFEXITED(status)) exit_.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) exit_.signal = WTERMSIG(status);
  exit_.cpu_seconds = Seconds(usage.ru_utime) + Seconds(usage.ru_stime);
  exit_.peak_rss_bytes =
      std::max<int64_t>(exit_.peak_rss_bytes, int64_t{usage.ru_maxrss} * 1024);
  return absl::OkStatus();
}

absl::StatusOr<WorkloadExit> Supervisor::Run(
    const std::function<bool()>& cancelled) {
  const absl::Duration deadline = command_.timeout == absl::InfiniteDuration()
                                      ? absl::InfiniteDuration()
                                      : start_ + command_.timeout;
  absl::Duration next_sample = start_;
  for (;;) {
    const absl::Duration now = MonotonicNow();
    bool just_exited = false;
    if (!leader_exited_ && LeaderExited()) {
      leader_exited_ = just_exited = true;
      exit_.wall = now - start_;
    }
    if (now >= next_sample || just_exited) {
      const std::optional<GroupSample> sample =
          SampleProcessGroup(spawned_.pid);
      if (sample) {
        exit_.peak_rss_bytes =
            std::max(exit_.peak_rss_bytes, sample->rss_bytes);
        live_ = sample->live_processes;
      }
      // The run ends with its group's last process, so once the leader
      // is gone (or going) the group is looked at more often.
      next_sample = now + (leader_exited_ || terminated_at_ ? kTeardownTick
                                                            : kSampleInterval);
      if (leader_exited_ && (!sample || live_ == 0)) {
        // Without /proc the group cannot be seen: make sure of it.
        if (!sample) Signal(SIGKILL);
        break;
      }
    }
    if (!terminated_at_) {
      if (leader_exited_) {
        Terminate(now);  // what it left behind
      } else if (now >= deadline) {
        exit_.timed_out = true;
        Terminate(now);
      } else if (cancelled && cancelled()) {
        exit_.cancelled = true;
        Terminate(now);
      }
    }
    if (terminated_at_ && !killed_at_ &&
        now >= *terminated_at_ + command_.kill_grace) {
      Signal(SIGKILL);
      killed_at_ = now;
    }
    if (killed_at_ && now - *killed_at_ >= kUnkillableBound) {
      if (leader_exited_) (void)Reap();
      return absl::InternalError(absl::StrCat(
          "workload: ", live_, " process(es) of group ", spawned_.pid,
          " still alive ", absl::FormatDuration(kUnkillableBound),
          " after SIGKILL (stuck in the kernel, state D?)"));
    }

    absl::Duration wake = next_sample;
    if (!terminated_at_) wake = std::min(wake, deadline);
    if (terminated_at_ && !killed_at_)
      wake = std::min(wake, *terminated_at_ + command_.kill_grace);
    pollfd fds[3];
    nfds_t count = 0;
    const int stdout_slot =
        spawned_.stdout_read.get() >= 0 ? static_cast<int>(count++) : -1;
    if (stdout_slot >= 0)
      fds[stdout_slot] = {spawned_.stdout_read.get(), POLLIN, 0};
    const int stderr_slot =
        spawned_.stderr_read.get() >= 0 ? static_cast<int>(count++) : -1;
    if (stderr_slot >= 0)
      fds[stderr_slot] = {spawned_.stderr_read.get(), POLLIN, 0};
    // Readable once the leader exits: wakes the loop at that moment, so
    // `wall` is not late by a sample interval.
    if (spawned_.pidfd.get() >= 0 && !leader_exited_) {
      fds[count++] = {spawned_.pidfd.get(), POLLIN, 0};
    }
    const int ready = poll(fds, count, PollMillis(wake - MonotonicNow()));
    if (ready < 0 && errno != EINTR) {
      const int error = errno;
      Signal(SIGKILL);
      if (!leader_exited_) {
        siginfo_t info;
        while (waitid(P_PID, spawned_.pid, &info, WEXITED | WNOWAIT) < 0 &&
               errno == EINTR) {
        }
      }
      (void)Reap();
      return absl::InternalError(
          absl::StrCat("workload: poll: ", std::strerror(error)));
    }
    if (ready <= 0) continue;
    if (stdout_slot >= 0 && fds[stdout_slot].revents != 0) {
      Drain(spawned_.stdout_read, /*is_stdout=*/true, kReadsPerWake);
    }
    if (stderr_slot >= 0 && fds[stderr_slot].revents != 0) {
      Drain(spawned_.stderr_read, /*is_stdout=*/false, kReadsPerWake);
    }
  }

  // Every writer in the group is gone: what is left in the pipes is at
  // most their size. A process that left the group may still hold a
  // write end; it is not waited for.
  constexpr int kPipeDrainReads = 1024 * 1024 / kReadChunk;
  Drain(spawned_.stdout_read, /*is_stdout=*/true, kPipeDrainReads);
  Drain(spawned_.stderr_read, /*is_stdout=*/false, kPipeDrainReads);
  lines_.Finish();
  if (absl::Status reaped = Reap(); !reaped.ok()) return reaped;
  exit_.tail = tail_.Text();
  exit_.output_bytes = tail_.total_bytes();
  return std::move(exit_);
}

}  // namespace

absl::StatusOr<WorkloadExit> RunWorkload(
    const WorkloadCommand& command, const std::function<bool()>& cancelled,
    const std::function<void(std::string_view)>& on_stdout_line) {
  if (command.timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("workload: timeout must be positive, not ",
                     absl::FormatDuration(command.timeout)));
  }
  if (command.kill_grace < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("workload: kill_grace must not be negative, not ",
                     absl::FormatDuration(command.kill_grace)));
  }
  const absl::Duration start = MonotonicNow();
  auto spawned = SpawnWorkload(command);
  if (!spawned.ok()) return spawned.status();
  return Supervisor(command, *std::move(spawned), start, on_stdout_line)
      .Run(cancelled);
}

}  // namespace fleetbench::agent
