// FleetCore: the price catalog (import and list) and the cost of a given
// amount of work. Importing parses on the caller's thread and writes on the
// actor; listing and Cost read the store from the caller's thread.
#include <cmath>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "controller/fleet_core.h"
#include "controller/price_catalog.h"
#include "controller/work_cost.h"

namespace fleetbench::controller {

absl::StatusOr<std::vector<v1::CatalogPrice>> FleetCore::ParsePriceImport(
    const v1::ImportPricesRequest& request) {
  // The source only labels messages; a long one is cut, not refused.
  constexpr size_t kMaxSourceLength = 256;
  const std::string source = request.source().empty()
                                 ? "price catalog"
                                 : request.source().substr(0, kMaxSourceLength);
  absl::StatusOr<ParsedCatalog> parsed = ParsePriceCatalog(request.csv());
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": ", parsed.status().message(), "; nothing imported"));
  }
  if (parsed->error_count > 0) {
    return absl::InvalidArgumentError(DescribeRowErrors(source, *parsed));
  }
  return std::move(parsed->rows);
}

absl::StatusOr<v1::ImportPricesResponse> FleetCore::HandleImportPrices(
    const std::vector<v1::CatalogPrice>& rows) {
  absl::StatusOr<storage::Store::PriceImport> counts = store_->ImportPrices(rows, clock_->Now());
  if (!counts.ok()) return counts.status();
  v1::ImportPricesResponse response;
  response.set_rows(static_cast<uint32_t>(rows.size()));
  response.set_added(static_cast<uint32_t>(counts->added));
  response.set_replaced(static_cast<uint32_t>(counts->replaced));
  response.set_unchanged(static_cast<uint32_t>(counts->unchanged));
  return response;
}

absl::StatusOr<v1::ListPricesResponse> FleetCore::ListPrices(absl::Time deadline) {
  auto prices = store_->ListPrices();
  if (!prices.ok()) return prices.status();
  if (absl::Now() >= deadline) return CallerDeadlinePassed();
  v1::ListPricesResponse response;
  for (v1::CatalogPrice& p : *prices) *response.add_prices() = std::move(p);
  return response;
}

absl::StatusOr<v1::CostResponse> FleetCore::Cost(const v1::CostRequest& request,
                                                 absl::Time deadline) {
  if (request.metric().empty()) {
    return absl::InvalidArgumentError("--metric is required, e.g. gemm.cpu.fp32.tflops");
  }
  if (!std::isfinite(request.work()) || request.work() <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--work must be a number above 0 (e.g. 1e18 FLOP for a tflops metric); got ",
        request.work()));
  }
  v1::RankRequest rank;
  rank.set_metric(request.metric());
  rank.set_by(request.by());
  rank.set_price(request.price());
  rank.set_window_ms(request.window_ms());
  absl::StatusOr<v1::RankResponse> ranked = Rank(rank, deadline);
  if (!ranked.ok()) return ranked.status();
  return CostOfWork(*ranked, request.work());
}

}  // namespace fleetbench::controller
