// agent/benchmarks/workload_process/process_group.h — what /proc says
// about the live processes of one process group: how many there are and
// how much memory they hold.
//
// A process counts while it is in the group and has not exited: a zombie
// (state Z or X) no longer runs, holds no memory and cannot be signalled
// away, so a group of zombies is a dead group. Every call scans all of
// /proc/<pid>/stat (a few milliseconds on a node with a thousand
// processes), so callers sample, they do not spin.
//
// Pure but for reading /proc; thread-safe.
#ifndef FLEETBENCH_AGENT_BENCHMARKS_WORKLOAD_PROCESS_PROCESS_GROUP_H_
#define FLEETBENCH_AGENT_BENCHMARKS_WORKLOAD_PROCESS_PROCESS_GROUP_H_

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string_view>

namespace fleetbench::agent {

// The fields of one /proc/<pid>/stat line that a group sample needs.
struct ProcStat {
  char state = '?';
  pid_t pgrp = 0;
  int64_t rss_pages = 0;
};

// nullopt when `line` is not a stat line. The command name, in
// parentheses, may hold spaces and parentheses itself: fields are counted
// from the last ')'.
std::optional<ProcStat> ParseProcStat(std::string_view line);

struct GroupSample {
  int live_processes = 0;
  int64_t rss_bytes = 0;  // summed over live_processes
};

// Scans /proc now; nullopt when /proc cannot be read (not mounted), so
// the caller knows it cannot tell. A process that exits during the scan
// may or may not be counted.
std::optional<GroupSample> SampleProcessGroup(pid_t pgid);

}  // namespace fleetbench::agent

#endif  // FLEETBENCH_AGENT_BENCHMARKS_WORKLOAD_PROCESS_PROCESS_GROUP_H_
