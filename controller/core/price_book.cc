// PriceBook: the price catalog, imported and listed (docs/ranking.md).
#include "controller/core/price_book.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "controller/core/caller_deadline.h"
#include "controller/ranking/price_catalog.h"

namespace fleetbench::controller {

PriceBook::PriceBook(storage::Store* store, Clock* clock) : store_(store), clock_(clock) {}

absl::StatusOr<std::vector<v1::CatalogPrice>> PriceBook::ParseImport(
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

absl::StatusOr<v1::ImportPricesResponse> PriceBook::Import(
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

absl::StatusOr<v1::ListPricesResponse> PriceBook::List(absl::Time deadline) const {
  auto prices = store_->ListPrices();
  if (!prices.ok()) return prices.status();
  if (absl::Now() >= deadline) return CallerDeadlinePassed();
  v1::ListPricesResponse response;
  for (v1::CatalogPrice& p : *prices) *response.add_prices() = std::move(p);
  return response;
}

}  // namespace fleetbench::controller
