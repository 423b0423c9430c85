// agent/benchmarks/disk/disk_settle.h — lets the disk under the test file
// go quiet before a timed workload.
//
// Why: a timed phase that starts while the device still writes back what
// came before (this run's fill, another process's files, on a shared
// virtual disk a neighbour's) measures that writeback too, and its tail
// latencies most of all. Before each timed workload the plugin flushes the
// test file's filesystem (syncfs) and then waits, up to a bound, until the
// block device reports no I/O in flight over a few consecutive readings
// (/sys/block/DEV/inflight). What it waited goes into every sample's params
// (settle_ms, settled) so a number measured on a device that never went
// quiet says so.
#ifndef FLEETBENCH_AGENT_BENCHMARKS_DISK_DISK_SETTLE_H_
#define FLEETBENCH_AGENT_BENCHMARKS_DISK_DISK_SETTLE_H_

#include <functional>
#include <optional>
#include <string>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace fleetbench::agent::disk {

// The I/Os in flight (reads + writes) from the text of a sysfs `inflight`
// file ("       0        3\n"); nullopt when it is not two counts.
std::optional<int64_t> ParseInflight(absl::string_view text);

struct SettleOptions {
  // Quiet means this many readings in a row with nothing in flight...
  int quiet_readings = 3;
  // ...taken this far apart...
  absl::Duration poll_interval = absl::Milliseconds(20);
  // ...and no longer than this is waited after the flush.
  absl::Duration max_wait = absl::Seconds(5);
};

struct SettleResult {
  absl::Duration waited;  // the flush and the wait
  // False when the device was still busy at max_wait, or could not be read
  // (no sysfs entry: a device name of "" or one that is not under
  // /sys/block); then only the syncfs was done.
  bool settled = false;
  std::string note;  // why not settled, for the params; "" when settled
};

// syncfs(fd), then waits for `sysfs_block_dir` (e.g. "/sys/block/sda";
// empty: skip the wait) to show nothing in flight. `cancelled` is polled
// at each reading; a cancel returns at once.
SettleResult SettleDevice(int fd, const std::string& sysfs_block_dir,
                          const SettleOptions& options,
                          const std::function<bool()>& cancelled);

}  // namespace fleetbench::agent::disk

#endif  // FLEETBENCH_AGENT_BENCHMARKS_DISK_DISK_SETTLE_H_
