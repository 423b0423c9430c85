#include "common/value_sketch.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "common/stats.h"
#include "gtest/gtest.h"

namespace fleetbench {
namespace {

constexpr double kAlpha = ValueSketch::kRelativeAccuracy;
const double kQuantiles[] = {0, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 1};

ValueSketch SketchOf(const std::vector<double>& values) {
  ValueSketch s;
  for (double v : values) s.Add(v);
  return s;
}

// The documented bound: within α of the exact type-7 percentile when the
// two order statistics around its rank have the same sign (else within α
// of the larger magnitude).
void ExpectWithinBound(const std::vector<double>& values, const ValueSketch& sketch) {
  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  for (double q : kQuantiles) {
    const double exact = Percentile(values, q);
    const double rank = q * static_cast<double>(sorted.size() - 1);
    const size_t lo = static_cast<size_t>(std::floor(rank));
    const size_t hi = std::min(lo + 1, sorted.size() - 1);
    const double scale = std::max(std::fabs(sorted[lo]), std::fabs(sorted[hi]));
    const double got = sketch.Percentile(q);
    EXPECT_NEAR(got, exact, kAlpha * scale * (1 + 1e-9) + 1e-300)
        << "q=" << q << " of " << values.size() << " values";
  }
}

TEST(ValueSketchTest, EmptyIsZeroLikePercentileOfNothing) {
  ValueSketch s;
  EXPECT_TRUE(s.empty());
  EXPECT_EQ(s.count(), 0u);
  EXPECT_EQ(s.Percentile(0.5), 0);
  EXPECT_EQ(s.min(), 0);
  EXPECT_EQ(s.max(), 0);
}

TEST(ValueSketchTest, CountMinMaxExactAndNonFiniteLeftOut) {
  ValueSketch s;
  for (double v : {3.0, -2.0, 0.0, 7.5, std::nan(""), double{INFINITY}, -double{INFINITY}}) s.Add(v);
  EXPECT_EQ(s.count(), 4u);
  EXPECT_EQ(s.min(), -2.0);
  EXPECT_EQ(s.max(), 7.5);
  EXPECT_EQ(s.Percentile(0), -2.0);
  EXPECT_EQ(s.Percentile(1), 7.5);
}

TEST(ValueSketchTest, OneValueIsExact) {
  ValueSketch s = SketchOf({123.456});
  for (double q : kQuantiles) EXPECT_EQ(s.Percentile(q), 123.456);
}

TEST(ValueSketchTest, PercentilesWithinTheBoundOnManyShapes) {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> steady(100, 2);        // a benchmark's repeats
  std::lognormal_distribution<double> wide(0, 3);         // decades apart
  std::normal_distribution<double> around_zero(0, 1);     // both signs
  std::uniform_int_distribution<int> small_ints(0, 5);    // retransmits: many zeros
  for (int n : {2, 3, 10, 101, 1000, 20000}) {
    std::vector<double> a, b, c, d;
    for (int i = 0; i < n; ++i) {
      a.push_back(steady(rng));
      b.push_back(wide(rng));
      c.push_back(around_zero(rng));
      d.push_back(small_ints(rng));
    }
    for (const auto* values : {&a, &b, &c, &d}) {
      ExpectWithinBound(*values, SketchOf(*values));
    }
  }
}

TEST(ValueSketchTest, MergeIsTheSketchOfAllValues) {
  std::mt19937_64 rng(11);
  std::lognormal_distribution<double> wide(2, 2);
  std::vector<double> all;
  ValueSketch merged;
  // Seven "days" of one node, each its own sketch, merged in any order.
  for (int day = 0; day < 7; ++day) {
    std::vector<double> values;
    for (int i = 0; i < 50 + 30 * day; ++i) values.push_back(day % 2 ? wide(rng) : -wide(rng));
    all.insert(all.end(), values.begin(), values.end());
    ValueSketch day_sketch = SketchOf(values);
    if (day == 3) {
      day_sketch.Merge(merged);  // merging into the smaller one as well
      merged = day_sketch;
    } else {
      merged.Merge(day_sketch);
    }
  }
  const ValueSketch direct = SketchOf(all);
  EXPECT_EQ(merged.count(), all.size());
  EXPECT_EQ(merged.Encode(), direct.Encode());
  ExpectWithinBound(all, merged);
}

TEST(ValueSketchTest, EncodeDecodeRoundTrips) {
  std::mt19937_64 rng(3);
  std::normal_distribution<double> mixed(0, 50);
  std::vector<double> values;
  for (int i = 0; i < 500; ++i) values.push_back(i % 10 == 0 ? 0 : mixed(rng));
  const ValueSketch s = SketchOf(values);
  const std::string bytes = s.Encode();
  absl::StatusOr<ValueSketch> back = ValueSketch::Decode(bytes);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->Encode(), bytes);
  EXPECT_EQ(back->count(), s.count());
  for (double q : kQuantiles) EXPECT_EQ(back->Percentile(q), s.Percentile(q));
  // Compact: a steady day of a node is a few buckets.
  std::normal_distribution<double> steady(100, 1);
  std::vector<double> day;
  for (int i = 0; i < 200; ++i) day.push_back(steady(rng));
  EXPECT_LT(SketchOf(day).Encode().size(), 80u);
}

TEST(ValueSketchTest, DecodeRefusesWhatEncodeCannotWrite) {
  const std::string good = SketchOf({1, 2, 3, -4, 0}).Encode();
  for (size_t n = 0; n < good.size(); ++n) {
    EXPECT_FALSE(ValueSketch::Decode(good.substr(0, n)).ok()) << "prefix of " << n;
  }
  EXPECT_FALSE(ValueSketch::Decode(good + "x").ok());
  std::string bad_version = good;
  bad_version[0] = 9;
  EXPECT_FALSE(ValueSketch::Decode(bad_version).ok());
  // Random bytes: refused or decoded, never a crash or a huge allocation.
  std::mt19937_64 rng(5);
  for (int i = 0; i < 20000; ++i) {
    std::string junk(1 + rng() % 40, '\0');
    for (char& c : junk) c = static_cast<char>(rng());
    junk[0] = 1;
    absl::StatusOr<ValueSketch> s = ValueSketch::Decode(junk);
    if (s.ok()) {
      EXPECT_LE(s->min(), s->max());
      (void)s->Percentile(0.5);
    }
  }
}

TEST(ValueSketchTest, SpanBeyondTheCapKeepsTheHighPercentiles) {
  // 12 decades, past the cap's ~8.9: the smallest magnitudes share one
  // bucket; percentiles above them keep the bound, count/min/max stay exact.
  std::vector<double> values;
  for (int e = -60; e <= 60; ++e) values.push_back(std::pow(10.0, e / 10.0));
  const ValueSketch s = SketchOf(values);
  EXPECT_EQ(s.count(), values.size());
  EXPECT_EQ(s.min(), values.front());
  EXPECT_EQ(s.max(), values.back());
  EXPECT_LE(s.Encode().size(), 3 * static_cast<size_t>(ValueSketch::kMaxBuckets));
  for (double q : {0.5, 0.9, 0.99}) {
    const double exact = Percentile(values, q);
    EXPECT_NEAR(s.Percentile(q) / exact, 1, kAlpha * 1.0001) << q;
  }
  // The lowest percentiles are where the bound goes.
  EXPECT_GT(s.Percentile(0.01) / Percentile(values, 0.01), 1 + kAlpha);
}

}  // namespace
}  // namespace fleetbench
