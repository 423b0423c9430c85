// bench/gloo_bench.cc — one rank of the gloo engine (agent/benchmarks/
// collective/gloo_engine.h) as a process, for bench/gloo_vs_torch.sh: N of
// them on loopback meet through a folder of files (a bench-only
// Rendezvous) and run the same all-reduce sweep the "allreduce" plugin
// runs. Rank 0 prints one line per size: bytes, time_us (slowest rank),
// algbw_GBps, busbw_GBps. Not a product path: the product meets through the
// controller's relay.
//
// Usage: fleetbench_gloo_bench RANK SIZE DIR MIN_BYTES MAX_BYTES ITERS WARMUP
//                              [ADDRESS [DEADLINE_S]]
// ADDRESS: what this rank listens on (its namespace's IP; default
// 127.0.0.1); DEADLINE_S: the group's deadline from now (default 600).
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/time/clock.h"
#include "agent/benchmarks/collective/gloo_engine.h"
#include "agent/benchmarks/collective_sweep.h"
#include "common/bus_bandwidth.h"
#include "common/units.h"

namespace {

// Keys are files in `dir` (written whole, then renamed into place); Get
// polls, as gloo's own FileStore does.
class FileRendezvous final : public fleetbench::agent::Rendezvous {
 public:
  explicit FileRendezvous(std::string dir) : dir_(std::move(dir)) {}
  absl::Status Set(const std::string& key, const std::string& value) override {
    const std::string path = Path(key);
    const std::string tmp = path + ".tmp" + std::to_string(getpid());
    {
      std::ofstream out(tmp, std::ios::binary);
      out << value;
      if (!out) return absl::InternalError("cannot write " + tmp);
    }
    std::filesystem::rename(tmp, path);
    return absl::OkStatus();
  }
  absl::StatusOr<std::string> Get(const std::string& key,
                                  absl::Duration timeout) override {
    const absl::Time until = absl::Now() + timeout;
    while (true) {
      std::ifstream in(Path(key), std::ios::binary);
      if (in) {
        std::stringstream all;
        all << in.rdbuf();
        return all.str();
      }
      if (absl::Now() >= until) return absl::DeadlineExceededError(key);
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }

 private:
  std::string Path(const std::string& key) const {
    std::string name = key;
    for (char& c : name) {
      if (c == '/') c = '_';
    }
    return dir_ + "/" + name;
  }
  std::string dir_;
};

}  // namespace

int main(int argc, char** argv) {
  // A peer killed mid-collective must end this rank with gloo's error (exit
  // 1, naming the operation), not kill it with SIGPIPE on the next write;
  // the agent ignores SIGPIPE too (cli/fleetbench_main.cc).
  std::signal(SIGPIPE, SIG_IGN);
  if (argc < 8 || argc > 10) {
    std::fprintf(stderr,
                 "usage: %s RANK SIZE DIR MIN_BYTES MAX_BYTES ITERS WARMUP "
                 "[ADDRESS [DEADLINE_S]]\n",
                 argv[0]);
    return 2;
  }
  int rank = 0, size = 0, iters = 0, warmup = 0;
  uint64_t min_bytes = 0, max_bytes = 0;
  if (!absl::SimpleAtoi(argv[1], &rank) || !absl::SimpleAtoi(argv[2], &size) ||
      !absl::SimpleAtoi(argv[4], &min_bytes) ||
      !absl::SimpleAtoi(argv[5], &max_bytes) ||
      !absl::SimpleAtoi(argv[6], &iters) ||
      !absl::SimpleAtoi(argv[7], &warmup)) {
    std::fprintf(stderr, "gloo_bench: bad number in arguments\n");
    return 2;
  }
  int deadline_s = 600;
  if (argc > 9 && !absl::SimpleAtoi(argv[9], &deadline_s)) {
    std::fprintf(stderr, "gloo_bench: bad DEADLINE_S\n");
    return 2;
  }
  FileRendezvous rendezvous(argv[3]);
  fleetbench::collective::GlooMember member;
  member.rank = rank;
  member.size = size;
  member.address = argc > 8 ? argv[8] : "127.0.0.1";
  member.rendezvous = &rendezvous;
  member.deadline = absl::Now() + absl::Seconds(deadline_s);
  auto engine = fleetbench::collective::GlooEngine::Connect(member);
  if (!engine.ok()) {
    std::fprintf(stderr, "%s\n",
                 std::string(engine.status().message()).c_str());
    return 1;
  }
  // For tests that stop a rank mid-collective: the group has met.
  std::printf("# connected rank %d\n", rank);
  std::fflush(stdout);
  auto points = (*engine)->Sweep(
      "allreduce", fleetbench::agent::DoublingSweep(min_bytes, max_bytes),
      warmup, iters);
  if (!points.ok()) {
    std::fprintf(stderr, "%s\n",
                 std::string(points.status().message()).c_str());
    return 1;
  }
  if (rank != 0) return 0;
  for (const auto& p : *points) {
    if (p.mismatches > 0) {
      std::fprintf(stderr, "wrong data at %llu B\n",
                   static_cast<unsigned long long>(p.bytes));
      return 1;
    }
    const double algbw = fleetbench::GigabytesPerSecond(
        static_cast<double>(p.bytes), p.group_seconds);
    std::printf("%llu %.3f %.4f %.4f\n",
                static_cast<unsigned long long>(p.bytes), p.group_seconds * 1e6,
                algbw,
                fleetbench::BusBandwidth(fleetbench::Collective::kAllReduce,
                                         size, algbw));
  }
  return 0;
}
