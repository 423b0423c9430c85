#include "agent/benchmarks/disk/disk_settle.h"

#include <unistd.h>

#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"

namespace fleetbench::agent::disk {

std::optional<int64_t> ParseInflight(absl::string_view text) {
  std::vector<absl::string_view> fields =
      absl::StrSplit(text, absl::ByAnyChar(" \t\n"), absl::SkipEmpty());
  if (fields.size() != 2) return std::nullopt;
  int64_t reads = 0;
  int64_t writes = 0;
  if (!absl::SimpleAtoi(fields[0], &reads) || !absl::SimpleAtoi(fields[1], &writes) ||
      reads < 0 || writes < 0) {
    return std::nullopt;
  }
  return reads + writes;
}

namespace {

std::optional<int64_t> ReadInflight(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  return ParseInflight(text.str());
}

}  // namespace

SettleResult SettleDevice(int fd, const std::string& sysfs_block_dir,
                          const SettleOptions& options,
                          const std::function<bool()>& cancelled) {
  const absl::Time start = absl::Now();
  SettleResult result;
  // A failed syncfs (EIO) is the timed phase's to find; the wait goes on.
  if (syncfs(fd) != 0) result.note = absl::StrCat("syncfs failed (errno ", errno, ")");
  if (sysfs_block_dir.empty()) {
    result.waited = absl::Now() - start;
    if (result.note.empty()) result.note = "device unknown: flushed, not waited";
    return result;
  }
  const std::string path = sysfs_block_dir + "/inflight";
  // The bound is on the wait, not on the flush before it (a syncfs on a
  // busy filesystem can take longer than the whole wait).
  const absl::Time wait_start = absl::Now();
  int quiet = 0;
  while (true) {
    if (cancelled && cancelled()) {
      result.note = "cancelled";
      break;
    }
    std::optional<int64_t> inflight = ReadInflight(path);
    if (!inflight.has_value()) {
      result.note = absl::StrCat("cannot read ", path);
      break;
    }
    quiet = *inflight == 0 ? quiet + 1 : 0;
    if (quiet >= options.quiet_readings) {
      result.settled = result.note.empty();
      break;
    }
    if (absl::Now() - wait_start >= options.max_wait) {
      result.note = absl::StrCat(*inflight, " I/Os still in flight after ",
                                 absl::FormatDuration(options.max_wait));
      break;
    }
    // Sampling a device counter the kernel updates: a poll, not a handshake.
    std::this_thread::sleep_for(absl::ToChronoMilliseconds(options.poll_interval));
  }
  result.waited = absl::Now() - start;
  return result;
}

}  // namespace fleetbench::agent::disk
