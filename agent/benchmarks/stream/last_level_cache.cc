#include "agent/benchmarks/stream/last_level_cache.h"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <system_error>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/strip.h"
#include "agent/benchmarks/stream/stream_math.h"

namespace fleetbench::agent {
namespace {

std::string ReadSmallFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return std::string(absl::StripAsciiWhitespace(text.str()));
}

}  // namespace

LastLevelCache ReadLastLevelCache(const std::string& cpu_root) {
  namespace fs = std::filesystem;
  // level -> shared_cpu_list -> bytes
  std::map<int, std::map<std::string, int64_t>> caches;
  std::error_code ec;
  for (const fs::directory_entry& cpu : fs::directory_iterator(cpu_root, ec)) {
    const std::string name = cpu.path().filename().string();
    int index = 0;
    if (!absl::StartsWith(name, "cpu") ||
        !absl::SimpleAtoi(name.substr(3), &index)) {
      continue;
    }
    std::error_code inner;
    for (const fs::directory_entry& cache :
         fs::directory_iterator(cpu.path() / "cache", inner)) {
      if (!absl::StartsWith(cache.path().filename().string(), "index")) {
        continue;
      }
      if (ReadSmallFile(cache.path() / "type") == "Instruction") continue;
      int level = 0;
      if (!absl::SimpleAtoi(ReadSmallFile(cache.path() / "level"), &level)) {
        continue;
      }
      const std::optional<int64_t> bytes =
          ParseCacheSize(ReadSmallFile(cache.path() / "size"));
      if (!bytes.has_value() || *bytes <= 0) continue;
      std::string shared = ReadSmallFile(cache.path() / "shared_cpu_list");
      if (shared.empty()) shared = name;
      caches[level][shared] = *bytes;
    }
  }
  LastLevelCache llc;
  if (caches.empty()) return llc;
  const auto& [level, instances] = *caches.rbegin();
  llc.level = level;
  llc.instances = static_cast<int>(instances.size());
  for (const auto& [shared, bytes] : instances) {
    llc.instance_bytes = std::max(llc.instance_bytes, bytes);
    llc.total_bytes += bytes;
  }
  return llc;
}

}  // namespace fleetbench::agent
