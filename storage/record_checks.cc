#include "storage/record_checks.h"

#include <cmath>
#include <cstdint>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"

namespace fleetbench::storage {
namespace {

constexpr size_t kSha256Bytes = 32;

std::string PriceKeyText(const v1::CatalogPrice& p) {
  return absl::StrCat(p.provider(), "/", p.region(), "/", p.instance_type(), " from ",
                      absl::FormatTime(absl::RFC3339_sec,
                                       absl::FromUnixMillis(p.effective_from_unix_ms()),
                                       absl::UTCTimeZone()));
}

bool IsPrice(double v) { return std::isfinite(v) && v > 0; }

// The catalog parser (controller/ranking/price_catalog.h) has already said
// the same with line numbers; this is the store's own guard.
absl::Status CheckCatalogPrice(const v1::CatalogPrice& p) {
  if (p.provider().empty() || p.region().empty() || p.instance_type().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "price ", PriceKeyText(p), ": provider, region and instance_type are required"));
  }
  if (!IsPrice(p.price_per_hour()) ||
      (p.has_spot_price_per_hour() && !IsPrice(p.spot_price_per_hour()))) {
    return absl::InvalidArgumentError(
        absl::StrCat("price ", PriceKeyText(p), ": prices must be finite and above 0"));
  }
  const std::string& c = p.currency();
  if (c.size() != 3 || !absl::ascii_isupper(c[0]) || !absl::ascii_isupper(c[1]) ||
      !absl::ascii_isupper(c[2])) {
    return absl::InvalidArgumentError(
        absl::StrCat("price ", PriceKeyText(p), ": currency '", c, "' is not 3 capital letters"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckMetricDescriptor(const v1::MetricDescriptor& d) {
  if (d.name().empty()) return absl::InvalidArgumentError("metric descriptor without a name");
  if (d.unit().empty() || d.benchmark().empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("metric ", d.name(), ": unit and benchmark are required"));
  }
  if (d.direction() != v1::METRIC_DIRECTION_HIGHER_IS_BETTER &&
      d.direction() != v1::METRIC_DIRECTION_LOWER_IS_BETTER) {
    return absl::InvalidArgumentError(
        absl::StrCat("metric ", d.name(), ": direction must be higher or lower is better"));
  }
  return absl::OkStatus();
}

absl::Status CheckCatalogPrices(const std::vector<v1::CatalogPrice>& prices) {
  std::set<std::tuple<std::string, std::string, std::string, int64_t>> keys;
  for (const v1::CatalogPrice& p : prices) {
    if (absl::Status s = CheckCatalogPrice(p); !s.ok()) return s;
    if (!keys.insert({p.provider(), p.region(), p.instance_type(), p.effective_from_unix_ms()})
             .second) {
      return absl::InvalidArgumentError(absl::StrCat("price ", PriceKeyText(p), " is given twice"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckSchedule(const v1::Schedule& schedule) {
  if (schedule.name().empty() || schedule.cron().empty()) {
    return absl::InvalidArgumentError("a schedule needs a name and a cron expression");
  }
  return absl::OkStatus();
}

absl::Status CheckApiToken(const ApiTokenRecord& token) {
  if (token.name.empty() || token.token_id.empty() || token.role.empty()) {
    return absl::InvalidArgumentError("a token needs a name, an id and a role");
  }
  if (token.secret_hash.size() != kSha256Bytes) {
    return absl::InvalidArgumentError("a token's hash is 32 bytes (SHA-256)");
  }
  return absl::OkStatus();
}

absl::Status CheckReliability(const std::vector<NodeUptime>& uptime,
                              const std::vector<InterruptionRecord>& interruptions) {
  for (const NodeUptime& u : uptime) {
    if (u.node.empty() || u.online_ms < 0) {
      return absl::InvalidArgumentError("time online needs a node and a duration of 0 or more");
    }
  }
  for (const InterruptionRecord& i : interruptions) {
    if (i.node.empty() || i.kind.empty()) {
      return absl::InvalidArgumentError("an interruption needs a node and a kind");
    }
  }
  return absl::OkStatus();
}

}  // namespace fleetbench::storage
