#include "agent/benchmarks/workload_process/process_group.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace fleetbench::agent {
namespace {

// Reads all of a small /proc file; "" when it is gone.
std::string ReadSmallFile(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  std::string text;
  char buffer[1024];
  for (;;) {
    const ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buffer, static_cast<size_t>(n));
  }
  close(fd);
  return text;
}

bool AllDigits(const char* name) {
  if (*name == '\0') return false;
  for (; *name != '\0'; ++name) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(*name))) return false;
  }
  return true;
}

template <typename Int>
bool ParseInt(std::string_view text, Int* value) {
  const auto [end, error] =
      std::from_chars(text.data(), text.data() + text.size(), *value);
  return error == std::errc() && end == text.data() + text.size();
}

}  // namespace

std::optional<ProcStat> ParseProcStat(std::string_view line) {
  const size_t close_paren = line.rfind(')');
  if (close_paren == std::string_view::npos) return std::nullopt;
  // After "pid (comm) ": field 3 (state) onwards; rss is field 24.
  std::vector<std::string_view> fields;
  std::string_view rest = line.substr(close_paren + 1);
  while (!rest.empty()) {
    const size_t start = rest.find_first_not_of(" \n");
    if (start == std::string_view::npos) break;
    rest.remove_prefix(start);
    const size_t end = std::min(rest.find_first_of(" \n"), rest.size());
    fields.push_back(rest.substr(0, end));
    rest.remove_prefix(end);
  }
  constexpr size_t kState = 0, kPgrp = 2, kRss = 21;
  if (fields.size() <= kRss || fields[kState].size() != 1) return std::nullopt;
  ProcStat stat;
  stat.state = fields[kState][0];
  if (!ParseInt(fields[kPgrp], &stat.pgrp) ||
      !ParseInt(fields[kRss], &stat.rss_pages)) {
    return std::nullopt;
  }
  return stat;
}

std::optional<GroupSample> SampleProcessGroup(pid_t pgid) {
  static const int64_t page_bytes = sysconf(_SC_PAGESIZE);
  GroupSample sample;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return std::nullopt;
  while (const dirent* entry = readdir(proc)) {
    if (!AllDigits(entry->d_name)) continue;
    const std::optional<ProcStat> stat = ParseProcStat(
        ReadSmallFile(absl::StrCat("/proc/", entry->d_name, "/stat")));
    if (!stat || stat->pgrp != pgid || stat->state == 'Z' ||
        stat->state == 'X') {
      continue;
    }
    ++sample.live_processes;
    sample.rss_bytes += stat->rss_pages * page_bytes;
  }
  closedir(proc);
  return sample;
}

}  // namespace fleetbench::agent
