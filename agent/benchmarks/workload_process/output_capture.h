// agent/benchmarks/workload_process/output_capture.h — what a workload's
// output becomes in bounded memory: the last bytes of it (OutputTail) and
// its stdout cut into lines for a callback (LineSplitter).
//
// Both take the stream in arbitrary chunks, as pipe reads deliver it, and
// hold at most a fixed number of bytes whatever the workload prints:
// OutputTail about twice its capacity, LineSplitter one line's limit.
//
// Thread-compatible: one stream per object.
#ifndef FLEETBENCH_AGENT_BENCHMARKS_WORKLOAD_PROCESS_OUTPUT_CAPTURE_H_
#define FLEETBENCH_AGENT_BENCHMARKS_WORKLOAD_PROCESS_OUTPUT_CAPTURE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>

namespace fleetbench::agent {

// The last `capacity` bytes of a stream.
class OutputTail {
 public:
  explicit OutputTail(size_t capacity) : capacity_(capacity) {}

  void Append(std::string_view bytes);
  // At most `capacity` bytes: all of the stream when it fits; else its
  // last bytes, from just after the first '\n' among them so the text
  // starts at a line start, unless they already do or the only '\n' is
  // the last byte (then the bytes as they are: better a cut line than
  // nothing).
  std::string Text() const;
  int64_t total_bytes() const { return total_bytes_; }

 private:
  size_t capacity_;
  // The stream's last bytes: at least capacity_ + 1 once that many came
  // (the extra byte says whether the kept text starts a line), trimmed
  // back when past twice that, so appends stay amortised O(n).
  std::string kept_;
  int64_t total_bytes_ = 0;
};

// Cuts a stream into lines and hands each to `on_line` without its '\n'.
// A line longer than `max_line` bytes reaches on_line cut to its first
// max_line bytes; the rest of it is dropped. Finish() hands over a last
// line that had no '\n'.
class LineSplitter {
 public:
  LineSplitter(size_t max_line, std::function<void(std::string_view)> on_line)
      : max_line_(max_line), on_line_(std::move(on_line)) {}

  void Append(std::string_view bytes);
  void Finish();

 private:
  // Adds bytes of the current line, up to max_line_.
  void Keep(std::string_view bytes);

  size_t max_line_;
  std::function<void(std::string_view)> on_line_;
  std::string partial_;   // the current line so far, at most max_line_
  bool in_line_ = false;  // bytes of the current line have come
};

}  // namespace fleetbench::agent

#endif  // FLEETBENCH_AGENT_BENCHMARKS_WORKLOAD_PROCESS_OUTPUT_CAPTURE_H_
