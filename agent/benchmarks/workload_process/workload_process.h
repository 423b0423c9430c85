// agent/benchmarks/workload_process/workload_process.h — runs a command a
// user declared (a training step, a serving load test) as one supervised
// process tree, and says how it ended.
//
// What it owns: the child and every process that stays in the child's
// process group. RunWorkload starts the command with fork/exec, never
// through a shell, as the leader of a new session (so of a new process
// group), with stdin from /dev/null and no descriptor of the agent but its
// two output pipes. It reads both pipes continuously with poll(), so a
// workload that prints without pause never blocks on a full pipe; only the
// last keep_tail_bytes are kept. It returns only once the leader is reaped
// and no live process is left in the group:
//   - past the timeout, or once `cancelled` says so: SIGTERM (and SIGCONT,
//     for stopped ones) to the whole group, SIGKILL to it kill_grace later;
//   - when the leader exits on its own and processes remain in its group
//     (a background child it left behind), the same: the run is the
//     leader's life, and nothing it started may outlive the call.
// The leader is reaped only after its group is empty: until then its
// zombie keeps the group's id reserved, so kill(-pgid) can never reach an
// unrelated group that reused the number.
//
// What it does not catch: a process that leaves the group on purpose
// (setsid, setpgid: a daemon) escapes, as it would any process-group
// supervisor; only a cgroup holds those. If the agent itself dies, the
// leader gets SIGKILL (PR_SET_PDEATHSIG; the calling thread waits for it
// to end, so the signal never fires early), but its own children do not:
// the agent's systemd unit (KillMode=control-group, the default) kills
// what is left. PR_SET_CHILD_SUBREAPER is not used: it is process-wide,
// and every orphan in the agent would become the agent's to reap.
//
// Environment: the child gets only the agent's PATH, HOME, USER, LOGNAME,
// LANG, LC_ALL, TZ, TMPDIR, LD_LIBRARY_PATH and CUDA_VISIBLE_DEVICES (those
// set), then command.env on top. Nothing else of the agent's environment
// (tokens, proxies, the agent's own settings) reaches the workload; a
// workload needs what it declares. PATH defaults to
// /usr/local/bin:/usr/bin:/bin when the agent has none.
//
// argv[0]: an absolute path, or a name without '/' looked up in the
// child's PATH (after command.env), in its absolute folders only. A
// relative path with '/' is refused (it would depend on the agent's
// working directory, not cwd).
//
// Errors: INVALID_ARGUMENT for a command that cannot be valid (empty argv,
// relative path, bad environment name, negative timeout or grace);
// NOT_FOUND when argv[0] does not exist or is not on PATH, naming it;
// FAILED_PRECONDITION when it exists but cannot be run (permissions, not
// an executable, cwd missing), with the reason; INTERNAL when the agent
// cannot make a pipe or a process, or when the group outlives SIGKILL by
// kUnkillableBound (processes stuck in the kernel; the call then returns
// rather than hang the agent). A workload that ran and failed, timed out
// or was cancelled is not an error: WorkloadExit says how it ended.
//
// Thread safety: calls are independent and may run on several threads at
// once; no signal handler, no process-wide setting is touched. The caller
// must not reap children it did not start (waitpid(-1), SIGCHLD set to
// SIG_IGN), which would take the leader's exit status away.
#ifndef FLEETBENCH_AGENT_BENCHMARKS_WORKLOAD_PROCESS_WORKLOAD_PROCESS_H_
#define FLEETBENCH_AGENT_BENCHMARKS_WORKLOAD_PROCESS_WORKLOAD_PROCESS_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace fleetbench::agent {

struct WorkloadCommand {
  std::vector<std::string> argv;           // argv[0]: see the contract above
  std::string cwd;                         // "" = the agent's
  std::map<std::string, std::string> env;  // on top of the inherited few
  // From the start; InfiniteDuration() leaves the end to `cancelled`.
  absl::Duration timeout = absl::InfiniteDuration();
  // Between SIGTERM and SIGKILL.
  absl::Duration kill_grace = absl::Seconds(5);
  // How much of the combined stdout and stderr WorkloadExit::tail keeps.
  size_t keep_tail_bytes = 64 * 1024;
};

struct WorkloadExit {
  int exit_code = -1;      // the leader's exit status when it exited
  int signal = 0;          // the signal that ended the leader, when one did
  bool timed_out = false;  // ended by the timeout
  bool cancelled = false;  // ended by `cancelled`
  absl::Duration wall;     // from the start to the leader's exit
  // From the start to the first byte on stdout or stderr (the workload's
  // set-up time); InfiniteDuration() when it printed nothing.
  absl::Duration first_output = absl::InfiniteDuration();
  // The last keep_tail_bytes of stdout and stderr in the order they were
  // read (a pipe read at a time, so the two interleave by chunk). When
  // output was dropped it starts at a line start if the kept bytes hold a
  // line break before their end.
  std::string tail;
  int64_t output_bytes = 0;  // every byte of stdout and stderr
  // The largest sum of resident set sizes of the group's live processes,
  // sampled every kSampleInterval from /proc, or the leader's own peak
  // (wait4, which covers the descendants it waited for) when larger, so a
  // run shorter than a sample still has one. Shared pages count once per
  // process that maps them: an upper bound for forked workers.
  int64_t peak_rss_bytes = 0;
  // User plus system CPU of the leader and of every descendant it (or a
  // descendant in turn) waited for: wait4's accounting. A process whose
  // parent did not wait for it (one left behind by the leader) is not
  // counted.
  double cpu_seconds = 0;
};

// How often the group is sampled from /proc (peak_rss_bytes), and the
// longest `cancelled` goes unread.
inline constexpr absl::Duration kSampleInterval = absl::Milliseconds(100);
// How long the group may outlive SIGKILL before RunWorkload gives up on it.
inline constexpr absl::Duration kUnkillableBound = absl::Seconds(30);
// Longer stdout lines reach on_stdout_line cut to their first this many
// bytes.
inline constexpr size_t kMaxStdoutLine = 64 * 1024;

// Runs `command` as described at the top of this file. on_stdout_line (may
// be empty) gets each stdout line without its '\n', in order, on the
// calling thread, as it arrives; a last line without '\n' comes at the
// end. It should return quickly: while it runs nothing reads the pipes,
// so a workload that prints waits for it. `cancelled` (may be empty) is
// called on the calling thread between reads, at least every
// kSampleInterval; a plugin passes [&] { return context.cancelled(); }.
absl::StatusOr<WorkloadExit> RunWorkload(
    const WorkloadCommand& command, const std::function<bool()>& cancelled,
    const std::function<void(std::string_view)>& on_stdout_line);

}  // namespace fleetbench::agent

#endif  // FLEETBENCH_AGENT_BENCHMARKS_WORKLOAD_PROCESS_WORKLOAD_PROCESS_H_
