// The SQLite store's price catalog: rows keyed by offer and the date they
// take effect, imported a whole file per transaction.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/status_macros.h"
#include "fleetbench/v1/price.pb.h"
#include "storage/record_checks.h"
#include "storage/sqlite_statement.h"
#include "storage/sqlite_store_impl.h"
#include "storage/store.h"

namespace fleetbench::storage {
namespace {

std::optional<double> SpotOf(const v1::CatalogPrice& p) {
  if (!p.has_spot_price_per_hour()) return std::nullopt;
  return p.spot_price_per_hour();
}

}  // namespace

absl::StatusOr<Store::PriceImport> SqliteStore::ImportPrices(
    const std::vector<v1::CatalogPrice>& prices, absl::Time imported) {
  FLEETBENCH_RETURN_IF_ERROR(CheckCatalogPrices(prices));
  absl::MutexLock lock(&mu_);
  PriceImport counts;
  absl::Status status = InTransaction(TxnKind::kWrite, [&]() -> absl::Status {
    for (const v1::CatalogPrice& p : prices) {
      FLEETBENCH_ASSIGN_OR_RETURN(
          Statement s, Prepare("SELECT price_per_hour, spot_price_per_hour, currency "
                               "FROM prices WHERE provider = ?1 AND region = ?2 "
                               "AND instance_type = ?3 AND effective_from_ms = ?4"));
      s.BindAll(p.provider(), p.region(), p.instance_type(), p.effective_from_unix_ms());
      FLEETBENCH_ASSIGN_OR_RETURN(bool stored, s.Step("reading a stored price"));
      if (stored) {
        const bool same_spot = s.IsNull(1) ? !p.has_spot_price_per_hour()
                                           : p.has_spot_price_per_hour() &&
                                                 s.Double(1) == p.spot_price_per_hour();
        const bool same = s.Double(0) == p.price_per_hour() && same_spot &&
                          s.Text(2) == p.currency();
        s.Reset();
        if (same) {
          ++counts.unchanged;
          continue;
        }
        ++counts.replaced;
      } else {
        s.Reset();
        ++counts.added;
      }
      FLEETBENCH_RETURN_IF_ERROR(RunCached(
          "INSERT INTO prices(provider, region, instance_type, effective_from_ms, "
          "price_per_hour, spot_price_per_hour, currency, imported_ms) "
          "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) "
          "ON CONFLICT(provider, region, instance_type, effective_from_ms) DO UPDATE SET "
          "price_per_hour = excluded.price_per_hour, "
          "spot_price_per_hour = excluded.spot_price_per_hour, "
          "currency = excluded.currency, imported_ms = excluded.imported_ms",
          "storing a price", p.provider(), p.region(), p.instance_type(),
          p.effective_from_unix_ms(), p.price_per_hour(), SpotOf(p), p.currency(),
          ToMillis(imported)));
    }
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return counts;
}

absl::StatusOr<std::vector<v1::CatalogPrice>> SqliteStore::ListPrices() {
  absl::MutexLock lock(&mu_);
  std::vector<v1::CatalogPrice> out;
  FLEETBENCH_ASSIGN_OR_RETURN(
      Statement s,
      Prepare("SELECT provider, region, instance_type, effective_from_ms, price_per_hour, "
              "spot_price_per_hour, currency, imported_ms FROM prices "
              "ORDER BY provider, region, instance_type, effective_from_ms"));
  while (true) {
    FLEETBENCH_ASSIGN_OR_RETURN(bool row, s.Step("listing prices"));
    if (!row) break;
    v1::CatalogPrice& p = out.emplace_back();
    p.set_provider(s.Text(0));
    p.set_region(s.Text(1));
    p.set_instance_type(s.Text(2));
    p.set_effective_from_unix_ms(s.Int(3));
    p.set_price_per_hour(s.Double(4));
    if (!s.IsNull(5)) p.set_spot_price_per_hour(s.Double(5));
    p.set_currency(s.Text(6));
    p.set_imported_unix_ms(s.Int(7));
  }
  return out;
}

}  // namespace fleetbench::storage
