#include "controller/core/page_tokens.h"

#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace fleetbench::controller {
namespace {

// Fields are joined with a byte no node name, metric or id contains.
constexpr char kSeparator = '\x1f';

absl::Status NotOurs(absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(
      "page_token is not one this controller gave for ", what,
      "; start again without it"));
}

absl::StatusOr<std::vector<std::string>> Decode(const std::string& token,
                                                absl::string_view tag, size_t fields,
                                                absl::string_view what) {
  std::string text;
  if (!absl::WebSafeBase64Unescape(token, &text)) return NotOurs(what);
  std::vector<std::string> parts = absl::StrSplit(text, kSeparator);
  if (parts.size() != fields + 1 || parts[0] != tag) return NotOurs(what);
  parts.erase(parts.begin());
  return parts;
}

}  // namespace

std::string RunsPageToken(const std::string& last_run_id) {
  return absl::WebSafeBase64Escape(absl::StrCat("runs", std::string(1, kSeparator), last_run_id));
}

absl::StatusOr<std::string> ParseRunsPageToken(const std::string& token) {
  auto parts = Decode(token, "runs", 1, "this list of runs");
  if (!parts.ok()) return parts.status();
  if ((*parts)[0].empty()) return NotOurs("this list of runs");
  return (*parts)[0];
}

std::string HistoryPageToken(const std::string& node, const std::string& metric,
                             const storage::SampleCursor& last) {
  const std::string sep(1, kSeparator);
  return absl::WebSafeBase64Escape(absl::StrCat("history", sep, node, sep, metric, sep,
                                                last.time_ms, sep, last.id));
}

absl::StatusOr<storage::SampleCursor> ParseHistoryPageToken(const std::string& token,
                                                            const std::string& node,
                                                            const std::string& metric) {
  const std::string what = absl::StrCat("the history of ", metric, " on ", node);
  auto parts = Decode(token, "history", 4, what);
  if (!parts.ok()) return parts.status();
  storage::SampleCursor cursor;
  if ((*parts)[0] != node || (*parts)[1] != metric ||
      !absl::SimpleAtoi((*parts)[2], &cursor.time_ms) || (*parts)[3].empty()) {
    return NotOurs(what);
  }
  cursor.id = (*parts)[3];
  return cursor;
}

std::string RunSamplesPageToken(const std::string& run_id, const storage::RunSampleCursor& last) {
  const std::string sep(1, kSeparator);
  return absl::WebSafeBase64Escape(absl::StrCat("samples", sep, run_id, sep, last.node_key, sep,
                                                last.metric_key, sep, last.time_ms, sep,
                                                last.id));
}

absl::StatusOr<storage::RunSampleCursor> ParseRunSamplesPageToken(const std::string& token,
                                                                  const std::string& run_id) {
  const std::string what = absl::StrCat("the samples of run ", run_id.substr(0, 64));
  auto parts = Decode(token, "samples", 5, what);
  if (!parts.ok()) return parts.status();
  storage::RunSampleCursor cursor;
  if ((*parts)[0] != run_id || !absl::SimpleAtoi((*parts)[1], &cursor.node_key) ||
      !absl::SimpleAtoi((*parts)[2], &cursor.metric_key) ||
      !absl::SimpleAtoi((*parts)[3], &cursor.time_ms) || (*parts)[4].empty()) {
    return NotOurs(what);
  }
  cursor.id = (*parts)[4];
  return cursor;
}

}  // namespace fleetbench::controller
