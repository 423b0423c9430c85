#include "agent/runtime/preemption_watch.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <fstream>
#include <iterator>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "httplib.h"

extern char** environ;

namespace fleetbench::agent {
namespace {

constexpr size_t kMaxNoticeBytes = 4096;
constexpr char kFlag[] = "--preemption-notice";

absl::Status Bad(absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(kFlag, ": ", why));
}

std::string ReadFileHead(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string out(kMaxNoticeBytes, '\0');
  in.read(out.data(), static_cast<std::streamsize>(out.size()));
  out.resize(static_cast<size_t>(in.gcount()));
  return out;
}

// Runs argv without a shell, with default signal handling and no signal
// blocked (the agent blocks SIGINT/SIGTERM for its signal thread and
// ignores SIGPIPE; a child must not inherit that); the head of its stdout
// when it exits 0 within `deadline_after`, nullopt otherwise. One that
// takes longer, or a grandchild holding its stdout open, is not waited
// for: the program is killed and reaped, so a stuck check never stops the
// agent from stopping.
std::optional<std::string> RunNoticeCommand(const std::vector<std::string>& argv,
                                            absl::Duration deadline_after) {
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) return std::nullopt;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  sigset_t defaults;
  sigemptyset(&defaults);
  for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGHUP}) sigaddset(&defaults, sig);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, args[0], &actions, &attr, args.data(), environ);
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  if (spawned != 0) {
    close(out[0]);
    return std::nullopt;
  }
  std::string text;
  bool in_time = true;
  const absl::Time deadline = absl::Now() + deadline_after;
  while (true) {
    const int64_t left_ms = absl::ToInt64Milliseconds(deadline - absl::Now());
    if (left_ms <= 0) {
      in_time = false;
      break;
    }
    pollfd p{out[0], POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(left_ms));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;  // the deadline is checked above
    char buf[512];
    const ssize_t n = read(out[0], buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // the end of its output
    // Read to the end (a full pipe would block it), keep the head.
    if (text.size() < kMaxNoticeBytes) text.append(buf, static_cast<size_t>(n));
  }
  close(out[0]);
  if (!in_time) kill(pid, SIGKILL);
  int status = 0;
  pid_t reaped = 0;
  do {
    reaped = waitpid(pid, &status, 0);
  } while (reaped < 0 && errno == EINTR);
  if (!in_time || reaped != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return std::nullopt;
  }
  return text.substr(0, kMaxNoticeBytes);
}

}  // namespace

absl::StatusOr<std::unique_ptr<PreemptionWatch>> PreemptionWatch::Parse(
    const std::string& source, absl::Duration command_deadline) {
  std::unique_ptr<PreemptionWatch> watch;
  if (absl::StartsWith(source, "file:")) {
    watch.reset(new PreemptionWatch(Kind::kFile, source));
    watch->path_ = source.substr(5);
    if (!absl::StartsWith(watch->path_, "/")) return Bad("file: wants an absolute path");
  } else if (absl::StartsWith(source, "url:")) {
    watch.reset(new PreemptionWatch(Kind::kUrl, source));
    absl::string_view url = absl::string_view(source).substr(4);
    if (!absl::ConsumePrefix(&url, "http://")) return Bad("url: wants http://HOST[:PORT]/PATH");
    const size_t slash = url.find('/');
    absl::string_view host_port = url.substr(0, slash);
    watch->path_ = slash == absl::string_view::npos ? "/" : std::string(url.substr(slash));
    const size_t colon = host_port.rfind(':');
    watch->host_ = std::string(host_port.substr(0, colon));
    if (colon != absl::string_view::npos &&
        (!absl::SimpleAtoi(host_port.substr(colon + 1), &watch->port_) || watch->port_ < 1 ||
         watch->port_ > 65535)) {
      return Bad("url: the port must be 1..65535");
    }
    if (watch->host_.empty()) return Bad("url: wants a host");
  } else if (absl::StartsWith(source, "cmd:")) {
    watch.reset(new PreemptionWatch(Kind::kCommand, source));
    watch->command_deadline_ = command_deadline;
    watch->argv_ = absl::StrSplit(source.substr(4), ' ', absl::SkipEmpty());
    if (watch->argv_.empty() || !absl::StartsWith(watch->argv_[0], "/")) {
      return Bad("cmd: wants an absolute program path, then its arguments");
    }
  } else {
    return Bad("give file:PATH, url:http://HOST/PATH or cmd:PROGRAM [ARGS]");
  }
  return watch;
}

std::optional<PreemptionNotice> PreemptionWatch::Check() const {
  std::string text;
  switch (kind_) {
    case Kind::kFile: {
      struct stat st;
      if (stat(path_.c_str(), &st) != 0) return std::nullopt;
      text = ReadFileHead(path_);
      break;
    }
    case Kind::kUrl: {
      httplib::Client client(host_, port_);
      client.set_connection_timeout(2);
      client.set_read_timeout(2);
      httplib::Result result = client.Get(path_);
      if (!result || result->status != 200) return std::nullopt;
      text = result->body.substr(0, kMaxNoticeBytes);
      const std::string said(absl::StripAsciiWhitespace(text));
      if (said.empty() || absl::EqualsIgnoreCase(said, "false")) return std::nullopt;
      break;
    }
    case Kind::kCommand: {
      std::optional<std::string> out = RunNoticeCommand(argv_, command_deadline_);
      if (!out) return std::nullopt;
      text = *std::move(out);
      break;
    }
  }
  return PreemptionNotice{source_, TerminationTimeIn(text)};
}

absl::Time TerminationTimeIn(absl::string_view text) {
  // YYYY-MM-DDTHH:MM:SS, optional fraction, then Z: scanned for rather than
  // parsed as JSON, since every provider wraps it differently.
  constexpr absl::string_view kShape = "dddd-dd-ddTdd:dd:dd";
  for (size_t i = 0; i + kShape.size() <= text.size(); ++i) {
    bool match = true;
    for (size_t j = 0; j < kShape.size() && match; ++j) {
      const char c = text[i + j];
      match = kShape[j] == 'd' ? absl::ascii_isdigit(static_cast<unsigned char>(c)) : c == kShape[j];
    }
    if (!match) continue;
    size_t end = i + kShape.size();
    if (end < text.size() && text[end] == '.') {
      ++end;
      while (end < text.size() && absl::ascii_isdigit(static_cast<unsigned char>(text[end]))) ++end;
    }
    if (end >= text.size() || text[end] != 'Z') continue;
    absl::Time t;
    std::string err;
    if (absl::ParseTime(absl::RFC3339_full, std::string(text.substr(i, end + 1 - i)), &t, &err)) {
      return t;
    }
  }
  return absl::InfinitePast();
}

}  // namespace fleetbench::agent
