#include "agent/benchmarks/workload_process/output_capture.h"

namespace fleetbench::agent {

void OutputTail::Append(std::string_view bytes) {
  total_bytes_ += static_cast<int64_t>(bytes.size());
  if (capacity_ == 0) return;
  const size_t keep = capacity_ + 1;
  if (bytes.size() >= keep) {
    kept_.assign(bytes.substr(bytes.size() - keep));
    return;
  }
  kept_.append(bytes);
  if (kept_.size() > 2 * keep) kept_.erase(0, kept_.size() - keep);
}

std::string OutputTail::Text() const {
  std::string_view kept = kept_;
  if (kept.size() <= capacity_) return std::string(kept);  // nothing dropped
  const char before = kept[kept.size() - capacity_ - 1];
  kept.remove_prefix(kept.size() - capacity_);
  if (before == '\n') return std::string(kept);
  const size_t newline = kept.find('\n');
  if (newline != std::string_view::npos && newline + 1 < kept.size()) {
    kept.remove_prefix(newline + 1);
  }
  return std::string(kept);
}

void LineSplitter::Keep(std::string_view bytes) {
  in_line_ = true;
  if (partial_.size() < max_line_) {
    partial_.append(bytes.substr(0, max_line_ - partial_.size()));
  }
}

void LineSplitter::Append(std::string_view bytes) {
  while (!bytes.empty()) {
    const size_t newline = bytes.find('\n');
    if (newline == std::string_view::npos) {
      Keep(bytes);
      return;
    }
    const std::string_view line = bytes.substr(0, newline);
    bytes.remove_prefix(newline + 1);
    if (!in_line_) {
      // The whole line is in this chunk: no copy.
      if (on_line_) on_line_(line.substr(0, max_line_));
      continue;
    }
    Keep(line);
    if (on_line_) on_line_(partial_);
    partial_.clear();
    in_line_ = false;
  }
}

void LineSplitter::Finish() {
  if (!in_line_) return;
  if (on_line_) on_line_(partial_);
  partial_.clear();
  in_line_ = false;
}

}  // namespace fleetbench::agent
