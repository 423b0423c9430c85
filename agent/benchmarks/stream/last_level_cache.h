// agent/benchmarks/stream/last_level_cache.h — the size of the last-level
// cache, which sizes the STREAM arrays of "mem" and "mem_numa" (both size
// them with DefaultStreamArrayBytes, stream_math.h). Moved out of
// mem/mem_stream.h unchanged so that mem_numa needs no other plugin.
#ifndef FLEETBENCH_AGENT_BENCHMARKS_STREAM_LAST_LEVEL_CACHE_H_
#define FLEETBENCH_AGENT_BENCHMARKS_STREAM_LAST_LEVEL_CACHE_H_

#include <cstdint>
#include <string>

namespace fleetbench::agent {

// The last-level cache as sysfs describes it below `cpu_root` (normally
// /sys/devices/system/cpu). Instances are told apart by shared_cpu_list.
struct LastLevelCache {
  int level = 0;
  int64_t instance_bytes = 0;
  int instances = 0;
  int64_t total_bytes = 0;
};
// Zeros when nothing readable is found (the 64 MiB floor then applies).
LastLevelCache ReadLastLevelCache(const std::string& cpu_root);

}  // namespace fleetbench::agent

#endif  // FLEETBENCH_AGENT_BENCHMARKS_STREAM_LAST_LEVEL_CACHE_H_
