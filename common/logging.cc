#include "common/logging.h"

#include <unistd.h>

#include <atomic>
#include <cstring>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace fleetbench::logging {
namespace {

std::atomic<int> min_severity{0};

const char* Letter(Severity s) {
  switch (s) {
    case Severity::kInfo: return "I";
    case Severity::kWarning: return "W";
    case Severity::kError: return "E";
  }
  return "?";
}

}  // namespace

void SetMinSeverity(Severity severity) { min_severity = static_cast<int>(severity); }
bool Enabled(Severity severity) { return static_cast<int>(severity) >= min_severity; }

LogRecord::LogRecord(Severity severity, const char* file, int line) : severity_(severity) {
  const char* base = std::strrchr(file, '/');
  stream_ << Letter(severity) << " "
          << absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::Now(), absl::UTCTimeZone()) << " "
          << (base ? base + 1 : file) << ":" << line << "] ";
}

LogRecord::~LogRecord() {
  stream_ << "\n";
  const std::string text = stream_.str();
  (void)::write(STDERR_FILENO, text.data(), text.size());
}

}  // namespace fleetbench::logging
