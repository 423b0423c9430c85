// agent/benchmarks/workload/disk_activity.h — what the block devices under a
// workload's data did while it ran: bytes read and the share of the time
// the device was busy, from the kernel's own counters
// (/sys/dev/block/MAJ:MIN/stat, Documentation/block/stat.rst), read before
// and after the command.
//
// Why counters and not a sampler: two reads bracket the whole run at no
// cost to it, and the kernel's io_ticks already integrate "busy" over the
// run (a device with at least one request in flight). They count the whole
// device, not the workload's own requests: a neighbour's I/O shows too,
// which is what a user wants to know when the data loader starves.
//
// Devices: those holding the given folders (the command's cwd, the agent's
// dataset roots), each once. A folder on a file system without a block
// device (tmpfs, overlay's upper folder on one, NFS) has none and is
// skipped; so is a device whose stat file cannot be read.
//
// Thread-compatible; reads sysfs only.
#ifndef FLEETBENCH_AGENT_BENCHMARKS_WORKLOAD_DISK_ACTIVITY_H_
#define FLEETBENCH_AGENT_BENCHMARKS_WORKLOAD_DISK_ACTIVITY_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace fleetbench::agent {

// The counters of one block device that a run's activity is read from.
struct BlockCounters {
  uint64_t read_sectors = 0;  // 512-byte units, whatever the device's sector
  uint64_t io_ticks_ms = 0;   // time with I/O in flight
};

// The fields of a /sys/block/.../stat line; nullopt when it has fewer than
// the 10 the kernel has always written, or a field is not a number.
std::optional<BlockCounters> ParseBlockStat(absl::string_view line);

// One device's activity over a run.
struct DiskActivity {
  std::string device;  // its sysfs name: vda, nvme0n1p1, dm-0
  uint64_t read_bytes = 0;
  double read_MBps = 0;
  double busy_pct = 0;  // io_ticks over the wall time, at most 100
};

// The devices under some folders, their counters read at Start and again
// at Finish.
class DiskActivityMeter {
 public:
  // Finds the devices of `folders` (deduplicated) and reads their counters.
  explicit DiskActivityMeter(const std::vector<std::string>& folders);
  // Each device's activity since construction, over the time between the
  // two reads; a device whose counters cannot be read again is left out.
  std::vector<DiskActivity> Finish() const;

 private:
  struct Device {
    std::string name;
    std::string stat_path;
    BlockCounters start;
  };
  std::vector<Device> devices_;
  absl::Time start_;
};

}  // namespace fleetbench::agent

#endif  // FLEETBENCH_AGENT_BENCHMARKS_WORKLOAD_DISK_ACTIVITY_H_
