// Tests of the SQLite store's metric descriptors: stored and replaced by
// name, listed by name, refused whole when one is malformed, independent of
// whether the metric has samples.
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "fleetbench/v1/metric.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/store.h"
#include "storage/store_test_util.h"

namespace fleetbench::storage {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

v1::MetricDescriptor Descriptor(const std::string& name,
                                const std::string& unit,
                                v1::MetricDirection direction,
                                const std::string& description = "what it is",
                                const std::string& benchmark = "gemm") {
  v1::MetricDescriptor d;
  d.set_name(name);
  d.set_unit(unit);
  d.set_direction(direction);
  d.set_description(description);
  d.set_benchmark(benchmark);
  return d;
}

std::vector<std::string> Names(
    const std::vector<v1::MetricDescriptor>& descriptors) {
  std::vector<std::string> names;
  for (const auto& d : descriptors) names.push_back(d.name());
  return names;
}

TEST_P(StoreContractTest, MetricDescriptorsAreStoredByNameAndSurviveReopening) {
  ASSERT_TRUE(
      store_
          ->UpsertMetricDescriptors(
              {Descriptor("net.tcp.rtt_p50_us", "us",
                          v1::METRIC_DIRECTION_LOWER_IS_BETTER,
                          "TCP small-message round trip, median", "net"),
               Descriptor(kMetric, "tflops",
                          v1::METRIC_DIRECTION_HIGHER_IS_BETTER)})
          .ok());
  Reopen();
  auto rtt = store_->GetMetricDescriptor("net.tcp.rtt_p50_us");
  ASSERT_TRUE(rtt.ok()) << rtt.status();
  EXPECT_EQ(rtt->name(), "net.tcp.rtt_p50_us");
  EXPECT_EQ(rtt->unit(), "us");
  EXPECT_EQ(rtt->direction(), v1::METRIC_DIRECTION_LOWER_IS_BETTER);
  EXPECT_EQ(rtt->description(), "TCP small-message round trip, median");
  EXPECT_EQ(rtt->benchmark(), "net");
  auto all = store_->ListMetricDescriptors();
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_THAT(Names(*all), ElementsAre(kMetric, "net.tcp.rtt_p50_us"));
  EXPECT_TRUE(store_->CheckIntegrity().ok());
}

TEST_P(StoreContractTest, ANewerDeclarationReplacesTheDescriptor) {
  ASSERT_TRUE(
      store_
          ->UpsertMetricDescriptors({Descriptor(
              kMetric, "tflops", v1::METRIC_DIRECTION_HIGHER_IS_BETTER, "old")})
          .ok());
  ASSERT_TRUE(
      store_
          ->UpsertMetricDescriptors({Descriptor(
              kMetric, "tflops", v1::METRIC_DIRECTION_HIGHER_IS_BETTER, "new")})
          .ok());
  auto d = store_->GetMetricDescriptor(kMetric);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->description(), "new");
  EXPECT_EQ(store_->ListMetricDescriptors()->size(), 1u);
}

TEST_P(StoreContractTest, SamplesBeforeAndAfterADeclarationShareTheMetric) {
  AddNodeAndRun("n1", "r1");
  Store::ReportWrite before;
  before.samples = {MakeSample("s1", "r1", "n1", kMetric, 1.5, 1)};
  ASSERT_EQ(*store_->CommitReports({before}), 1);
  // Samples alone declare nothing.
  EXPECT_EQ(store_->GetMetricDescriptor(kMetric).status().code(),
            absl::StatusCode::kNotFound);
  ASSERT_TRUE(
      store_
          ->UpsertMetricDescriptors({Descriptor(
              kMetric, "tflops", v1::METRIC_DIRECTION_HIGHER_IS_BETTER)})
          .ok());
  Store::ReportWrite after;
  after.samples = {MakeSample("s2", "r1", "n1", kMetric, 2.5, 2)};
  ASSERT_EQ(*store_->CommitReports({after}), 1);
  auto table = store_->MetricPointTableSince(kMetric, absl::InfinitePast());
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_EQ(table->points.size(), 2u);
  EXPECT_TRUE(store_->CheckIntegrity().ok());
}

TEST_P(StoreContractTest, AMalformedDescriptorStoresNothingOfTheCall) {
  const v1::MetricDescriptor good =
      Descriptor(kMetric, "tflops", v1::METRIC_DIRECTION_HIGHER_IS_BETTER);
  for (const v1::MetricDescriptor& bad :
       {Descriptor("", "tflops", v1::METRIC_DIRECTION_HIGHER_IS_BETTER),
        Descriptor("x.y.us", "", v1::METRIC_DIRECTION_LOWER_IS_BETTER),
        Descriptor("x.y.us", "us", v1::METRIC_DIRECTION_LOWER_IS_BETTER, "d",
                   ""),
        Descriptor("x.y.us", "us", v1::METRIC_DIRECTION_UNSPECIFIED)}) {
    absl::Status s = store_->UpsertMetricDescriptors({good, bad});
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument)
        << bad.DebugString();
  }
  EXPECT_THAT(store_
                  ->UpsertMetricDescriptors({Descriptor(
                      "x.y.us", "us", v1::METRIC_DIRECTION_UNSPECIFIED)})
                  .message(),
              HasSubstr("x.y.us"));
  EXPECT_TRUE(store_->ListMetricDescriptors()->empty());
}

TEST_P(StoreContractTest, AnUndeclaredMetricIsNotFound) {
  auto d = store_->GetMetricDescriptor("no.such.metric_tflops");
  EXPECT_EQ(d.status().code(), absl::StatusCode::kNotFound) << d.status();
  EXPECT_THAT(d.status().message(), HasSubstr("no.such.metric_tflops"));
}

}  // namespace
}  // namespace fleetbench::storage
