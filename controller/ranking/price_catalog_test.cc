// Tests of reading the price catalog's CSV file and of finding the price in
// force at a time.
#include "controller/ranking/price_catalog.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetbench::controller {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr char kHeader[] =
    "provider,region,instance_type,price_per_hour,spot_price_per_hour,currency,effective_from\n";
const int64_t kJan = 1'735'689'600'000;  // 2025-01-01T00:00:00Z
const int64_t kFeb = 1'738'368'000'000;  // 2025-02-01T00:00:00Z

ParsedCatalog Parse(const std::string& csv) {
  absl::StatusOr<ParsedCatalog> parsed = ParsePriceCatalog(csv);
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  return parsed.ok() ? *std::move(parsed) : ParsedCatalog{};
}

// "line: reason" of every listed error, for matching.
std::vector<std::string> Errors(const ParsedCatalog& parsed) {
  std::vector<std::string> out;
  for (const CatalogRowError& e : parsed.errors) out.push_back(absl::StrCat(e.line, ": ", e.reason));
  return out;
}

TEST(PriceCatalogTest, AGoodFileReadsEveryRow) {
  // A spreadsheet's export: byte-order mark, CRLF, columns in its own order,
  // a quoted provider with a comma, a comment and a blank line.
  const std::string csv =
      "\xEF\xBB\xBF"
      "currency,provider,region,instance_type,effective_from,price_per_hour,spot_price_per_hour\r\n"
      "# on-demand list prices, 2025\r\n"
      "USD,acme,us-east,h100x8,2025-01-01,26.00,9.5\r\n"
      "\r\n"
      "USD,acme,us-east,h100x8,2025-02-01T00:00:00Z,24.5,\r\n"
      "EUR,\"Beta, Inc.\",eu-west, a10 ,2025-01-01T02:00:00+02:00,1.10,\r\n";
  ParsedCatalog parsed = Parse(csv);
  EXPECT_EQ(parsed.error_count, 0u) << ::testing::PrintToString(Errors(parsed));
  ASSERT_EQ(parsed.rows.size(), 3u);
  EXPECT_EQ(parsed.rows[0].provider(), "acme");
  EXPECT_EQ(parsed.rows[0].price_per_hour(), 26);
  EXPECT_EQ(parsed.rows[0].spot_price_per_hour(), 9.5);
  EXPECT_EQ(parsed.rows[0].effective_from_unix_ms(), kJan);
  EXPECT_EQ(parsed.rows[1].effective_from_unix_ms(), kFeb);
  EXPECT_FALSE(parsed.rows[1].has_spot_price_per_hour());
  EXPECT_EQ(parsed.rows[2].provider(), "Beta, Inc.");
  EXPECT_EQ(parsed.rows[2].instance_type(), "a10");
  EXPECT_EQ(parsed.rows[2].currency(), "EUR");
  EXPECT_EQ(parsed.rows[2].effective_from_unix_ms(), kJan);  // 02:00+02:00 is midnight UTC
}

TEST(PriceCatalogTest, EachBadRowIsRejectedWithItsLineAndReason) {
  const std::string csv = absl::StrCat(
      kHeader,                                                  // line 1
      "acme,us-east,h100x8,26,,USD,2025-01-01\n",               // 2: good
      ",us-east,h100x8,26,,USD,2025-01-01\n",                   // 3
      "acme,us-east,h100x8,abc,,USD,2025-01-02\n",              // 4
      "acme,us-east,h100x8,0,,USD,2025-01-03\n",                // 5
      "acme,us-east,h100x8,-2,,USD,2025-01-04\n",               // 6
      "acme,us-east,h100x8,nan,,USD,2025-01-05\n",              // 7
      "acme,us-east,h100x8,2000000,,USD,2025-01-06\n",          // 8
      "acme,us-east,h100x8,26,0,USD,2025-01-07\n",              // 9
      "acme,us-east,h100x8,26,,usd,2025-01-08\n",               // 10
      "acme,us-east,h100x8,26,,USD,01/09/2025\n",               // 11
      "acme,us-east,h100x8,26,,USD,2025-02-30\n",               // 12
      "acme,us-east,h100x8,26,,USD\n",                          // 13
      "acme,\"us-east,h100x8,26,,USD,2025-01-10\n",             // 14
      "acme,us-east,h100x8,26,,USD,2025-01-01T00:00:00Z\n",     // 15: line 2's key
      "acme,us-east,h100x8,26,,USD,1969-12-31\n",               // 16
      "acme,us-east,", std::string(200, 'x'), ",26,,USD,2025-01-11\n",  // 17
      "acme,us-east,h100x8,27,,USD,2025-03-01\n");              // 18: good
  ParsedCatalog parsed = Parse(csv);
  EXPECT_EQ(parsed.error_count, 15u);
  EXPECT_THAT(
      Errors(parsed),
      ::testing::ElementsAre(
          "3: provider is empty", "4: price_per_hour 'abc' is not a number",
          "5: price_per_hour '0' is not above 0", "6: price_per_hour '-2' is not above 0",
          "7: price_per_hour 'nan' is not a number",
          "8: price_per_hour '2000000' is above 1000000 per hour (a typo?)",
          "9: spot_price_per_hour '0' is not above 0",
          "10: currency 'usd' is not an ISO 4217 code (3 capital letters, e.g. USD)",
          StartsWith("11: effective_from '01/09/2025' is not a date (YYYY-MM-DD)"),
          StartsWith("12: effective_from '2025-02-30' is not a date"),
          "13: 6 fields, the header has 7",
          "14: field 2 opens a quote that does not close on its line",
          "15: acme/us-east/h100x8 from 2025-01-01T00:00:00+00:00 is already on line 2 (one "
          "price per offer and date)",
          "16: effective_from '1969-12-31' is outside 1970..9999",
          AllOf(StartsWith("17: instance_type 'xxxx"), HasSubstr("...' (200 bytes) is longer "
                                                                 "than 128 bytes"))));
  // The good rows are read too (the importer stores none of them).
  ASSERT_EQ(parsed.rows.size(), 2u);
  EXPECT_EQ(parsed.rows[1].price_per_hour(), 27);
}

TEST(PriceCatalogTest, TheSameOfferOnNewDatesIsItsHistory) {
  ParsedCatalog parsed = Parse(absl::StrCat(kHeader, "acme,us-east,h100x8,26,,USD,2025-01-01\n",
                                            "acme,us-east,h100x8,24,,USD,2025-02-01\n",
                                            "acme,us-west,h100x8,25,,USD,2025-01-01\n"));
  EXPECT_EQ(parsed.error_count, 0u) << ::testing::PrintToString(Errors(parsed));
  EXPECT_EQ(parsed.rows.size(), 3u);
}

TEST(PriceCatalogTest, AFileWithoutAGoodHeaderIsRefusedWhole) {
  for (const auto& [csv, message] : std::vector<std::pair<std::string, std::string>>{
           {"", "the price catalog is empty; it needs a header line"},
           {"# only a comment\n\n", "the price catalog is empty"},
           {"acme,us-east,h100x8,26,,USD,2025-01-01\n", "line 1: the header must name"},
           {"provider,region,instance_type,price_per_hour,currency,effective_from\n",
            "missing: spot_price_per_hour"},
           {"provider,region,instance_type,price_per_hour,spot_price_per_hour,currency,"
            "effective_from,zone\n",
            "unknown: 'zone'"},
           {"provider,provider,region,instance_type,price_per_hour,spot_price_per_hour,"
            "currency,effective_from\n",
            "column provider is named twice"}}) {
    absl::StatusOr<ParsedCatalog> parsed = ParsePriceCatalog(csv);
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument) << csv;
    EXPECT_THAT(parsed.status().message(), HasSubstr(message)) << csv;
  }
}

TEST(PriceCatalogTest, SizeAndRowCountAreBounded) {
  const std::string row = "acme,us-east,h100x8,26,,USD,";
  std::string rows = kHeader;
  for (size_t i = 0; i <= kMaxCatalogRows; ++i) {
    absl::StrAppend(&rows, row,
                    absl::FormatTime("%Y-%m-%d", absl::FromUnixSeconds(86400 * int64_t(i)),
                                     absl::UTCTimeZone()),
                    "\n");
  }
  ASSERT_LT(rows.size(), kMaxCatalogBytes);
  absl::StatusOr<ParsedCatalog> too_many = ParsePriceCatalog(rows);
  EXPECT_EQ(too_many.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(too_many.status().message(), HasSubstr("more than 10000 rows"));
  // One row less is fine.
  rows.resize(rows.rfind(row));
  absl::StatusOr<ParsedCatalog> at_bound = ParsePriceCatalog(rows);
  ASSERT_TRUE(at_bound.ok()) << at_bound.status();
  EXPECT_EQ(at_bound->rows.size(), kMaxCatalogRows);

  absl::StatusOr<ParsedCatalog> too_big =
      ParsePriceCatalog(absl::StrCat(kHeader, std::string(kMaxCatalogBytes, '#')));
  EXPECT_EQ(too_big.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(too_big.status().message(), HasSubstr("more than the 1048576 allowed"));
}

TEST(PriceCatalogTest, EveryBadRowIsCountedAndTheFirstFiftyListed) {
  std::string csv = kHeader;
  for (int i = 0; i < 120; ++i) absl::StrAppend(&csv, "acme,us-east,h100x8,x,,USD,2025-01-01\n");
  ParsedCatalog parsed = Parse(csv);
  EXPECT_EQ(parsed.error_count, 120u);
  ASSERT_EQ(parsed.errors.size(), kMaxListedRowErrors);
  EXPECT_EQ(parsed.errors.back().line, 51u);
  const std::string described = DescribeRowErrors("prices.csv", parsed);
  EXPECT_THAT(described, StartsWith("prices.csv: 120 bad rows, nothing imported\n"
                                    "prices.csv:2: price_per_hour 'x' is not a number\n"));
  EXPECT_THAT(described, ::testing::EndsWith("\n... and 70 more"));
}

TEST(PriceCatalogTest, ThePriceInForceIsTheLatestRowAtOrBeforeTheTime) {
  ParsedCatalog parsed = Parse(absl::StrCat(kHeader, "acme,us-east,h100x8,24,,USD,2025-02-01\n",
                                            "acme,us-east,h100x8,26,,USD,2025-01-01\n"));
  const PriceCatalog catalog(parsed.rows);
  auto at = [&](int64_t ms) {
    return catalog.InForce("acme", "us-east", "h100x8", absl::FromUnixMillis(ms));
  };
  EXPECT_EQ(at(kJan - 1), nullptr);
  ASSERT_NE(at(kJan), nullptr);
  EXPECT_EQ(at(kJan)->price_per_hour(), 26);
  EXPECT_EQ(at(kFeb - 1)->price_per_hour(), 26);
  EXPECT_EQ(at(kFeb)->price_per_hour(), 24);
  EXPECT_EQ(catalog.InForce("acme", "us-east", "h100x8", absl::InfiniteFuture())
                ->price_per_hour(),
            24);
  EXPECT_EQ(catalog.InForce("acme", "us-west", "h100x8", absl::FromUnixMillis(kFeb)), nullptr);
  EXPECT_EQ(catalog.Earliest("acme", "us-east", "h100x8")->effective_from_unix_ms(), kJan);
}

}  // namespace
}  // namespace fleetbench::controller
