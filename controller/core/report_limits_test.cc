#include "controller/core/report_limits.h"

#include <cmath>

#include "common/ulid.h"
#include "gtest/gtest.h"

namespace fleetbench::controller {
namespace {

v1::Report GoodReport() {
  v1::Report r;
  r.set_report_id(NewUlid());
  v1::Sample* s = r.add_samples();
  s->set_id(NewUlid());
  s->set_benchmark("gemm");
  s->set_metric("gemm.cpu.fp32.tflops");
  s->set_value(1.5);
  s->set_unit("tflops");
  return r;
}

TEST(ReportLimitsTest, AcceptsAWellFormedReport) {
  EXPECT_TRUE(CheckReportBounds(GoodReport()).ok());
}

TEST(ReportLimitsTest, RejectsBadIdsNamesAndValues) {
  v1::Report r = GoodReport();
  r.set_report_id("not-a-ulid");
  EXPECT_EQ(CheckReportBounds(r).code(), absl::StatusCode::kInvalidArgument);

  r = GoodReport();
  r.mutable_samples(0)->set_id("x");
  EXPECT_EQ(CheckReportBounds(r).code(), absl::StatusCode::kInvalidArgument);

  r = GoodReport();
  r.mutable_samples(0)->set_metric("DROP TABLE samples;");
  EXPECT_EQ(CheckReportBounds(r).code(), absl::StatusCode::kInvalidArgument);

  r = GoodReport();
  r.mutable_samples(0)->set_value(std::numeric_limits<double>::quiet_NaN());
  EXPECT_EQ(CheckReportBounds(r).code(), absl::StatusCode::kInvalidArgument);

  r = GoodReport();
  (*r.mutable_samples(0)->mutable_params())["k"] = std::string(kMaxParamLength + 1, 'v');
  EXPECT_EQ(CheckReportBounds(r).code(), absl::StatusCode::kInvalidArgument);
}

TEST(ReportLimitsTest, BoundsSampleCount) {
  v1::Report r = GoodReport();
  for (int i = 0; i < kMaxSamplesPerReport; ++i) *r.add_samples() = r.samples(0);
  EXPECT_EQ(CheckReportBounds(r).code(), absl::StatusCode::kInvalidArgument);
}

TEST(MetricNameTest, NeedsAUnitComponent) {
  EXPECT_TRUE(IsValidMetricName("gemm.cpu.fp32.tflops"));
  EXPECT_TRUE(IsValidMetricName("disk.seq_read.MBps"));
  EXPECT_FALSE(IsValidMetricName("tflops"));
  EXPECT_FALSE(IsValidMetricName(".a.b"));
  EXPECT_FALSE(IsValidMetricName("a b.c"));
}

TEST(ReportLimitsTest, DropRefusedSamplesKeepsTheGoodOnesInOrder) {
  v1::Report r = GoodReport();
  for (double v : {2.0, std::nan(""), 3.0}) {
    v1::Sample* s = r.add_samples();
    *s = r.samples(0);
    s->set_id(NewUlid());
    s->set_value(v);
  }
  r.mutable_samples(3)->set_metric("no dots");  // the 3.0 one
  const std::string refused = DropRefusedSamples(&r);
  EXPECT_EQ(refused, "2 of 4 samples refused; sample 2: value is not finite");
  ASSERT_EQ(r.samples_size(), 2);
  EXPECT_EQ(r.samples(0).value(), 1.5);
  EXPECT_EQ(r.samples(1).value(), 2.0);
  EXPECT_TRUE(CheckReportBounds(r).ok());
}

TEST(ReportLimitsTest, DropRefusedSamplesLeavesAGoodReportAlone) {
  v1::Report r = GoodReport();
  EXPECT_EQ(DropRefusedSamples(&r), "");
  EXPECT_EQ(r.samples_size(), 1);
}

TEST(ReportLimitsTest, EnvelopeIgnoresSamples) {
  v1::Report r = GoodReport();
  r.mutable_samples(0)->set_value(std::nan(""));
  EXPECT_TRUE(CheckReportEnvelope(r).ok());
  EXPECT_FALSE(CheckReportBounds(r).ok());
}

TEST(ReportLimitsTest, ATaskLogComesOnlyOnTheFinalReportWithinItsBound) {
  v1::Report r = GoodReport();
  r.set_task_log("epoch 1\n");
  EXPECT_FALSE(CheckReportEnvelope(r).ok()) << "not a final report";
  r.set_task_finished(true);
  r.set_task_state(v1::TASK_STATE_SUCCEEDED);
  EXPECT_TRUE(CheckReportEnvelope(r).ok());
  r.set_task_log(std::string(kMaxTaskLogBytes + 1, 'x'));
  EXPECT_FALSE(CheckReportEnvelope(r).ok());
  ClampReportEnvelope(&r);
  EXPECT_TRUE(r.task_log().empty()) << "a refused envelope's log is not kept";
}

v1::Capability GoodCapability() {
  v1::Capability c;
  c.set_benchmark("net");
  v1::MetricDescriptor* m = c.add_metrics();
  m->set_name("net.tcp.rtt_p50_us");
  m->set_unit("us");
  m->set_direction(v1::METRIC_DIRECTION_LOWER_IS_BETTER);
  m->set_description("TCP small-message round trip, median");
  m->set_benchmark("net");
  return c;
}

TEST(DeclaredMetricsTest, AcceptsWellFormedDescriptors) {
  EXPECT_TRUE(CheckDeclaredMetrics(GoodCapability()).ok());
  v1::Capability c = GoodCapability();
  c.mutable_metrics(0)->clear_benchmark();  // the capability's, then
  EXPECT_TRUE(CheckDeclaredMetrics(c).ok());
}

TEST(DeclaredMetricsTest, RejectsWhatTheStoreOrRankingCouldNotUse) {
  auto check = [](void (*spoil)(v1::MetricDescriptor*)) {
    v1::Capability c = GoodCapability();
    spoil(c.mutable_metrics(0));
    return CheckDeclaredMetrics(c);
  };
  EXPECT_EQ(check([](v1::MetricDescriptor* m) { m->set_name("no unit"); }).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(check([](v1::MetricDescriptor* m) { m->clear_unit(); }).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(check([](v1::MetricDescriptor* m) { m->set_unit(std::string(33, 'u')); }).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(check([](v1::MetricDescriptor* m) { m->clear_direction(); }).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      check([](v1::MetricDescriptor* m) { m->set_description(std::string(257, 'd')); }).code(),
      absl::StatusCode::kInvalidArgument);
  const absl::Status other = check([](v1::MetricDescriptor* m) { m->set_benchmark("gemm"); });
  EXPECT_EQ(other.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(other.message().find("net.tcp.rtt_p50_us"), std::string::npos) << other;

  v1::Capability many = GoodCapability();
  for (int i = 0; i < kMaxMetricsPerCapability; ++i) *many.add_metrics() = many.metrics(0);
  EXPECT_EQ(CheckDeclaredMetrics(many).code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace fleetbench::controller
