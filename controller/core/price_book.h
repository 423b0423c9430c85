// controller/core/price_book.h — the imported price catalog (docs/ranking.md):
// what each offer (provider, region, instance type, price kind) cost from
// which date. Ranking reads it from the store beside the results.
//
// ParseImport runs on the caller's thread (a megabyte of CSV must not stall
// ingest); Import writes, on the actor thread, every row or none; List reads
// the store from any thread. Errors: INVALID_ARGUMENT for a file over the
// bounds or with bad rows, one line per bad row (the first 50),
// "SOURCE:LINE: reason"; store errors as the store returns them.
#ifndef FLEETBENCH_CONTROLLER_CORE_PRICE_BOOK_H_
#define FLEETBENCH_CONTROLLER_CORE_PRICE_BOOK_H_

#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "fleetbench/v1/price.pb.h"
#include "storage/store.h"

namespace fleetbench::controller {

class PriceBook {
 public:
  // `store` and `clock` must outlive the book.
  PriceBook(storage::Store* store, Clock* clock);

  // The request's rows, checked; any thread.
  static absl::StatusOr<std::vector<v1::CatalogPrice>> ParseImport(
      const v1::ImportPricesRequest& request);
  // Stores `rows` (from ParseImport) as imported now. Actor thread.
  absl::StatusOr<v1::ImportPricesResponse> Import(const std::vector<v1::CatalogPrice>& rows);
  absl::StatusOr<v1::ListPricesResponse> List(absl::Time deadline) const;

 private:
  storage::Store* const store_;
  Clock* const clock_;
};

}  // namespace fleetbench::controller

#endif  // FLEETBENCH_CONTROLLER_CORE_PRICE_BOOK_H_
