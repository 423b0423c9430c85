#include "agent/runtime/reconnect_backoff.h"

#include "gtest/gtest.h"

namespace fleetbench::agent {
namespace {

ReconnectBackoffOptions Options() {
  ReconnectBackoffOptions o;
  o.initial = absl::Milliseconds(200);
  o.max = absl::Seconds(30);
  o.reset_after = absl::Seconds(5);
  return o;
}

// The upper end of the jitter: the wait is the whole backoff.
ReconnectBackoff::UnitRandom Always(double unit) {
  return [unit] { return unit; };
}

TEST(ReconnectBackoffTest, FailedDialsDoubleUpToTheMaximum) {
  ReconnectBackoff b(Options(), Always(1.0));
  EXPECT_EQ(b.NextWait(false, absl::ZeroDuration()), absl::Milliseconds(200));
  EXPECT_EQ(b.NextWait(false, absl::ZeroDuration()), absl::Milliseconds(400));
  EXPECT_EQ(b.NextWait(false, absl::ZeroDuration()), absl::Milliseconds(800));
  for (int i = 0; i < 20; ++i) b.NextWait(false, absl::ZeroDuration());
  EXPECT_EQ(b.NextWait(false, absl::ZeroDuration()), absl::Seconds(30));
}

TEST(ReconnectBackoffTest, HealthySessionStartsOver) {
  ReconnectBackoff b(Options(), Always(1.0));
  for (int i = 0; i < 20; ++i) b.NextWait(false, absl::ZeroDuration());
  ASSERT_EQ(b.backoff(), absl::Seconds(30));
  // The regression: a long session that ended with an error (the controller
  // went away) must still reset.
  EXPECT_EQ(b.NextWait(true, absl::Hours(3)), absl::Milliseconds(200));
  // The redials after it double again from the start.
  EXPECT_EQ(b.NextWait(false, absl::ZeroDuration()), absl::Milliseconds(400));
}

TEST(ReconnectBackoffTest, ExactlyResetAfterIsHealthy) {
  ReconnectBackoff b(Options(), Always(1.0));
  for (int i = 0; i < 5; ++i) b.NextWait(false, absl::ZeroDuration());
  EXPECT_EQ(b.NextWait(true, absl::Seconds(5)), absl::Milliseconds(200));
}

TEST(ReconnectBackoffTest, ShortWelcomedSessionKeepsDoubling) {
  // A controller that welcomes and drops at once (crash loop) must not be
  // hammered at the initial backoff.
  ReconnectBackoff b(Options(), Always(1.0));
  EXPECT_EQ(b.NextWait(true, absl::Seconds(1)), absl::Milliseconds(200));
  EXPECT_EQ(b.NextWait(true, absl::Seconds(1)), absl::Milliseconds(400));
  EXPECT_EQ(b.NextWait(true, absl::Milliseconds(4999)), absl::Milliseconds(800));
}

TEST(ReconnectBackoffTest, LengthWithoutWelcomeDoesNotReset) {
  ReconnectBackoff b(Options(), Always(1.0));
  b.NextWait(false, absl::ZeroDuration());
  EXPECT_EQ(b.NextWait(false, absl::Hours(1)), absl::Milliseconds(400));
}

TEST(ReconnectBackoffTest, JitterSpansHalfToAllOfTheBackoff) {
  ReconnectBackoff low(Options(), Always(0.0));
  EXPECT_EQ(low.NextWait(false, absl::ZeroDuration()), absl::Milliseconds(100));
  EXPECT_EQ(low.NextWait(false, absl::ZeroDuration()), absl::Milliseconds(200));
  ReconnectBackoff mid(Options(), Always(0.5));
  EXPECT_EQ(mid.NextWait(false, absl::ZeroDuration()), absl::Milliseconds(150));
  // Out-of-range sources are clamped into the band.
  ReconnectBackoff wild(Options(), Always(7.0));
  EXPECT_EQ(wild.NextWait(false, absl::ZeroDuration()), absl::Milliseconds(200));
  ReconnectBackoff negative(Options(), Always(-3.0));
  EXPECT_EQ(negative.NextWait(false, absl::ZeroDuration()), absl::Milliseconds(100));
}

TEST(ReconnectBackoffTest, DefaultRandomSourceStaysInTheBand) {
  ReconnectBackoff b(Options());
  for (int i = 0; i < 1000; ++i) {
    const absl::Duration wait = b.NextWait(true, absl::Seconds(10));
    ASSERT_GE(wait, absl::Milliseconds(100));
    ASSERT_LE(wait, absl::Milliseconds(200));
  }
}

}  // namespace
}  // namespace fleetbench::agent
