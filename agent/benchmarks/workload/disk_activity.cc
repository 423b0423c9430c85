// DiskActivityMeter: block device counters before and after a workload.
#include "agent/benchmarks/workload/disk_activity.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"

namespace fleetbench::agent {
namespace {

std::optional<BlockCounters> ReadCounters(const std::string& stat_path) {
  std::ifstream in(stat_path);
  std::string line;
  if (!std::getline(in, line)) return std::nullopt;
  return ParseBlockStat(line);
}

}  // namespace

std::optional<BlockCounters> ParseBlockStat(absl::string_view line) {
  const std::vector<absl::string_view> fields =
      absl::StrSplit(line, ' ', absl::SkipWhitespace());
  // read I/Os, read merges, read sectors, read ticks, write I/Os, write
  // merges, write sectors, write ticks, in flight, io_ticks, ...
  if (fields.size() < 10) return std::nullopt;
  BlockCounters c;
  if (!absl::SimpleAtoi(fields[2], &c.read_sectors) ||
      !absl::SimpleAtoi(fields[9], &c.io_ticks_ms)) {
    return std::nullopt;
  }
  return c;
}

DiskActivityMeter::DiskActivityMeter(const std::vector<std::string>& folders)
    : start_(absl::Now()) {
  std::set<dev_t> seen;
  for (const std::string& folder : folders) {
    struct stat st {};
    if (folder.empty() || stat(folder.c_str(), &st) != 0) continue;
    if (major(st.st_dev) == 0 || !seen.insert(st.st_dev).second) continue;  // no block device
    const std::string link = absl::StrCat("/sys/dev/block/", major(st.st_dev), ":",
                                          minor(st.st_dev));
    std::error_code ec;
    const std::filesystem::path target = std::filesystem::read_symlink(link, ec);
    if (ec) continue;
    Device d;
    d.name = target.filename().string();
    d.stat_path = link + "/stat";
    std::optional<BlockCounters> start = ReadCounters(d.stat_path);
    if (!start) continue;
    d.start = *start;
    devices_.push_back(std::move(d));
  }
}

std::vector<DiskActivity> DiskActivityMeter::Finish() const {
  std::vector<DiskActivity> out;
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start_);
  if (!(seconds > 0)) return out;
  for (const Device& d : devices_) {
    std::optional<BlockCounters> end = ReadCounters(d.stat_path);
    // A counter that went back (a device replaced under the same number)
    // says nothing about this run.
    if (!end || end->read_sectors < d.start.read_sectors ||
        end->io_ticks_ms < d.start.io_ticks_ms) {
      continue;
    }
    DiskActivity a;
    a.device = d.name;
    a.read_bytes = (end->read_sectors - d.start.read_sectors) * 512;
    a.read_MBps = static_cast<double>(a.read_bytes) / 1e6 / seconds;
    a.busy_pct = std::min(
        100.0, static_cast<double>(end->io_ticks_ms - d.start.io_ticks_ms) / 1e3 / seconds * 100);
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace fleetbench::agent
