#include "agent/benchmarks/workload_process/workload_spawn.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace fleetbench::agent {

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) {
    reset();
    fd_ = other.release();
  }
  return *this;
}

void UniqueFd::reset() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

absl::StatusOr<std::vector<std::string>> WorkloadEnvironment(
    const std::map<std::string, std::string>& overlay,
    const char* const* inherited) {
  std::map<std::string, std::string> env;
  for (const char* const* entry = inherited;
       entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view text = *entry;
    const size_t equals = text.find('=');
    if (equals == std::string_view::npos) continue;
    const std::string_view name = text.substr(0, equals);
    for (std::string_view kept : kInheritedEnvironment) {
      if (name == kept)
        env[std::string(name)] = std::string(text.substr(equals + 1));
    }
  }
  env.try_emplace("PATH", kDefaultPath);
  for (const auto& [name, value] : overlay) {
    if (name.empty() || absl::StrContains(name, '=') ||
        name.find('\0') != std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("workload: environment name '", name,
                       "' is empty or holds '=' or NUL"));
    }
    if (value.find('\0') != std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat(
          "workload: the value of environment variable ", name, " holds NUL"));
    }
    env[name] = value;
  }
  std::vector<std::string> entries;
  entries.reserve(env.size());
  for (const auto& [name, value] : env)
    entries.push_back(absl::StrCat(name, "=", value));
  return entries;
}

absl::StatusOr<std::string> ResolveProgram(const std::string& program,
                                           const std::string& path) {
  if (program.empty())
    return absl::InvalidArgumentError("workload: argv[0] is empty");
  if (program[0] == '/') return program;
  if (absl::StrContains(program, '/')) {
    return absl::InvalidArgumentError(
        absl::StrCat("workload: argv[0] '", program,
                     "' is a relative path; give an absolute path or a name to "
                     "find on PATH"));
  }
  for (absl::string_view folder : absl::StrSplit(path, ':')) {
    // An empty or relative entry means a folder relative to the agent's
    // working directory: never searched.
    if (folder.empty() || folder[0] != '/') continue;
    std::string candidate = absl::StrCat(folder, "/", program);
    struct stat info;
    if (stat(candidate.c_str(), &info) == 0 && S_ISREG(info.st_mode) &&
        access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
  }
  return absl::NotFoundError(
      absl::StrCat("workload: '", program,
                   "' is not an executable file in any folder of PATH=", path));
}

namespace {

// The steps of the child before execve, as reported through the pipe.
enum class ChildStep : int32_t {
  kSession,
  kDeathSignal,
  kStdio,
  kWorkingDirectory,
  kExec,
};

struct ChildFailure {
  ChildStep step;
  int32_t error;
};

// What the child needs, all made before fork().
struct ChildPlan {
  pid_t parent = -1;
  const char* program = nullptr;
  char* const* argv = nullptr;
  char* const* envp = nullptr;
  const char* cwd = nullptr;  // null: stay
  int stdin_fd = -1;
  int stdout_fd = -1;
  int stderr_fd = -1;
  int report_fd = -1;  // close-on-exec
  long max_fds = 0;    // for the fallback without close_range
};

[[noreturn]] void FailInChild(int report_fd, ChildStep step) {
  const ChildFailure failure{step, errno};
  // Nothing to do if this write fails: the parent then sees a child that
  // exited 127 without a report.
  (void)!write(report_fd, &failure, sizeof(failure));
  _exit(127);
}

// Runs in the child: async-signal-safe calls only (see the header).
[[noreturn]] void RunChild(const ChildPlan& plan) {
  // A new session: its own process group to signal as one, and no
  // controlling terminal, so a Ctrl-C meant for the agent reaches the
  // agent, which then cancels the workload itself.
  if (setsid() < 0) FailInChild(plan.report_fd, ChildStep::kSession);
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0)
    FailInChild(plan.report_fd, ChildStep::kDeathSignal);
  // The agent died before prctl took effect: no signal will come.
  if (getppid() != plan.parent) _exit(127);
  // Ignored signals stay ignored across execve: an agent that ignores
  // SIGPIPE (as servers do) would hand that on, and `a | head` would no
  // longer end `a`. Handlers are reset by execve; masks are not.
  struct sigaction default_action;
  std::memset(&default_action, 0, sizeof(default_action));
  default_action.sa_handler = SIG_DFL;
  // Fails for SIGKILL, SIGSTOP and the C library's own signals: fine.
  for (int sig = 1; sig < NSIG; ++sig) sigaction(sig, &default_action, nullptr);
  sigset_t no_signals;
  sigemptyset(&no_signals);
  sigprocmask(SIG_SETMASK, &no_signals, nullptr);
  // The parent made every descriptor here >= 3, so these never clobber
  // each other.
  if (dup2(plan.stdin_fd, 0) < 0 || dup2(plan.stdout_fd, 1) < 0 ||
      dup2(plan.stderr_fd, 2) < 0) {
    FailInChild(plan.report_fd, ChildStep::kStdio);
  }
  // Every other descriptor the agent has (sockets, files other threads
  // opened without O_CLOEXEC) closes at execve; the report pipe stays
  // open until then.
  bool marked = false;
#ifdef SYS_close_range
  marked = syscall(SYS_close_range, 3U, ~0U, 4U /* CLOSE_RANGE_CLOEXEC */) == 0;
#endif
  if (!marked) {
    for (long fd = 3; fd < plan.max_fds; ++fd)
      fcntl(static_cast<int>(fd), F_SETFD, FD_CLOEXEC);
  }
  if (plan.cwd != nullptr && chdir(plan.cwd) != 0)
    FailInChild(plan.report_fd, ChildStep::kWorkingDirectory);
  execve(plan.program, plan.argv, plan.envp);
  FailInChild(plan.report_fd, ChildStep::kExec);
}

absl::Status ErrnoError(int error, const char* what) {
  return absl::InternalError(
      absl::StrCat("workload: ", what, ": ", std::strerror(error)));
}

// `fd` moved to a number >= 3 (and close-on-exec), so the child's dup2 to
// 0, 1 and 2 cannot close one of its own sources.
absl::StatusOr<UniqueFd> AboveStdio(int fd) {
  UniqueFd owned(fd);
  if (fd >= 3) return owned;
  const int moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
  if (moved < 0) return ErrnoError(errno, "fcntl(F_DUPFD_CLOEXEC)");
  return UniqueFd(moved);
}

struct Pipe {
  UniqueFd read;
  UniqueFd write;
};

absl::StatusOr<Pipe> MakePipe() {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return ErrnoError(errno, "pipe2");
  UniqueFd read_end(fds[0]);
  UniqueFd write_end(fds[1]);
  auto read = AboveStdio(read_end.release());
  if (!read.ok()) return read.status();
  auto write = AboveStdio(write_end.release());
  if (!write.ok()) return write.status();
  return Pipe{std::move(*read), std::move(*write)};
}

absl::Status ChildError(const ChildFailure& failure,
                        const WorkloadCommand& command,
                        const std::string& program) {
  const char* reason = std::strerror(failure.error);
  switch (failure.step) {
    case ChildStep::kExec:
      if (failure.error == ENOENT) {
        return absl::NotFoundError(
            absl::StrCat("workload: cannot run '", program,
                         "': no such file (or its #! interpreter)"));
      }
      return absl::FailedPreconditionError(
          absl::StrCat("workload: cannot run '", program, "': ", reason));
    case ChildStep::kWorkingDirectory:
      return absl::FailedPreconditionError(
          absl::StrCat("workload: cannot enter working directory '",
                       command.cwd, "': ", reason));
    case ChildStep::kSession:
      return ErrnoError(failure.error, "setsid in the child");
    case ChildStep::kDeathSignal:
      return ErrnoError(failure.error, "prctl(PR_SET_PDEATHSIG) in the child");
    case ChildStep::kStdio:
      return ErrnoError(failure.error, "dup2 of stdio in the child");
  }
  return ErrnoError(failure.error, "the child");
}

void ReapQuietly(pid_t pid) {
  while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace

absl::StatusOr<SpawnedWorkload> SpawnWorkload(const WorkloadCommand& command) {
  if (command.argv.empty())
    return absl::InvalidArgumentError("workload: argv is empty");
  for (const std::string& arg : command.argv) {
    if (arg.find('\0') != std::string::npos) {
      return absl::InvalidArgumentError("workload: an argument holds NUL");
    }
  }
  if (command.cwd.find('\0') != std::string::npos) {
    return absl::InvalidArgumentError("workload: cwd holds NUL");
  }
  auto env = WorkloadEnvironment(command.env, environ);
  if (!env.ok()) return env.status();
  std::string path(kDefaultPath);
  for (const std::string& entry : *env) {
    if (absl::StartsWith(entry, "PATH=")) path = entry.substr(5);
  }
  auto program = ResolveProgram(command.argv[0], path);
  if (!program.ok()) return program.status();

  std::vector<char*> argv;
  for (const std::string& arg : command.argv)
    argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (const std::string& entry : *env)
    envp.push_back(const_cast<char*>(entry.c_str()));
  envp.push_back(nullptr);

  const int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null_fd < 0) return ErrnoError(errno, "open /dev/null");
  auto dev_null = AboveStdio(null_fd);
  if (!dev_null.ok()) return dev_null.status();
  auto out = MakePipe();
  if (!out.ok()) return out.status();
  auto err = MakePipe();
  if (!err.ok()) return err.status();
  auto report = MakePipe();
  if (!report.ok()) return report.status();

  ChildPlan plan;
  plan.parent = getpid();
  plan.program = program->c_str();
  plan.argv = argv.data();
  plan.envp = envp.data();
  plan.cwd = command.cwd.empty() ? nullptr : command.cwd.c_str();
  plan.stdin_fd = dev_null->get();
  plan.stdout_fd = out->write.get();
  plan.stderr_fd = err->write.get();
  plan.report_fd = report->write.get();
  plan.max_fds = sysconf(_SC_OPEN_MAX);

  const pid_t pid = fork();
  if (pid < 0) return ErrnoError(errno, "fork");
  if (pid == 0) RunChild(plan);

  // Only the child may hold the write ends, so the pipes end when the
  // workload's processes do.
  out->write.reset();
  err->write.reset();
  report->write.reset();
  dev_null->reset();

  ChildFailure failure;
  ssize_t got;
  do {
    got = read(report->read.get(), &failure, sizeof(failure));
  } while (got < 0 && errno == EINTR);
  if (got != 0) {
    const int read_error = errno;
    ReapQuietly(pid);
    if (got == static_cast<ssize_t>(sizeof(failure))) {
      return ChildError(failure, command, *program);
    }
    return got < 0
               ? ErrnoError(read_error, "reading the child's report")
               : absl::InternalError("workload: the child sent a short report");
  }

  SpawnedWorkload spawned;
  spawned.pid = pid;
  spawned.stdout_read = std::move(out->read);
  spawned.stderr_read = std::move(err->read);
  for (const UniqueFd* fd : {&spawned.stdout_read, &spawned.stderr_read}) {
    fcntl(fd->get(), F_SETFL, fcntl(fd->get(), F_GETFL) | O_NONBLOCK);
  }
#ifdef SYS_pidfd_open
  const long pidfd = syscall(SYS_pidfd_open, pid, 0);
  if (pidfd >= 0) spawned.pidfd = UniqueFd(static_cast<int>(pidfd));
#endif
  return spawned;
}

}  // namespace fleetbench::agent
