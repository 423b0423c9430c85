// Pricing for the rankings: a node's price from its label or the catalog,
// a group's from its members' (ranking.h, docs/ranking.md, Prices).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "common/stats.h"
#include "controller/ranking/price_catalog.h"
#include "controller/ranking/ranking_steps.h"

namespace fleetbench::controller::ranking_steps {
namespace {

bool IsCurrency(const std::string& c) {
  return c.size() == 3 && std::all_of(c.begin(), c.end(), [](char ch) {
           return ch >= 'A' && ch <= 'Z';
         });
}

std::string Label(const NodeSeries& node, const char* key) {
  auto it = node.labels.find(key);
  return it == node.labels.end() ? "" : it->second;
}

std::string DateOf(int64_t unix_ms) {
  return absl::FormatTime("%Y-%m-%d", absl::FromUnixMillis(unix_ms), absl::UTCTimeZone());
}

}  // namespace

// Labels first (they override the catalog), then the catalog row in force
// at each value's time.
NodePrice PriceOf(const NodeSeries& node, const RankPricing& pricing) {
  const bool spot = pricing.kind == v1::PRICE_KIND_SPOT;
  const char* label = spot ? kSpotPriceLabel : kPriceLabel;
  NodePrice out;
  if (auto it = node.labels.find(label); it != node.labels.end()) {
    double price = 0;
    if (!absl::SimpleAtod(it->second, &price) || !std::isfinite(price) || price <= 0) {
      out.note = absl::StrCat("label ", label, "='", it->second.substr(0, 40),
                              "' is not a price above 0");
      return out;
    }
    std::string currency = Label(node, kCurrencyLabel);
    if (currency.empty()) currency = kDefaultCurrency;
    if (!IsCurrency(currency)) {
      out.note = absl::StrCat("label ", kCurrencyLabel, "='", currency.substr(0, 40),
                              "' is not 3 capital letters");
      return out;
    }
    out.priced = true;
    out.price = price;
    out.currency = currency;
    out.from_label = true;
    return out;
  }
  const std::string provider = Label(node, "provider");
  const std::string region = Label(node, "region");
  const std::string type = Label(node, "instance_type");
  if (pricing.catalog == nullptr || pricing.catalog->empty()) {
    out.note = absl::StrCat("no ", label, " label and no price catalog");
    return out;
  }
  if (provider.empty() || region.empty() || type.empty()) {
    out.note = absl::StrCat("no ", label,
                            " label, and no provider, region and instance_type labels to "
                            "find it in the catalog");
    return out;
  }
  const std::string offer = absl::StrCat(provider, "/", region, "/", type);
  const std::vector<v1::CatalogPrice>* rows = pricing.catalog->OfferRows(provider, region, type);
  if (rows == nullptr || rows->empty()) {
    out.note = absl::StrCat("no ", label, " label and no catalog row for ", offer);
    return out;
  }
  // (price, how many values it prices): a sketch's day of values counts
  // as many times as it holds values.
  std::vector<std::pair<double, uint64_t>> prices;
  uint64_t priced_count = 0;
  std::set<std::string> currencies;
  uint64_t before_first = 0;
  uint64_t no_spot = 0;
  std::vector<std::pair<absl::Time, uint64_t>> times;
  times.reserve(node.times.size() + node.sketch_times.size() + 1);
  for (absl::Time t : node.times) times.emplace_back(t, 1);
  times.insert(times.end(), node.sketch_times.begin(), node.sketch_times.end());
  if (times.empty()) times.emplace_back(absl::InfiniteFuture(), 1);  // "now"
  uint64_t count = 0;
  for (const auto& [when, n] : times) {
    count += n;
    const v1::CatalogPrice* row = PriceCatalog::InForceIn(*rows, when);
    if (row == nullptr) {
      before_first += n;
      continue;
    }
    if (spot && !row->has_spot_price_per_hour()) {
      no_spot += n;
      continue;
    }
    prices.emplace_back(spot ? row->spot_price_per_hour() : row->price_per_hour(), n);
    priced_count += n;
    currencies.insert(row->currency());
    out.newest_from_ms = std::max(out.newest_from_ms, row->effective_from_unix_ms());
  }
  std::vector<std::string> unpriced;
  if (before_first > 0) {
    unpriced.push_back(absl::StrCat(before_first, " measured before the catalog's first row for ",
                                    offer, " (", DateOf(rows->front().effective_from_unix_ms()),
                                    ")"));
  }
  if (no_spot > 0) {
    unpriced.push_back(
        absl::StrCat(no_spot, " measured while the catalog had no spot price for ", offer));
  }
  if (prices.empty()) {
    out.note = absl::StrCat("no ", label, " label; catalog: ", absl::StrJoin(unpriced, "; "));
    return out;
  }
  if (currencies.size() > 1) {
    out.note = absl::StrCat("catalog rows for ", offer, " in several currencies (",
                            absl::StrJoin(currencies, ", "), ") within the window");
    return out;
  }
  out.priced = true;
  out.price = PercentileOfCounts(std::move(prices), 0.5);
  out.currency = *currencies.begin();
  out.from_catalog = true;
  if (!unpriced.empty()) {
    out.note = absl::StrCat("priced by ", priced_count, " of ", count, " results; ",
                            absl::StrJoin(unpriced, "; "));
  }
  return out;
}

bool PriceGroup(const std::vector<std::pair<std::string, NodePrice>>& members, bool by_node,
                v1::RankRow& row) {
  std::vector<double> prices;
  std::set<std::string> currencies;
  bool label = false;
  bool catalog = false;
  int64_t newest_from = 0;
  std::vector<std::string> notes;
  size_t unpriced = 0;
  for (const auto& [node, p] : members) {
    if (!p.note.empty()) notes.push_back(by_node ? p.note : absl::StrCat(node, ": ", p.note));
    if (!p.priced) {
      ++unpriced;
      continue;
    }
    prices.push_back(p.price);
    currencies.insert(p.currency);
    label |= p.from_label;
    catalog |= p.from_catalog;
    newest_from = std::max(newest_from, p.newest_from_ms);
  }
  // A few members' reasons say enough; the rest are counted.
  constexpr size_t kNotesShown = 3;
  std::string note;
  if (!by_node && unpriced > 0) {
    note = absl::StrCat(unpriced, " of ", members.size(), " nodes unpriced");
  }
  const size_t shown = std::min(notes.size(), kNotesShown);
  if (shown > 0) {
    absl::StrAppend(&note, note.empty() ? "" : ": ",
                    absl::StrJoin(notes.begin(), notes.begin() + static_cast<long>(shown), "; "));
    if (notes.size() > shown) absl::StrAppend(&note, "; ... (", notes.size() - shown, " more)");
  }
  if (prices.empty()) {
    row.set_price_note(note);
    return false;
  }
  if (currencies.size() > 1) {
    row.set_price_note(absl::StrCat("members priced in several currencies (",
                                    absl::StrJoin(currencies, ", "), "); not compared"));
    return false;
  }
  row.set_price_per_hour(Median(prices));
  row.set_currency(*currencies.begin());
  row.set_price_source(label && catalog ? kPriceFromBoth : label ? kPriceFromLabel
                                                                  : kPriceFromCatalog);
  row.set_price_effective_from_unix_ms(newest_from);
  row.set_price_note(note);
  return true;
}

}  // namespace fleetbench::controller::ranking_steps
