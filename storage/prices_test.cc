// Tests of the SQLite store's price catalog: rows stored with their dates and
// read back in key order, re-imports counted, a bad row or a full disk
// leaving nothing of the import behind.
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "fleetbench/v1/price.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/sqlite_store.h"
#include "storage/store.h"
#include "storage/store_test_util.h"

namespace fleetbench::storage {
namespace {

using ::testing::HasSubstr;

const int64_t kJan = 1'735'689'600'000;  // 2025-01-01T00:00:00Z
const int64_t kFeb = 1'738'368'000'000;  // 2025-02-01T00:00:00Z

v1::CatalogPrice Price(const std::string& type, int64_t from_ms, double price,
                       std::optional<double> spot = std::nullopt,
                       const std::string& currency = "USD") {
  v1::CatalogPrice p;
  p.set_provider("acme");
  p.set_region("us-east");
  p.set_instance_type(type);
  p.set_effective_from_unix_ms(from_ms);
  p.set_price_per_hour(price);
  if (spot) p.set_spot_price_per_hour(*spot);
  p.set_currency(currency);
  return p;
}

TEST_P(StoreContractTest, PricesAreStoredWithTheirDatesAndSurviveReopening) {
  auto counts = store_->ImportPrices(
      {Price("h100x8", kFeb, 24.5, 9.8), Price("h100x8", kJan, 26), Price("a10", kJan, 1.1)},
      kT0);
  ASSERT_TRUE(counts.ok()) << counts.status();
  EXPECT_EQ(counts->added, 3);
  EXPECT_EQ(counts->replaced, 0);
  Reopen();
  auto prices = store_->ListPrices();
  ASSERT_TRUE(prices.ok()) << prices.status();
  ASSERT_EQ(prices->size(), 3u);
  // By offer, then date.
  EXPECT_EQ((*prices)[0].instance_type(), "a10");
  EXPECT_EQ((*prices)[1].effective_from_unix_ms(), kJan);
  EXPECT_FALSE((*prices)[1].has_spot_price_per_hour());
  EXPECT_EQ((*prices)[1].price_per_hour(), 26);
  EXPECT_EQ((*prices)[2].effective_from_unix_ms(), kFeb);
  EXPECT_EQ((*prices)[2].spot_price_per_hour(), 9.8);
  EXPECT_EQ((*prices)[2].currency(), "USD");
  EXPECT_EQ((*prices)[2].imported_unix_ms(), absl::ToUnixMillis(kT0));
  EXPECT_TRUE(store_->CheckIntegrity().ok());
}

TEST_P(StoreContractTest, ReimportingCountsUnchangedReplacedAndAddedRowsAndKeepsTheRest) {
  ASSERT_TRUE(store_->ImportPrices({Price("h100x8", kJan, 26), Price("a10", kJan, 1.1)}, kT0).ok());
  auto same = store_->ImportPrices({Price("h100x8", kJan, 26), Price("a10", kJan, 1.1)},
                                   kT0 + absl::Hours(1));
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_EQ(same->unchanged, 2);
  EXPECT_EQ(same->added + same->replaced, 0);
  // A correction of one row and a new date for the other offer; the file
  // no longer lists a10 at all, and a10 stays.
  auto next = store_->ImportPrices({Price("h100x8", kJan, 25, 10), Price("h100x8", kFeb, 24)},
                                   kT0 + absl::Hours(2));
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_EQ(next->replaced, 1);
  EXPECT_EQ(next->added, 1);
  auto prices = store_->ListPrices();
  ASSERT_TRUE(prices.ok()) << prices.status();
  ASSERT_EQ(prices->size(), 3u);
  EXPECT_EQ((*prices)[0].instance_type(), "a10");
  EXPECT_EQ((*prices)[0].imported_unix_ms(), absl::ToUnixMillis(kT0));  // untouched
  EXPECT_EQ((*prices)[1].price_per_hour(), 25);
  EXPECT_EQ((*prices)[1].spot_price_per_hour(), 10);
  EXPECT_EQ((*prices)[1].imported_unix_ms(), absl::ToUnixMillis(kT0 + absl::Hours(2)));
  EXPECT_EQ((*prices)[2].price_per_hour(), 24);
}

TEST_P(StoreContractTest, ABadPriceStoresNothingOfTheImport) {
  const v1::CatalogPrice good = Price("h100x8", kJan, 26);
  v1::CatalogPrice no_provider = Price("a10", kJan, 1);
  no_provider.clear_provider();
  for (const v1::CatalogPrice& bad :
       {no_provider, Price("a10", kJan, 0), Price("a10", kJan, -1),
        Price("a10", kJan, std::nan("")), Price("a10", kJan, 1, 0.0),
        Price("a10", kJan, 1, std::nullopt, "usd"), Price("a10", kJan, 1, std::nullopt, "EURO"),
        good /* the same key twice */}) {
    auto counts = store_->ImportPrices({good, bad}, kT0);
    EXPECT_EQ(counts.status().code(), absl::StatusCode::kInvalidArgument) << bad.DebugString();
    EXPECT_TRUE(store_->ListPrices()->empty()) << bad.DebugString();
  }
  EXPECT_THAT(store_->ImportPrices({good, good}, kT0).status().message(),
              HasSubstr("acme/us-east/h100x8 from 2025-01-01T00:00:00+00:00 is given twice"));
}

TEST(PriceStoreFaultTest, AFullDiskStoresNothingOfTheImportAndKeepsEarlierRows) {
  TempDir dir;
  SqliteOptions options;
  options.path = dir.File("full.db");
  options.max_page_count = 60;
  auto store = OpenSqliteStore(options);
  ASSERT_TRUE(store.ok()) << store.status();
  ASSERT_TRUE((*store)->ImportPrices({Price("a10", kJan, 1.1)}, kT0).ok());
  std::vector<v1::CatalogPrice> many;
  for (int i = 0; i < 10000; ++i) {
    many.push_back(Price(absl::StrCat("type-with-a-long-name-", i), kJan, 1 + i));
  }
  auto counts = (*store)->ImportPrices(many, kT0);
  ASSERT_EQ(counts.status().code(), absl::StatusCode::kResourceExhausted) << counts.status();
  auto prices = (*store)->ListPrices();
  ASSERT_TRUE(prices.ok()) << prices.status();
  ASSERT_EQ(prices->size(), 1u);
  EXPECT_EQ((*prices)[0].instance_type(), "a10");
  EXPECT_TRUE((*store)->CheckIntegrity().ok());
}

}  // namespace
}  // namespace fleetbench::storage
