// controller/ranking/price_catalog.h — the price catalog users keep: reading its CSV
// file row by row, and finding the price in force for an offer at a time.
//
// Pure: no store, no clock. FleetCore::ImportPrices parses a file here and
// stores it only when every row is good; FleetCore::Rank builds a
// PriceCatalog from the stored rows. docs/ranking.md has the format.
//
// The file: a header naming the seven columns (any order, each once, no
// others): provider, region, instance_type, price_per_hour,
// spot_price_per_hour, currency, effective_from. Then one row per offer and
// date. Blank lines and lines starting with '#' are skipped. Fields may be
// quoted ("Acme, Inc."; "" for a quote inside); a quoted field ends on its
// line. Rules per field:
//   provider, region, instance_type  non-empty, at most 128 bytes, printable
//   price_per_hour                   a number > 0 and <= 1e6 (per hour)
//   spot_price_per_hour              empty (no spot offer), or as above
//   currency                         ISO 4217 shape: 3 capital letters (USD)
//   effective_from                   YYYY-MM-DD (00:00 UTC) or RFC 3339
//                                    (2025-03-01T12:00:00Z, ...+02:00)
// The same (provider, region, instance_type, effective_from) twice in one
// file is an error on the later line. Rows of one offer with different dates
// are its price history: each is in force from its effective_from until the
// next one's.
//
// Errors: ParsePriceCatalog returns INVALID_ARGUMENT only for a file it
// cannot read at all (over the size or row bound, no header, a bad header);
// bad rows come back as row errors, every one counted and the first
// kMaxListedRowErrors listed. Thread safety: PriceCatalog is immutable after
// construction.
#ifndef FLEETBENCH_CONTROLLER_RANKING_PRICE_CATALOG_H_
#define FLEETBENCH_CONTROLLER_RANKING_PRICE_CATALOG_H_

#include <cstddef>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "fleetbench/v1/price.pb.h"

namespace fleetbench::controller {

inline constexpr size_t kMaxCatalogBytes = size_t{1} << 20;
inline constexpr size_t kMaxCatalogRows = 10000;
inline constexpr size_t kMaxListedRowErrors = 50;
inline constexpr size_t kMaxOfferFieldLength = 128;
inline constexpr double kMaxPricePerHour = 1e6;

struct CatalogRowError {
  size_t line = 0;  // 1-based, in the file
  std::string reason;
};

struct ParsedCatalog {
  std::vector<v1::CatalogPrice> rows;  // the good rows, in file order
  std::vector<CatalogRowError> errors;  // the first kMaxListedRowErrors
  size_t error_count = 0;               // every bad row
};

absl::StatusOr<ParsedCatalog> ParsePriceCatalog(absl::string_view csv);

// One line per bad row, as "SOURCE:LINE: reason", after a first line
// "SOURCE: N bad row(s), nothing imported" and ending with "... and M more"
// when not all are listed.
std::string DescribeRowErrors(absl::string_view source, const ParsedCatalog& parsed);

// The stored catalog, by offer, each offer's rows by effective_from.
class PriceCatalog {
 public:
  PriceCatalog() = default;
  explicit PriceCatalog(const std::vector<v1::CatalogPrice>& rows);

  bool empty() const { return offers_.empty(); }
  // The offer's row in force at `when` (the latest effective_from <= when);
  // nullptr when the offer has no row, or none yet at `when`.
  const v1::CatalogPrice* InForce(const std::string& provider, const std::string& region,
                                  const std::string& instance_type, absl::Time when) const;
  // The offer's earliest row, nullptr when it has none (for saying why a
  // sample older than it has no price).
  const v1::CatalogPrice* Earliest(const std::string& provider, const std::string& region,
                                   const std::string& instance_type) const;
  // The offer's rows by effective_from, nullptr when it has none: looked up
  // once to price many values with InForceIn.
  const std::vector<v1::CatalogPrice>* OfferRows(const std::string& provider,
                                                 const std::string& region,
                                                 const std::string& instance_type) const;
  // The row of `rows` (by effective_from) in force at `when`, or nullptr.
  static const v1::CatalogPrice* InForceIn(const std::vector<v1::CatalogPrice>& rows,
                                           absl::Time when);

 private:
  using Offer = std::tuple<std::string, std::string, std::string>;
  std::map<Offer, std::vector<v1::CatalogPrice>> offers_;
};

}  // namespace fleetbench::controller

#endif  // FLEETBENCH_CONTROLLER_RANKING_PRICE_CATALOG_H_
