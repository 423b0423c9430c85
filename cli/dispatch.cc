#include "cli/dispatch.h"

#include <limits.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "common/reason.h"

namespace fleetbench::cli {
namespace {

int PrintUsage(const char* program, std::span<const Command> commands, std::ostream& out) {
  out << "usage: " << program << " COMMAND [flags]\n\ncommands:\n";
  for (const Command& c : commands) {
    const size_t width = std::strlen(c.name);
    out << "  " << c.name << std::string(width < 12 ? 12 - width : 1, ' ') << c.help << "\n";
  }
  out << "\n`" << program << " COMMAND --help` lists a command's flags.\n";
  return kExitUsage;
}

// The folder of the running binary, links resolved: fleetbenchd sits beside
// the file, not beside a symlink to it in PATH.
std::string OwnFolder() {
  char path[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (n <= 0) return ".";
  std::string self(path, static_cast<size_t>(n));
  const size_t slash = self.rfind('/');
  return slash == std::string::npos ? "." : self.substr(0, slash);
}

}  // namespace

void PrepareSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

int Dispatch(const char* program, std::span<const Command> commands, int argc, char** argv) {
  if (argc < 2) return PrintUsage(program, commands, std::cerr);
  const std::string name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    PrintUsage(program, commands, std::cout);
    return kExitOk;
  }
  const Argv args(argv + 2, argv + argc);
  for (const Command& c : commands) {
    if (name != c.name) continue;
    for (const std::string& a : args) {
      if (a == "--help" || a == "-h") {
        // Every command answers --help with its flags on stdout and exit
        // 0; a daemon command whose fleetbenchd is missing cannot answer,
        // and its exit code says so.
        return c.run({"--help"});
      }
    }
    return c.run(args);
  }
  std::cerr << program << ": unknown command '" << ClipInput(name) << "'; see `" << program
            << " --help`\n";
  return kExitUsage;
}

int ExecFleetbenchd(const char* command, const Argv& args) {
  const std::string daemon = OwnFolder() + "/fleetbenchd";
  std::vector<char*> argv;
  argv.reserve(args.size() + 3);
  argv.push_back(const_cast<char*>(daemon.c_str()));
  argv.push_back(const_cast<char*>(command));
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  execv(daemon.c_str(), argv.data());
  const int error = errno;  // execv returns only on failure
  std::cerr << "fleetbench: `" << command << "` runs in fleetbenchd, which must be installed beside "
            << "this binary: " << daemon << ": " << std::strerror(error) << "\n";
  return kExitNoDaemon;
}

}  // namespace fleetbench::cli
