// agent/benchmarks/workload_process/workload_spawn.h — starting a
// workload's process (the first half of RunWorkload; workload_process.h
// holds the contract both halves keep).
//
// Everything that allocates — the environment, the path of the program,
// argv and envp arrays, the pipes — is made before fork(), so the child
// makes only async-signal-safe system calls until execve: the agent has
// many threads, and a lock another thread held at fork() stays locked in
// the child forever. The child reports a failure before execve through a
// close-on-exec pipe; end of file on it means execve succeeded.
//
// Thread-safe: nothing here outlives a call but the descriptors returned.
#ifndef FLEETBENCH_AGENT_BENCHMARKS_WORKLOAD_PROCESS_WORKLOAD_SPAWN_H_
#define FLEETBENCH_AGENT_BENCHMARKS_WORKLOAD_PROCESS_WORKLOAD_SPAWN_H_

#include <sys/types.h>

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/benchmarks/workload_process/workload_process.h"

namespace fleetbench::agent {

// Owns one file descriptor; -1 when empty.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }

  int get() const { return fd_; }
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void reset();

 private:
  int fd_ = -1;
};

// The names of the agent's environment a workload inherits (the contract
// in workload_process.h says why so few).
inline constexpr std::string_view kInheritedEnvironment[] = {
    "PATH",   "HOME", "USER",   "LOGNAME",         "LANG",
    "LC_ALL", "TZ",   "TMPDIR", "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES"};
inline constexpr std::string_view kDefaultPath = "/usr/local/bin:/usr/bin:/bin";

// "NAME=value" entries, sorted by name: the kInheritedEnvironment entries
// of `inherited` (an environ-style array, null-terminated), PATH set to
// kDefaultPath when it has none, then `overlay` replacing or adding.
// INVALID_ARGUMENT for an overlay name that is empty or holds '=' or NUL,
// or a value that holds NUL.
absl::StatusOr<std::vector<std::string>> WorkloadEnvironment(
    const std::map<std::string, std::string>& overlay,
    const char* const* inherited);

// What execve is given for `program` (argv[0]): itself when absolute; a
// name without '/' looked up in `path` (the child's PATH), in its absolute
// folders only: the first regular file there that this process may
// execute. INVALID_ARGUMENT for "" or a relative path with '/';
// NOT_FOUND when no folder holds it.
absl::StatusOr<std::string> ResolveProgram(const std::string& program,
                                           const std::string& path);

// A started workload: its pid (also its process group and session id),
// the read ends of its stdout and stderr pipes (non-blocking), and a pidfd
// that turns readable when it exits (empty where the kernel has none,
// before Linux 5.3).
struct SpawnedWorkload {
  pid_t pid = -1;
  UniqueFd stdout_read;
  UniqueFd stderr_read;
  UniqueFd pidfd;
};

// Checks the command, starts it and waits until execve succeeded or
// failed. Errors as in workload_process.h; on an error no child is left.
absl::StatusOr<SpawnedWorkload> SpawnWorkload(const WorkloadCommand& command);

}  // namespace fleetbench::agent

#endif  // FLEETBENCH_AGENT_BENCHMARKS_WORKLOAD_PROCESS_WORKLOAD_SPAWN_H_
