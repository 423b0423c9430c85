// HistoryView: the stored runs a page at a time, one node's samples of a
// metric, and a node's facts as they changed. Reads only the store.
#include "controller/core/history_view.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/api_enums.h"
#include "common/wire_limits.h"
#include "controller/core/caller_deadline.h"
#include "controller/core/page_tokens.h"

namespace fleetbench::controller {

HistoryView::HistoryView(storage::Store* store) : store_(store) {}

absl::StatusOr<v1::ListRunsResponse> HistoryView::ListRuns(const v1::ListRunsRequest& request,
                                                           absl::Time deadline) const {
  const uint32_t page_size =
      std::clamp<uint32_t>(request.page_size() ? request.page_size() : 20, 1, 1000);
  std::string after;
  if (!request.page_token().empty()) {
    auto parsed = ParseRunsPageToken(request.page_token());
    if (!parsed.ok()) return parsed.status();
    after = *std::move(parsed);
  }
  // One more than the page: whether a next page exists, without a second
  // query and without handing out a token to an empty page.
  auto runs = store_->ListRuns(static_cast<int>(page_size) + 1, after);
  if (absl::IsNotFound(runs.status())) {
    return absl::InvalidArgumentError("page_token names a run that is no longer stored");
  }
  if (!runs.ok()) return runs.status();
  if (absl::Now() >= deadline) return CallerDeadlinePassed();
  v1::ListRunsResponse response;
  // A page ends at page_size runs or kPageBudgetBytes, whichever comes
  // first (at least one run): a page of large runs still fits a message.
  size_t bytes = 0;
  size_t taken = 0;
  for (size_t i = 0; i < runs->size() && i < page_size; ++i, ++taken) {
    if (i > 0 && bytes > kPageBudgetBytes) break;
    const storage::RunRecord& r = (*runs)[i];
    v1::Run* run = response.add_runs();
    run->set_run_id(r.run_id);
    run->set_state(RunStateFromName(r.state).value_or(v1::RUN_STATE_UNSPECIFIED));
    run->set_created_unix_ms(absl::ToUnixMillis(r.created));
    if (r.finished != absl::InfinitePast()) {
      run->set_finished_unix_ms(absl::ToUnixMillis(r.finished));
    }
    run->set_suite(r.suite);
    for (const auto& b : r.benchmarks) *run->add_benchmarks() = b;
    bytes += run->ByteSizeLong() + 8;
  }
  if (runs->size() > taken) {
    response.set_next_page_token(RunsPageToken(response.runs(response.runs_size() - 1).run_id()));
  }
  return response;
}

absl::StatusOr<std::vector<storage::FactsVersion>> HistoryView::FactsHistory(
    const std::string& node, int limit, absl::Time deadline) const {
  if (node.empty()) return absl::InvalidArgumentError("a node name is required");
  auto versions = store_->ListFactsVersions(node, std::clamp(limit, 1, 1000));
  if (!versions.ok()) return versions.status();
  if (absl::Now() >= deadline) return CallerDeadlinePassed();
  return versions;
}

absl::StatusOr<v1::HistoryResponse> HistoryView::History(const v1::HistoryRequest& request,
                                                         absl::Time deadline) const {
  if (request.node().empty() || request.metric().empty()) {
    return absl::InvalidArgumentError("--node and --metric are required");
  }
  const uint32_t page_size =
      std::clamp<uint32_t>(request.page_size() ? request.page_size() : 100, 1, 100000);
  std::optional<storage::SampleCursor> after;
  if (!request.page_token().empty()) {
    auto parsed = ParseHistoryPageToken(request.page_token(), request.node(), request.metric());
    if (!parsed.ok()) return parsed.status();
    after = *std::move(parsed);
  }
  auto samples = store_->History(request.node(), request.metric(),
                                 static_cast<int>(page_size) + 1, after);
  if (!samples.ok()) return samples.status();
  if (absl::Now() >= deadline) return CallerDeadlinePassed();
  v1::HistoryResponse response;
  // A page ends at page_size samples or kPageBudgetBytes (at least one).
  size_t bytes = 0;
  size_t taken = 0;
  for (; taken < samples->size() && taken < page_size; ++taken) {
    bytes += (*samples)[taken].ByteSizeLong() + 8;
    if (taken > 0 && bytes > kPageBudgetBytes) break;
    *response.add_samples() = std::move((*samples)[taken]);
  }
  const bool more = samples->size() > taken;
  if (more) {
    const v1::Sample& last = response.samples(response.samples_size() - 1);
    response.set_next_page_token(HistoryPageToken(
        request.node(), request.metric(), {last.time_unix_ms(), last.id()}));
  }
  return response;
}

}  // namespace fleetbench::controller
