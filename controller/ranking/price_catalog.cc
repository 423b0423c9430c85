#include "controller/ranking/price_catalog.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace fleetbench::controller {
namespace {

enum Column { kProvider, kRegion, kInstanceType, kPrice, kSpot, kCurrency, kEffectiveFrom };
constexpr std::array<const char*, 7> kColumns = {
    "provider", "region", "instance_type", "price_per_hour", "spot_price_per_hour",
    "currency", "effective_from"};

// A field as the user wrote it, cut so that a megabyte-long cell cannot
// make a megabyte-long message.
std::string Quote(absl::string_view field) {
  constexpr size_t kShown = 40;
  if (field.size() <= kShown) return absl::StrCat("'", field, "'");
  return absl::StrCat("'", field.substr(0, kShown), "...' (", field.size(), " bytes)");
}

// Splits one line into fields: commas separate, a field that starts with a
// quote runs to its closing quote ("" inside is a quote). Unquoted fields
// are trimmed of spaces and tabs.
absl::StatusOr<std::vector<std::string>> SplitFields(absl::string_view line) {
  std::vector<std::string> fields;
  size_t i = 0;
  while (true) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    std::string field;
    if (i < line.size() && line[i] == '"') {
      ++i;
      bool closed = false;
      while (i < line.size()) {
        if (line[i] == '"') {
          if (i + 1 < line.size() && line[i + 1] == '"') {
            field.push_back('"');
            i += 2;
            continue;
          }
          ++i;
          closed = true;
          break;
        }
        field.push_back(line[i++]);
      }
      if (!closed) {
        return absl::InvalidArgumentError(
            absl::StrCat("field ", fields.size() + 1,
                         " opens a quote that does not close on its line"));
      }
      while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
      if (i < line.size() && line[i] != ',') {
        return absl::InvalidArgumentError(
            absl::StrCat("field ", fields.size() + 1, " has text after its closing quote"));
      }
    } else {
      const size_t end = std::min(line.find(',', i), line.size());
      field = std::string(absl::StripTrailingAsciiWhitespace(line.substr(i, end - i)));
      i = end;
    }
    fields.push_back(std::move(field));
    if (i >= line.size()) break;
    ++i;  // the comma
  }
  return fields;
}

absl::Status CheckOfferField(const char* name, const std::string& value) {
  if (value.empty()) return absl::InvalidArgumentError(absl::StrCat(name, " is empty"));
  if (value.size() > kMaxOfferFieldLength) {
    return absl::InvalidArgumentError(absl::StrCat(name, " ", Quote(value), " is longer than ",
                                                   kMaxOfferFieldLength, " bytes"));
  }
  for (unsigned char c : value) {
    if (c < 0x20 || c == 0x7f) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, " ", Quote(value), " holds a control character"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<double> ParsePrice(const char* name, const std::string& value) {
  double price = 0;
  if (!absl::SimpleAtod(value, &price) || !std::isfinite(price)) {
    return absl::InvalidArgumentError(absl::StrCat(name, " ", Quote(value), " is not a number"));
  }
  if (price <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, " ", Quote(value), " is not above 0"));
  }
  if (price > kMaxPricePerHour) {
    return absl::InvalidArgumentError(absl::StrCat(name, " ", Quote(value),
                                                   " is above 1000000 per hour (a typo?)"));
  }
  return price;
}

absl::StatusOr<absl::Time> ParseEffectiveFrom(const std::string& value) {
  absl::Time t;
  std::string ignored;
  const bool date_only = value.size() == 10;
  const bool parsed = date_only ? absl::ParseTime("%Y-%m-%d", value, absl::UTCTimeZone(), &t,
                                                  &ignored)
                                : absl::ParseTime(absl::RFC3339_full, value, &t, &ignored);
  if (!parsed) {
    return absl::InvalidArgumentError(
        absl::StrCat("effective_from ", Quote(value),
                     " is not a date (YYYY-MM-DD) or an RFC 3339 time "
                     "(2025-03-01T12:00:00Z)"));
  }
  if (t < absl::UnixEpoch() || t >= absl::FromCivil(absl::CivilYear(10000), absl::UTCTimeZone())) {
    return absl::InvalidArgumentError(
        absl::StrCat("effective_from ", Quote(value), " is outside 1970..9999"));
  }
  return t;
}

absl::StatusOr<v1::CatalogPrice> ParseRow(const std::vector<std::string>& fields,
                                          const std::array<size_t, 7>& at) {
  v1::CatalogPrice p;
  auto field = [&](Column c) -> const std::string& { return fields[at[c]]; };
  for (Column c : {kProvider, kRegion, kInstanceType}) {
    if (absl::Status s = CheckOfferField(kColumns[c], field(c)); !s.ok()) return s;
  }
  p.set_provider(field(kProvider));
  p.set_region(field(kRegion));
  p.set_instance_type(field(kInstanceType));
  absl::StatusOr<double> price = ParsePrice(kColumns[kPrice], field(kPrice));
  if (!price.ok()) return price.status();
  p.set_price_per_hour(*price);
  if (!field(kSpot).empty()) {
    absl::StatusOr<double> spot = ParsePrice(kColumns[kSpot], field(kSpot));
    if (!spot.ok()) return spot.status();
    p.set_spot_price_per_hour(*spot);
  }
  const std::string& currency = field(kCurrency);
  if (currency.size() != 3 || !std::all_of(currency.begin(), currency.end(), [](char c) {
        return absl::ascii_isupper(static_cast<unsigned char>(c));
      })) {
    return absl::InvalidArgumentError(absl::StrCat(
        "currency ", Quote(currency), " is not an ISO 4217 code (3 capital letters, e.g. USD)"));
  }
  p.set_currency(currency);
  absl::StatusOr<absl::Time> from = ParseEffectiveFrom(field(kEffectiveFrom));
  if (!from.ok()) return from.status();
  p.set_effective_from_unix_ms(absl::ToUnixMillis(*from));
  return p;
}

// Where each column is in the file's rows; INVALID_ARGUMENT naming what is
// missing, repeated or unknown.
absl::StatusOr<std::array<size_t, 7>> ReadHeader(const std::vector<std::string>& names) {
  std::array<size_t, 7> at;
  at.fill(SIZE_MAX);
  std::vector<std::string> unknown;
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string name = absl::AsciiStrToLower(names[i]);
    auto it = std::find(kColumns.begin(), kColumns.end(), name);
    if (it == kColumns.end()) {
      unknown.push_back(Quote(names[i]));
      continue;
    }
    size_t& slot = at[static_cast<size_t>(it - kColumns.begin())];
    if (slot != SIZE_MAX) {
      return absl::InvalidArgumentError(absl::StrCat("column ", name, " is named twice"));
    }
    slot = i;
  }
  std::vector<std::string> missing;
  for (size_t c = 0; c < kColumns.size(); ++c) {
    if (at[c] == SIZE_MAX) missing.push_back(kColumns[c]);
  }
  if (!unknown.empty() || !missing.empty()) {
    std::string message = "the header must name the columns ";
    absl::StrAppend(&message, absl::StrJoin(kColumns, ","));
    if (!missing.empty()) absl::StrAppend(&message, "; missing: ", absl::StrJoin(missing, ", "));
    if (!unknown.empty()) absl::StrAppend(&message, "; unknown: ", absl::StrJoin(unknown, ", "));
    return absl::InvalidArgumentError(message);
  }
  return at;
}

std::string KeyText(const v1::CatalogPrice& p) {
  return absl::StrCat(p.provider(), "/", p.region(), "/", p.instance_type(), " from ",
                      absl::FormatTime(absl::RFC3339_sec,
                                       absl::FromUnixMillis(p.effective_from_unix_ms()),
                                       absl::UTCTimeZone()));
}

}  // namespace

absl::StatusOr<ParsedCatalog> ParsePriceCatalog(absl::string_view csv) {
  if (csv.size() > kMaxCatalogBytes) {
    return absl::InvalidArgumentError(absl::StrCat("the price catalog has ", csv.size(),
                                                   " bytes, more than the ", kMaxCatalogBytes,
                                                   " allowed; split it into several files"));
  }
  absl::ConsumePrefix(&csv, "\xEF\xBB\xBF");  // a byte-order mark from a spreadsheet
  ParsedCatalog parsed;
  std::optional<std::array<size_t, 7>> columns;
  size_t header_fields = 0;
  size_t data_rows = 0;
  using Key = std::tuple<std::string, std::string, std::string, int64_t>;
  std::map<Key, size_t> first_line;
  auto reject = [&parsed](size_t line, std::string reason) {
    ++parsed.error_count;
    if (parsed.errors.size() < kMaxListedRowErrors) {
      parsed.errors.push_back({line, std::move(reason)});
    }
  };
  size_t line_number = 0;
  for (absl::string_view line : absl::StrSplit(csv, '\n')) {
    ++line_number;
    absl::ConsumeSuffix(&line, "\r");
    const absl::string_view trimmed = absl::StripAsciiWhitespace(line);
    if (trimmed.empty() || trimmed.front() == '#') continue;
    absl::StatusOr<std::vector<std::string>> fields = SplitFields(line);
    if (!columns) {
      if (!fields.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("line ", line_number, ": header: ", fields.status().message()));
      }
      absl::StatusOr<std::array<size_t, 7>> at = ReadHeader(*fields);
      if (!at.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("line ", line_number, ": ", at.status().message()));
      }
      columns = *at;
      header_fields = fields->size();
      continue;
    }
    if (++data_rows > kMaxCatalogRows) {
      return absl::InvalidArgumentError(absl::StrCat("the price catalog has more than ",
                                                     kMaxCatalogRows,
                                                     " rows; split it into several files"));
    }
    if (!fields.ok()) {
      reject(line_number, std::string(fields.status().message()));
      continue;
    }
    if (fields->size() != header_fields) {
      reject(line_number, absl::StrCat(fields->size(), " fields, the header has ",
                                       header_fields));
      continue;
    }
    absl::StatusOr<v1::CatalogPrice> row = ParseRow(*fields, *columns);
    if (!row.ok()) {
      reject(line_number, std::string(row.status().message()));
      continue;
    }
    const Key key{row->provider(), row->region(), row->instance_type(),
                  row->effective_from_unix_ms()};
    auto [it, added] = first_line.try_emplace(key, line_number);
    if (!added) {
      reject(line_number, absl::StrCat(KeyText(*row), " is already on line ", it->second,
                                       " (one price per offer and date)"));
      continue;
    }
    parsed.rows.push_back(*std::move(row));
  }
  if (!columns) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the price catalog is empty; it needs a header line: ", absl::StrJoin(kColumns, ",")));
  }
  return parsed;
}

std::string DescribeRowErrors(absl::string_view source, const ParsedCatalog& parsed) {
  std::string out = absl::StrCat(source, ": ", parsed.error_count, " bad row",
                                 parsed.error_count == 1 ? "" : "s", ", nothing imported");
  for (const CatalogRowError& e : parsed.errors) {
    absl::StrAppend(&out, "\n", source, ":", e.line, ": ", e.reason);
  }
  if (parsed.error_count > parsed.errors.size()) {
    absl::StrAppend(&out, "\n... and ", parsed.error_count - parsed.errors.size(), " more");
  }
  return out;
}

PriceCatalog::PriceCatalog(const std::vector<v1::CatalogPrice>& rows) {
  for (const v1::CatalogPrice& row : rows) {
    offers_[{row.provider(), row.region(), row.instance_type()}].push_back(row);
  }
  for (auto& [offer, list] : offers_) {
    std::sort(list.begin(), list.end(), [](const v1::CatalogPrice& a, const v1::CatalogPrice& b) {
      return a.effective_from_unix_ms() < b.effective_from_unix_ms();
    });
  }
}

const std::vector<v1::CatalogPrice>* PriceCatalog::OfferRows(
    const std::string& provider, const std::string& region,
    const std::string& instance_type) const {
  auto it = offers_.find({provider, region, instance_type});
  return it == offers_.end() ? nullptr : &it->second;
}

const v1::CatalogPrice* PriceCatalog::InForceIn(const std::vector<v1::CatalogPrice>& rows,
                                                absl::Time when) {
  const int64_t when_ms = absl::ToUnixMillis(when);
  // The first row that starts after `when`; the one before it is in force.
  auto next = std::upper_bound(rows.begin(), rows.end(), when_ms,
                               [](int64_t t, const v1::CatalogPrice& p) {
                                 return t < p.effective_from_unix_ms();
                               });
  if (next == rows.begin()) return nullptr;
  return &*std::prev(next);
}

const v1::CatalogPrice* PriceCatalog::InForce(const std::string& provider,
                                              const std::string& region,
                                              const std::string& instance_type,
                                              absl::Time when) const {
  const std::vector<v1::CatalogPrice>* rows = OfferRows(provider, region, instance_type);
  return rows == nullptr ? nullptr : InForceIn(*rows, when);
}

const v1::CatalogPrice* PriceCatalog::Earliest(const std::string& provider,
                                               const std::string& region,
                                               const std::string& instance_type) const {
  const std::vector<v1::CatalogPrice>* rows = OfferRows(provider, region, instance_type);
  return rows == nullptr || rows->empty() ? nullptr : &rows->front();
}

}  // namespace fleetbench::controller
