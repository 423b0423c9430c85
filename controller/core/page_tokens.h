// controller/core/page_tokens.h — the opaque page tokens of ListRuns, History and
// the samples of GetRun.
//
// A token says where the previous page ended and which query it belongs
// to, so a token handed to another query (another node or metric) is
// refused instead of silently paging something else. Callers treat tokens
// as opaque strings; their layout (web-safe base64 of a tagged text) may
// change between versions. Pure functions: no store, no clock.
//
// Errors: INVALID_ARGUMENT for a token this controller did not make for
// this query.
#ifndef FLEETBENCH_CONTROLLER_CORE_PAGE_TOKENS_H_
#define FLEETBENCH_CONTROLLER_CORE_PAGE_TOKENS_H_

#include <string>

#include "absl/status/statusor.h"
#include "storage/store.h"

namespace fleetbench::controller {

// ListRuns: the last run of the page.
std::string RunsPageToken(const std::string& last_run_id);
absl::StatusOr<std::string> ParseRunsPageToken(const std::string& token);

// History of (node, metric): the last sample of the page.
std::string HistoryPageToken(const std::string& node, const std::string& metric,
                             const storage::SampleCursor& last);
absl::StatusOr<storage::SampleCursor> ParseHistoryPageToken(const std::string& token,
                                                            const std::string& node,
                                                            const std::string& metric);

// The samples of one run (GetRun): where the page ended.
std::string RunSamplesPageToken(const std::string& run_id, const storage::RunSampleCursor& last);
absl::StatusOr<storage::RunSampleCursor> ParseRunSamplesPageToken(const std::string& token,
                                                                  const std::string& run_id);

}  // namespace fleetbench::controller

#endif  // FLEETBENCH_CONTROLLER_CORE_PAGE_TOKENS_H_
