// Real processes: sh, sleep, yes, head, python3. Every test that ends a
// process tree checks /proc afterwards for any process still carrying the
// test's marker, and every test checks that no child is left to reap.
#include "agent/benchmarks/workload_process/workload_process.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <iostream>
#include <iterator>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetbench::agent {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

namespace fs = std::filesystem;

// The python3 and coreutils of the system, whatever PATH the test has.
constexpr char kSystemPath[] = "/usr/local/bin:/usr/bin:/bin";

// Processes whose command line holds `marker` now. A zombie's command
// line is empty: only processes that still run count.
int CountProcessesWith(const std::string& marker) {
  int count = 0;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return -1;
  while (const dirent* entry = readdir(proc)) {
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
    std::ifstream in(absl::StrCat("/proc/", entry->d_name, "/cmdline"),
                     std::ios::binary);
    const std::string cmdline((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
    if (cmdline.find(marker) != std::string::npos) ++count;
  }
  closedir(proc);
  return count;
}

std::string Quoted(const std::string& s) { return absl::StrCat("'", s, "'"); }

struct Ran {
  absl::StatusOr<WorkloadExit> exit;
  std::vector<std::string> lines;
};

class WorkloadProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern =
        fs::canonical(::testing::TempDir()).string() + "/workload_test.XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
    std::random_device random;
    marker_ = absl::StrFormat("fbwl%08x%08x", random(), random());
    // sleep under a name that carries the marker, so a sleeping child
    // shows the marker in /proc/<pid>/cmdline like its shell does.
    sleeper_ = absl::StrCat(root_, "/sleep-", marker_);
    fs::create_symlink(
        fs::exists("/usr/bin/sleep") ? "/usr/bin/sleep" : "/bin/sleep",
        sleeper_);
    gate_ = absl::StrCat(root_, "/gate");
    ASSERT_EQ(mkfifo(gate_.c_str(), 0600), 0) << std::strerror(errno);
  }

  void TearDown() override {
    fs::remove_all(root_);
    // Every process RunWorkload started was reaped: none left, zombie or
    // alive.
    errno = 0;
    EXPECT_EQ(waitpid(-1, nullptr, WNOHANG), -1);
    EXPECT_EQ(errno, ECHILD);
  }

  static WorkloadCommand Shell(const std::string& script) {
    WorkloadCommand command;
    command.argv = {"/bin/sh", "-c", script};
    command.env = {{"PATH", kSystemPath}};
    command.timeout = absl::Seconds(60);
    return command;
  }

  // Runs `command`, keeping its stdout lines; `on_line` also sees them.
  static Ran Run(
      const WorkloadCommand& command,
      const std::function<bool()>& cancelled = nullptr,
      const std::function<void(std::string_view)>& on_line = nullptr) {
    Ran ran;
    ran.exit = RunWorkload(command, cancelled, [&](std::string_view line) {
      ran.lines.emplace_back(line);
      if (on_line) on_line(line);
    });
    return ran;
  }

  // A shell that starts a sleeping child in the background, says
  // "started", then `then`; all of its processes carry the marker.
  std::string TreeScript(const std::string& before,
                         const std::string& then) const {
    return absl::StrCat(before, Quoted(sleeper_), " 600 & echo started; ", then,
                        "; : ", marker_);
  }

  // Like TreeScript, but the leader waits at the gate before `then` until
  // CountAtStart has counted. A leader that exits at once has its child
  // ended as soon as the supervisor sees it gone, which on a loaded
  // machine can come before the count. The leader holds the fifo open for
  // reading (and writing, so the open does not block) from its start.
  std::string GatedTreeScript(const std::string& before,
                              const std::string& then) const {
    return TreeScript(absl::StrCat("exec 3<>", Quoted(gate_), "; ", before),
                      absl::StrCat("read go <&3; ", then));
  }

  // When "started" arrives, waits (up to 10 s) until at least `expected`
  // processes carry the marker and records how many did: proof that the
  // count after the run looks at a tree that existed. A process in the
  // middle of execve shows an empty command line for a moment, hence the
  // wait.
  std::function<void(std::string_view)> CountAtStart(int expected) {
    return [this, expected](std::string_view line) {
      if (line != "started") return;
      const auto give_up =
          std::chrono::steady_clock::now() + std::chrono::seconds(10);
      do {
        running_at_start_ = CountProcessesWith(marker_);
        if (running_at_start_ >= expected) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      } while (std::chrono::steady_clock::now() < give_up);
      OpenGate();
    };
  }

  // Lets a GatedTreeScript leader go on. Without a reader (no gate in the
  // script) the open fails at once and nothing waits.
  void OpenGate() const {
    const int fd = open(gate_.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return;
    (void)!write(fd, "go\n", 3);
    close(fd);
  }

  std::string root_;
  std::string marker_;
  std::string sleeper_;
  std::string gate_;
  int running_at_start_ = -1;
};

TEST_F(WorkloadProcessTest, ExitCodeAndStdoutLinesInOrderStderrOnlyInTheTail) {
  Ran ran =
      Run(Shell("echo one; echo two >&2; echo three; printf four; exit 3"));
  ASSERT_TRUE(ran.exit.ok()) << ran.exit.status();
  EXPECT_THAT(ran.lines, ElementsAre("one", "three", "four"));
  EXPECT_EQ(ran.exit->exit_code, 3);
  EXPECT_EQ(ran.exit->signal, 0);
  EXPECT_FALSE(ran.exit->timed_out);
  EXPECT_FALSE(ran.exit->cancelled);
  EXPECT_THAT(ran.exit->tail, HasSubstr("two\n"));
  EXPECT_THAT(ran.exit->tail, HasSubstr("four"));
  EXPECT_EQ(ran.exit->output_bytes, 18);
  EXPECT_GT(ran.exit->wall, absl::ZeroDuration());
}

TEST_F(WorkloadProcessTest, PastItsTimeoutTheWholeTreeEnds) {
  WorkloadCommand command =
      Shell(TreeScript("", absl::StrCat(Quoted(sleeper_), " 600")));
  command.timeout = absl::Seconds(1);
  // Were the grace waited for, the run would take a minute more.
  command.kill_grace = absl::Seconds(60);
  Ran ran = Run(command, nullptr, CountAtStart(2));
  ASSERT_TRUE(ran.exit.ok()) << ran.exit.status();
  EXPECT_GE(running_at_start_, 2);
  EXPECT_EQ(CountProcessesWith(marker_), 0);
  EXPECT_TRUE(ran.exit->timed_out);
  EXPECT_FALSE(ran.exit->cancelled);
  EXPECT_EQ(ran.exit->signal, SIGTERM);
  EXPECT_EQ(ran.exit->exit_code, -1);
  EXPECT_GE(ran.exit->wall, absl::Seconds(1));
  EXPECT_LT(ran.exit->wall, command.kill_grace);  // SIGTERM was enough
}

TEST_F(WorkloadProcessTest, ATreeThatIgnoresSigtermGetsSigkillAfterTheGrace) {
  WorkloadCommand command = Shell(
      TreeScript("trap '' TERM; ", absl::StrCat(Quoted(sleeper_), " 600")));
  command.timeout = absl::Seconds(1);
  command.kill_grace = absl::Milliseconds(300);
  Ran ran = Run(command, nullptr, CountAtStart(2));
  ASSERT_TRUE(ran.exit.ok()) << ran.exit.status();
  EXPECT_GE(running_at_start_, 2);
  EXPECT_EQ(CountProcessesWith(marker_), 0);
  EXPECT_TRUE(ran.exit->timed_out);
  EXPECT_EQ(ran.exit->signal, SIGKILL);
  EXPECT_GE(ran.exit->wall, command.timeout + command.kill_grace);
}

TEST_F(WorkloadProcessTest, HundredMegabytesOfOutputKeepOnlyTheTail) {
  // 1,000,000 lines of 99 'x' and a '\n'.
  WorkloadCommand command =
      Shell(absl::StrCat("yes ", std::string(99, 'x'), " | head -c 100000000"));
  command.keep_tail_bytes = 10000;
  int64_t lines = 0;
  bool all_whole = true;
  auto exit = RunWorkload(command, nullptr, [&](std::string_view line) {
    ++lines;
    all_whole = all_whole && line.size() == 99;
  });
  ASSERT_TRUE(exit.ok()) << exit.status();
  EXPECT_EQ(exit->exit_code, 0);
  EXPECT_EQ(exit->output_bytes, 100'000'000);
  EXPECT_EQ(lines, 1'000'000);
  EXPECT_TRUE(all_whole);
  // 10000 bytes end exactly at a line start: 100 whole lines.
  EXPECT_EQ(exit->tail.size(), 10000u);
  EXPECT_EQ(exit->tail, [] {
    std::string lines;
    for (int i = 0; i < 100; ++i) lines += std::string(99, 'x') + "\n";
    return lines;
  }());
  std::cout << "100 MB through the pipes in " << exit->wall
            << ", cpu of the workload " << exit->cpu_seconds << " s\n";
}

TEST_F(WorkloadProcessTest, CancelFromAnotherThreadEndsTheTree) {
  WorkloadCommand command =
      Shell(TreeScript("", absl::StrCat(Quoted(sleeper_), " 600")));
  command.timeout = absl::InfiniteDuration();
  std::atomic<bool> cancel{false};
  std::promise<void> started;
  std::thread canceller([&] {
    started.get_future().wait_for(std::chrono::seconds(20));
    cancel = true;
  });
  auto count_at_start = CountAtStart(2);
  Ran ran = Run(
      command, [&] { return cancel.load(); },
      [&](std::string_view line) {
        count_at_start(line);
        if (line == "started") started.set_value();
      });
  canceller.join();
  ASSERT_TRUE(ran.exit.ok()) << ran.exit.status();
  EXPECT_GE(running_at_start_, 2);
  EXPECT_EQ(CountProcessesWith(marker_), 0);
  EXPECT_TRUE(ran.exit->cancelled);
  EXPECT_FALSE(ran.exit->timed_out);
  EXPECT_EQ(ran.exit->signal, SIGTERM);
  EXPECT_LT(ran.exit->wall, absl::Seconds(15));
}

TEST_F(WorkloadProcessTest, ALeaderThatExitsLeavesNoChildBehind) {
  WorkloadCommand command = Shell(GatedTreeScript("", "exit 0"));
  // Were the grace waited for, the run would take a minute.
  command.kill_grace = absl::Seconds(60);
  const auto begin = std::chrono::steady_clock::now();
  Ran ran = Run(command, nullptr, CountAtStart(2));
  const auto took = std::chrono::steady_clock::now() - begin;
  ASSERT_TRUE(ran.exit.ok()) << ran.exit.status();
  EXPECT_GE(running_at_start_, 2);  // the leader at the gate and its child
  EXPECT_EQ(CountProcessesWith(marker_), 0);
  EXPECT_EQ(ran.exit->exit_code, 0);
  EXPECT_EQ(ran.exit->signal, 0);
  EXPECT_FALSE(ran.exit->timed_out);
  EXPECT_FALSE(ran.exit->cancelled);
  // SIGTERM ended the child: no wait for the grace.
  EXPECT_LT(took, std::chrono::seconds(60));
}

TEST_F(WorkloadProcessTest, ALeftBehindChildThatIgnoresSigtermIsKilledToo) {
  WorkloadCommand command =
      Shell(GatedTreeScript("trap '' TERM; ", "exit 0"));
  command.kill_grace = absl::Milliseconds(300);
  const auto begin = std::chrono::steady_clock::now();
  Ran ran = Run(command, nullptr, CountAtStart(2));
  const auto took = std::chrono::steady_clock::now() - begin;
  ASSERT_TRUE(ran.exit.ok()) << ran.exit.status();
  EXPECT_GE(running_at_start_, 2);  // the leader at the gate and its child
  EXPECT_EQ(CountProcessesWith(marker_), 0);
  EXPECT_EQ(ran.exit->exit_code, 0);
  // The child outlived the leader by at least the grace, and `wall` is the
  // leader's life only.
  EXPECT_GE(absl::FromChrono(took), ran.exit->wall + command.kill_grace);
}

TEST_F(WorkloadProcessTest, FirstOutputIsTheTimeToTheFirstByte) {
  // The leader waits at the gate, which opens 300 ms after the line was
  // read (and so after its first byte was timed): the end comes later by
  // at least that, however late the supervisor reads.
  Ran ran = Run(Shell(absl::StrCat("exec 3<>", Quoted(gate_),
                                   "; sleep 0.2; echo ready; read go <&3")),
                nullptr, [&](std::string_view line) {
                  if (line != "ready") return;
                  std::this_thread::sleep_for(std::chrono::milliseconds(300));
                  OpenGate();
                });
  ASSERT_TRUE(ran.exit.ok()) << ran.exit.status();
  EXPECT_GE(ran.exit->first_output, absl::Milliseconds(200));
  EXPECT_LE(ran.exit->first_output + absl::Milliseconds(300), ran.exit->wall);

  Ran silent = Run(Shell("true"));
  ASSERT_TRUE(silent.exit.ok()) << silent.exit.status();
  EXPECT_EQ(silent.exit->first_output, absl::InfiniteDuration());
  EXPECT_EQ(silent.exit->output_bytes, 0);
  EXPECT_EQ(silent.exit->tail, "");
}

TEST_F(WorkloadProcessTest, AProgramThatCannotRunIsAClearError) {
  WorkloadCommand command;
  command.argv = {absl::StrCat(root_, "/no-such-program")};
  auto missing = RunWorkload(command, nullptr, nullptr);
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr(command.argv[0]));

  command.argv = {"no-such-program-" + marker_};
  auto not_on_path = RunWorkload(command, nullptr, nullptr);
  EXPECT_EQ(not_on_path.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(not_on_path.status().message(), HasSubstr(command.argv[0]));

  const std::string not_executable = root_ + "/data.txt";
  std::ofstream(not_executable) << "not a program\n";
  command.argv = {not_executable};
  auto refused = RunWorkload(command, nullptr, nullptr);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.status().message(), HasSubstr(not_executable));

  // Executable but not a binary and no #!: execvp would hand it to
  // /bin/sh; RunWorkload never uses a shell.
  const std::string script = root_ + "/script";
  std::ofstream(script) << "echo hi\n";
  ASSERT_EQ(chmod(script.c_str(), 0755), 0);
  command.argv = {script};
  auto no_shell = RunWorkload(command, nullptr, nullptr);
  EXPECT_EQ(no_shell.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(no_shell.status().message(), HasSubstr(script));

  command.argv = {"/bin/true"};
  command.cwd = root_ + "/missing-folder";
  auto no_cwd = RunWorkload(command, nullptr, nullptr);
  EXPECT_EQ(no_cwd.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(no_cwd.status().message(), HasSubstr(command.cwd));
}

TEST_F(WorkloadProcessTest, RefusesCommandsThatCannotBeValid) {
  WorkloadCommand empty;
  EXPECT_EQ(RunWorkload(empty, nullptr, nullptr).status().code(),
            absl::StatusCode::kInvalidArgument);
  WorkloadCommand relative = Shell("true");
  relative.argv[0] = "bin/sh";
  EXPECT_EQ(RunWorkload(relative, nullptr, nullptr).status().code(),
            absl::StatusCode::kInvalidArgument);
  WorkloadCommand no_time = Shell("true");
  no_time.timeout = absl::ZeroDuration();
  EXPECT_EQ(RunWorkload(no_time, nullptr, nullptr).status().code(),
            absl::StatusCode::kInvalidArgument);
  WorkloadCommand negative_grace = Shell("true");
  negative_grace.kill_grace = absl::Milliseconds(-1);
  EXPECT_EQ(RunWorkload(negative_grace, nullptr, nullptr).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(WorkloadProcessTest, TheEnvironmentIsTheInheritedFewPlusTheCommands) {
  ASSERT_EQ(setenv("FLEETBENCH_TEST_SECRET_TOKEN", marker_.c_str(), 1), 0);
  WorkloadCommand command;
  command.argv = {"env"};  // found on the inherited PATH
  command.env = {{"BATCH", "64"}};
  Ran ran = Run(command);
  unsetenv("FLEETBENCH_TEST_SECRET_TOKEN");
  ASSERT_TRUE(ran.exit.ok()) << ran.exit.status();
  EXPECT_THAT(ran.lines, Contains("BATCH=64"));
  const char* path = getenv("PATH");
  EXPECT_THAT(ran.lines, Contains(absl::StrCat(
                             "PATH=", path != nullptr ? path : kSystemPath)));
  EXPECT_THAT(ran.exit->tail, Not(HasSubstr(marker_)));
  for (const std::string& line : ran.lines)
    EXPECT_THAT(line, Not(StartsWith("FLEETBENCH_")));
}

TEST_F(WorkloadProcessTest, WorkingDirectoryStdinAndNoInheritedDescriptors) {
  // The agent's stdin is a pipe nobody writes to: a workload reading it
  // would wait until its timeout.
  int blocking[2];
  ASSERT_EQ(pipe(blocking), 0);
  const int saved_stdin = dup(0);
  ASSERT_GE(dup2(blocking[0], 0), 0);
  // And a descriptor opened without O_CLOEXEC.
  const int leaky = open("/dev/null", O_RDONLY);
  ASSERT_GE(leaky, 0);

  WorkloadCommand command =
      Shell(absl::StrCat("pwd; cat; echo read-all; test -e /proc/$$/fd/", leaky,
                         " && echo leaked || echo closed"));
  command.cwd = root_;
  command.timeout = absl::Seconds(20);
  Ran ran = Run(command);

  dup2(saved_stdin, 0);
  close(saved_stdin);
  close(blocking[0]);
  close(blocking[1]);
  close(leaky);
  ASSERT_TRUE(ran.exit.ok()) << ran.exit.status();
  EXPECT_FALSE(ran.exit->timed_out);
  EXPECT_THAT(ran.lines, ElementsAre(root_, "read-all", "closed"));
}

TEST_F(WorkloadProcessTest, SignalsStartAtTheirDefaults) {
  // Servers ignore SIGPIPE; a workload must not inherit that (nor a
  // blocked signal of the calling thread).
  struct sigaction ignore = {}, previous = {};
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(sigaction(SIGPIPE, &ignore, &previous), 0);
  sigset_t usr1, old_mask;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  ASSERT_EQ(pthread_sigmask(SIG_BLOCK, &usr1, &old_mask), 0);

  Ran ran =
      Run(Shell("grep -E '^Sig(Blk|Ign)' /proc/self/status; yes | head -n 1"));

  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  sigaction(SIGPIPE, &previous, nullptr);
  ASSERT_TRUE(ran.exit.ok()) << ran.exit.status();
  EXPECT_THAT(ran.lines, ElementsAre("SigBlk:\t0000000000000000",
                                     "SigIgn:\t0000000000000000", "y"));
  EXPECT_THAT(ran.exit->tail, Not(HasSubstr("Broken pipe")));
}

TEST_F(WorkloadProcessTest, AWorkloadKilledByASignalOfItsOwn) {
  Ran ran = Run(Shell("kill -USR1 $$"));
  ASSERT_TRUE(ran.exit.ok()) << ran.exit.status();
  EXPECT_EQ(ran.exit->signal, SIGUSR1);
  EXPECT_EQ(ran.exit->exit_code, -1);
  EXPECT_FALSE(ran.exit->timed_out);
}

TEST_F(WorkloadProcessTest, ALongStdoutLineIsCut) {
  Ran ran =
      Run(Shell("head -c 200000 /dev/zero | tr '\\000' x; echo; echo end"));
  ASSERT_TRUE(ran.exit.ok()) << ran.exit.status();
  ASSERT_EQ(ran.lines.size(), 2u);
  EXPECT_EQ(ran.lines[0], std::string(kMaxStdoutLine, 'x'));
  EXPECT_EQ(ran.lines[1], "end");
  EXPECT_EQ(ran.exit->output_bytes, 200000 + 1 + 4);
}

TEST_F(WorkloadProcessTest, CpuOfWaitedForDescendantsAndPeakRssOfTheTree) {
  // Two processes hold 64 MiB each at the same time: the tree's peak is
  // their sum, more than either alone (what wait4 alone would say).
  const std::string hold =
      Quoted("import time; b = b\"x\" * (64 << 20); time.sleep(1.5)");
  const std::string spin = Quoted(
      "import time\nt = time.process_time()\nwhile time.process_time() - t < "
      "0.3: pass");
  Ran ran = Run(Shell(absl::StrCat("python3 -c ", hold, " & python3 -c ", hold,
                                   "; wait; python3 -c ", spin)));
  ASSERT_TRUE(ran.exit.ok()) << ran.exit.status();
  EXPECT_EQ(ran.exit->exit_code, 0) << ran.exit->tail;
  EXPECT_GE(ran.exit->peak_rss_bytes, int64_t{128} << 20);
  EXPECT_GE(ran.exit->cpu_seconds, 0.3);
  std::cout << "peak rss " << (ran.exit->peak_rss_bytes >> 20) << " MiB, cpu "
            << ran.exit->cpu_seconds << " s\n";
}

TEST_F(WorkloadProcessTest, CallsOnSeveralThreadsAreIndependent) {
  constexpr int kEchoes = 4;
  std::vector<Ran> results(kEchoes + 1);
  std::vector<std::thread> threads;
  for (int i = 0; i < kEchoes; ++i) {
    threads.emplace_back([&, i] {
      results[i] =
          Run(Shell(absl::StrCat("for n in 1 2 3; do echo ", i, "-$n; done")));
    });
  }
  threads.emplace_back([&] {
    WorkloadCommand command =
        Shell(TreeScript("", absl::StrCat(Quoted(sleeper_), " 600")));
    command.timeout = absl::Milliseconds(500);
    results[kEchoes] = Run(command);
  });
  for (std::thread& t : threads) t.join();
  for (int i = 0; i < kEchoes; ++i) {
    ASSERT_TRUE(results[i].exit.ok()) << results[i].exit.status();
    EXPECT_EQ(results[i].exit->exit_code, 0);
    EXPECT_THAT(results[i].lines,
                ElementsAre(absl::StrCat(i, "-1"), absl::StrCat(i, "-2"),
                            absl::StrCat(i, "-3")));
  }
  ASSERT_TRUE(results[kEchoes].exit.ok()) << results[kEchoes].exit.status();
  EXPECT_TRUE(results[kEchoes].exit->timed_out);
  EXPECT_EQ(CountProcessesWith(marker_), 0);
}

}  // namespace
}  // namespace fleetbench::agent
