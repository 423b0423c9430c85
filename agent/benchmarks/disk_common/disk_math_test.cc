#include "agent/benchmarks/disk_common/disk_math.h"

#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/stats.h"
#include "common/units.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetbench::agent {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(DiskWorkloadsTest, TableIsTheDocumentedOne) {
  const std::vector<DiskWorkload>& all = AllDiskWorkloads();
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all[0].name, "seq_read");
  EXPECT_EQ(all[1].name, "seq_write");
  EXPECT_EQ(all[2].name, "rand_read_4k");
  EXPECT_EQ(all[3].name, "rand_write_4k");
  EXPECT_EQ(all[0].block_bytes, kMiB);
  EXPECT_EQ(all[2].block_bytes, 4096);
  EXPECT_EQ(all[0].iodepth, 8);
  EXPECT_EQ(all[3].iodepth, 32);
  EXPECT_EQ(all[0].rw, DiskRw::kRead);
  EXPECT_EQ(all[1].rw, DiskRw::kWrite);
  EXPECT_EQ(all[2].rw, DiskRw::kRandRead);
  EXPECT_EQ(all[3].rw, DiskRw::kRandWrite);
  EXPECT_TRUE(all[3].writes() && all[3].random());
  EXPECT_FALSE(all[0].writes() || all[0].random());
  EXPECT_EQ(FindDiskWorkload("rand_read_4k"), &all[2]);
  EXPECT_EQ(FindDiskWorkload("randread"), nullptr);
}

TEST(DiskWorkloadsTest, FioRwNamesRoundTrip) {
  for (const char* name : {"read", "write", "randread", "randwrite", "randrw"}) {
    DiskRw rw;
    ASSERT_TRUE(ParseDiskRw(name, &rw)) << name;
    EXPECT_STREQ(FioRwName(rw), name);
  }
  DiskRw rw;
  EXPECT_FALSE(ParseDiskRw("readwrite", &rw));
  EXPECT_FALSE(ParseDiskRw("", &rw));
  DiskWorkload mix{"custom", DiskRw::kRandRw, 4096, 8, 70};
  EXPECT_EQ(mix.ReadPercent(), 70);
  EXPECT_TRUE(mix.mixed() && mix.writes() && mix.random());
  EXPECT_EQ(AllDiskWorkloads()[0].ReadPercent(), 100);
  EXPECT_EQ(AllDiskWorkloads()[1].ReadPercent(), 0);
}

TEST(FioTest, BytesSyntax) {
  EXPECT_EQ(FioBytes(4096), "4k");
  EXPECT_EQ(FioBytes(16384), "16k");
  EXPECT_EQ(FioBytes(128 * 1024), "128k");
  EXPECT_EQ(FioBytes(kMiB), "1M");
  EXPECT_EQ(FioBytes(3 * kGiB), "3G");
  EXPECT_EQ(FioBytes(1000), "1000");
}

TEST(JobRegionTest, EqualAlignedRegions) {
  const int64_t file = 1024 * kMiB;
  FileRegion r0 = JobRegion(file, 3, 0, kMiB);
  FileRegion r2 = JobRegion(file, 3, 2, kMiB);
  EXPECT_EQ(r0.offset, 0);
  EXPECT_EQ(r0.bytes, 341 * kMiB);
  EXPECT_EQ(r2.offset, 682 * kMiB);
  EXPECT_LE(r2.offset + r2.bytes, file);
  EXPECT_EQ(JobRegion(file, 1, 0, kMiB).bytes, file);
  EXPECT_EQ(JobRegion(file, 0, 0, kMiB).bytes, 0);
}

TEST(OffsetTest, SequentialWrapsAtRegionEnd) {
  const FileRegion region{8 * kMiB, 4 * kMiB};
  EXPECT_EQ(SequentialOffset(region, kMiB, 0), 8 * kMiB);
  EXPECT_EQ(SequentialOffset(region, kMiB, 3), 11 * kMiB);
  EXPECT_EQ(SequentialOffset(region, kMiB, 4), 8 * kMiB);
  EXPECT_EQ(SequentialOffset(region, kMiB, 9), 9 * kMiB);
}

TEST(OffsetTest, RandomIsAlignedInsideAndUniform) {
  const FileRegion region{kMiB, 16 * 4096};
  EXPECT_EQ(RandomOffset(region, 4096, 0), kMiB);
  EXPECT_EQ(RandomOffset(region, 4096, ~uint64_t{0}), kMiB + 15 * 4096);
  std::map<int64_t, int> counts;
  uint64_t state = 1;
  constexpr int kDraws = 160000;
  for (int i = 0; i < kDraws; ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    const int64_t offset = RandomOffset(region, 4096, state);
    ASSERT_EQ(offset % 4096, 0);
    ASSERT_GE(offset, region.offset);
    ASSERT_LT(offset, region.offset + region.bytes);
    ++counts[offset];
  }
  ASSERT_EQ(counts.size(), 16u);
  for (const auto& [offset, count] : counts) {
    EXPECT_NEAR(count, kDraws / 16, kDraws / 16 / 10) << offset;
  }
}

TEST(RateTest, DecimalUnitsAndZeroTime) {
  EXPECT_DOUBLE_EQ(MegabytesPerSecond(5e6, 2), 2.5);
  EXPECT_DOUBLE_EQ(MegabytesPerSecond(5e6, 0), 0);
  EXPECT_DOUBLE_EQ(IopsFromCount(1000, 0.5), 2000);
  EXPECT_DOUBLE_EQ(IopsFromCount(1000, 0), 0);
}

TEST(LatencyHistogramTest, BucketsBoundValuesTightly) {
  for (uint64_t v :
       {uint64_t{0}, uint64_t{1}, uint64_t{255}, uint64_t{256}, uint64_t{257},
        uint64_t{511}, uint64_t{512}, uint64_t{12345}, uint64_t{1000000},
        uint64_t{987654321}, uint64_t{1} << 40, ~uint64_t{0}}) {
    const size_t b = LatencyHistogram::BucketOf(v);
    const uint64_t low = LatencyHistogram::BucketLow(b);
    EXPECT_LE(low, v) << v;
    if (v < 256) {
      EXPECT_EQ(low, v);
      EXPECT_DOUBLE_EQ(LatencyHistogram::BucketValue(b),
                       static_cast<double>(v));
    } else {
      EXPECT_LE(
          std::abs(LatencyHistogram::BucketValue(b) - static_cast<double>(v)) /
              static_cast<double>(v),
          1.0 / 128)
          << v;
      if (b + 1 < 7424) {
        EXPECT_GT(LatencyHistogram::BucketLow(b + 1), v) << v;
      }
    }
  }
  // Buckets are ordered.
  for (size_t b = 1; b < 7424; ++b) {
    ASSERT_GT(LatencyHistogram::BucketLow(b),
              LatencyHistogram::BucketLow(b - 1));
  }
}

TEST(LatencyHistogramTest, FioRuleOnExactValues) {
  LatencyHistogram h;
  EXPECT_DOUBLE_EQ(h.PercentileNanos(0.5), 0);
  for (uint64_t v = 1; v <= 100; ++v) h.Add(v);
  EXPECT_EQ(h.count(), 100u);
  EXPECT_DOUBLE_EQ(h.PercentileNanos(0.5), 50);
  EXPECT_DOUBLE_EQ(h.PercentileNanos(0.99), 99);
  EXPECT_DOUBLE_EQ(h.PercentileNanos(0.999), 100);
  EXPECT_DOUBLE_EQ(h.PercentileNanos(1.0), 100);
  EXPECT_DOUBLE_EQ(h.PercentileNanos(0.0), 1);
  EXPECT_DOUBLE_EQ(h.mean_nanos(), 50.5);
  EXPECT_EQ(h.max_nanos(), 100u);
}

TEST(LatencyHistogramTest, PercentilesWithinBucketPrecision) {
  LatencyHistogram a;
  LatencyHistogram b;
  std::vector<double> all;
  uint64_t state = 7;
  for (int i = 0; i < 200000; ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    // Log-uniform between 10 µs and 10 ms, like a disk's spread.
    const double u = static_cast<double>(state >> 11) * 0x1.0p-53;
    const uint64_t v = static_cast<uint64_t>(1e4 * std::pow(1e3, u));
    (i % 2 == 0 ? a : b).Add(v);
    all.push_back(static_cast<double>(v));
  }
  a.Merge(b);
  EXPECT_EQ(a.count(), all.size());
  for (double q : {0.5, 0.9, 0.99, 0.999}) {
    const double exact = Percentile(all, q);
    EXPECT_NEAR(a.PercentileNanos(q), exact, exact * 0.005) << q;
  }
}

TEST(FioTest, SecondsSyntax) {
  EXPECT_EQ(FioSeconds(10), "10");
  EXPECT_EQ(FioSeconds(0), "0");
  EXPECT_EQ(FioSeconds(0.2), "200ms");
  EXPECT_EQ(FioSeconds(2.5), "2500ms");
}

TEST(FioTest, EquivalentCommandCarriesTheSettings) {
  FioSettings s;
  s.file_bytes = 1024 * kMiB;
  s.jobs = 1;
  s.ramp_seconds = 2;
  s.runtime_seconds = 10;
  std::string cmd = FioEquivalentCommand(*FindDiskWorkload("rand_read_4k"), s);
  EXPECT_THAT(cmd, HasSubstr("--ioengine=io_uring --direct=1 --rw=randread "
                             "--bs=4k --iodepth=32 --numjobs=1 --size=1G"));
  EXPECT_THAT(cmd, HasSubstr("--time_based --runtime=10 --ramp_time=2"));
  EXPECT_THAT(cmd, HasSubstr("--norandommap --randrepeat=0"));
  EXPECT_THAT(cmd, Not(HasSubstr("offset_increment")));

  s.jobs = 4;
  s.direct = false;
  cmd = FioEquivalentCommand(*FindDiskWorkload("seq_write"), s);
  EXPECT_THAT(cmd, HasSubstr("--direct=0 --rw=write --bs=1M --iodepth=8 "
                             "--numjobs=4 --size=256M --offset_increment=256M "
                             "--group_reporting"));
  EXPECT_THAT(cmd, Not(HasSubstr("norandommap")));
  EXPECT_THAT(cmd, Not(HasSubstr("fsync")));
  EXPECT_THAT(cmd, Not(HasSubstr("rate")));
}

TEST(FioTest, EquivalentCommandOfACustomWorkload) {
  FioSettings s;
  s.file_bytes = 512 * kMiB;
  s.jobs = 2;
  s.ramp_seconds = 1;
  s.runtime_seconds = 5;
  s.rate_bytes = 50 * kMiB;
  DiskWorkload mix{"custom", DiskRw::kRandRw, 16384, 8, 70};
  std::string cmd = FioEquivalentCommand(mix, s);
  EXPECT_THAT(cmd, HasSubstr("--rw=randrw --rwmixread=70 --bs=16k "
                             "--iodepth=8 --numjobs=2 --size=256M"));
  EXPECT_THAT(cmd, HasSubstr("--rate=50M"));
  EXPECT_THAT(cmd, HasSubstr("--norandommap"));
  DiskWorkload synced{"custom", DiskRw::kWrite, 4096, 1, 50, 1};
  cmd = FioEquivalentCommand(synced, s);
  EXPECT_THAT(cmd, HasSubstr("--rw=write --bs=4k --iodepth=1"));
  EXPECT_THAT(cmd, HasSubstr("--fsync=1"));
  EXPECT_THAT(cmd, Not(HasSubstr("rwmixread")));
}

}  // namespace
}  // namespace fleetbench::agent
