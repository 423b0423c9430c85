// common/logging.h — one-line log records on stderr. This Abseil (20220623)
// predates absl/log, so a minimal LOG(INFO|WARNING|ERROR) stands in; the
// record is written in one write() so lines from threads do not interleave.
#ifndef FLEETBENCH_COMMON_LOGGING_H_
#define FLEETBENCH_COMMON_LOGGING_H_

#include <sstream>

namespace fleetbench::logging {

enum class Severity { kInfo, kWarning, kError };

class LogRecord {
 public:
  LogRecord(Severity severity, const char* file, int line);
  ~LogRecord();
  std::ostream& stream() { return stream_; }

 private:
  Severity severity_;
  std::ostringstream stream_;
};

struct Voidify {
  void operator&(std::ostream&) {}
};

// Set once from main(); records below it are dropped.
void SetMinSeverity(Severity severity);
bool Enabled(Severity severity);

}  // namespace fleetbench::logging

#define FLEETBENCH_SEVERITY_INFO ::fleetbench::logging::Severity::kInfo
#define FLEETBENCH_SEVERITY_WARNING ::fleetbench::logging::Severity::kWarning
#define FLEETBENCH_SEVERITY_ERROR ::fleetbench::logging::Severity::kError
// The ternary keeps LOG(...) << x a single expression, safe inside an
// unbraced if/else.
#define LOG(severity)                                                        \
  !::fleetbench::logging::Enabled(FLEETBENCH_SEVERITY_##severity)            \
      ? (void)0                                                              \
      : ::fleetbench::logging::Voidify() &                                   \
            ::fleetbench::logging::LogRecord(FLEETBENCH_SEVERITY_##severity, \
                                             __FILE__, __LINE__)             \
                .stream()

#endif  // FLEETBENCH_COMMON_LOGGING_H_
