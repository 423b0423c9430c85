// tests/process.h — real child processes for end-to-end tests: the
// fleetbench binary started with fork/exec, its stdout read through a pipe,
// stopped with real signals.
#ifndef FLEETBENCH_TESTS_PROCESS_H_
#define FLEETBENCH_TESTS_PROCESS_H_

#include <sys/types.h>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"

namespace fleetbench::testing {

class Process {
 public:
  // Starts `argv` with extra environment variables; stderr goes to
  // `stderr_path` (kept for post-mortems) when given.
  Process(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
          const std::string& stderr_path = "");
  ~Process();  // SIGKILLs and reaps if still running
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  pid_t pid() const { return pid_; }
  // Reads stdout until a line starting with `prefix`; "" on timeout/EOF.
  std::string ReadLineStartingWith(const std::string& prefix, absl::Duration timeout);
  void Signal(int sig);
  // Waits for exit; returns the exit code, or 128+signal.
  int Wait();
  // As Wait, but gives up after `timeout`: nullopt while it still runs.
  std::optional<int> WaitFor(absl::Duration timeout);

 private:
  pid_t pid_ = -1;
  int stdout_fd_ = -1;
  std::string buffer_;
  bool reaped_ = false;
  int status_ = 0;
};

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};
// Runs a command to completion and captures both streams.
CommandResult RunCommand(const std::vector<std::string>& argv,
                         const std::map<std::string, std::string>& env);

// Polls `condition` until it holds or `timeout` passes. For waiting on a
// state another process reaches (a node registering), with a deadline; never
// a fixed sleep standing in for the event.
bool WaitFor(const std::function<bool()>& condition, absl::Duration timeout);

// A TCP port that was free a moment ago on 127.0.0.1.
int PickFreePort();
std::string MakeTempDir(const std::string& prefix);

}  // namespace fleetbench::testing

#endif  // FLEETBENCH_TESTS_PROCESS_H_
