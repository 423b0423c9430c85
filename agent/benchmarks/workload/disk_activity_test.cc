// DiskActivityMeter against the kernel's counters: the stat line's fields,
// and a real read past the page cache (O_DIRECT) seen on the device that
// holds the file. Folders without a block device are skipped.
#include "agent/benchmarks/workload/disk_activity.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "common/ulid.h"
#include "gtest/gtest.h"

namespace fleetbench::agent {
namespace {

TEST(DiskActivityTest, AStatLineGivesSectorsReadAndBusyTime) {
  // Linux 5.5+: 17 fields (discard and flush counters after the 11).
  auto c = ParseBlockStat(
      "   34800     6916  2945234     7957    17959    11640  6912912    13476        0     "
      "7924    24069     6388       31  3296952     1516     2453     1119");
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->read_sectors, 2945234u);
  EXPECT_EQ(c->io_ticks_ms, 7924u);
  // 2.6's 11 fields read the same.
  EXPECT_TRUE(ParseBlockStat("1 2 3 4 5 6 7 8 9 10 11").has_value());
  EXPECT_FALSE(ParseBlockStat("1 2 3").has_value());
  EXPECT_FALSE(ParseBlockStat("1 2 x 4 5 6 7 8 9 10 11").has_value());
}

TEST(DiskActivityTest, AReadPastThePageCacheShowsOnTheFilesDevice) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("disk_activity_" + NewUlid());
  std::filesystem::create_directories(dir);
  struct stat st {};
  ASSERT_EQ(stat(dir.c_str(), &st), 0);
  if (major(st.st_dev) == 0) {
    std::filesystem::remove_all(dir);
    GTEST_SKIP() << dir << " is on a file system without a block device: nothing to count";
  }
  constexpr size_t kBytes = 32 << 20;
  const std::string file = (dir / "data").string();
  {
    const int fd = open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ASSERT_GE(fd, 0);
    const std::string chunk(1 << 20, 'x');
    for (size_t n = 0; n < kBytes; n += chunk.size()) {
      ASSERT_EQ(write(fd, chunk.data(), chunk.size()), static_cast<ssize_t>(chunk.size()));
    }
    ASSERT_EQ(fsync(fd), 0);
    close(fd);
  }
  DiskActivityMeter meter({dir.string(), dir.string(), "/proc", ""});
  {
    const int fd = open(file.c_str(), O_RDONLY | O_DIRECT);
    ASSERT_GE(fd, 0) << "O_DIRECT";
    void* buffer = nullptr;
    ASSERT_EQ(posix_memalign(&buffer, 4096, 1 << 20), 0);
    size_t total = 0;
    ssize_t n = 0;
    while ((n = read(fd, buffer, 1 << 20)) > 0) total += static_cast<size_t>(n);
    free(buffer);
    close(fd);
    ASSERT_EQ(total, kBytes);
  }
  const std::vector<DiskActivity> activity = meter.Finish();
  std::filesystem::remove_all(dir);
  ASSERT_EQ(activity.size(), 1u) << "one device, counted once; /proc has none";
  EXPECT_FALSE(activity[0].device.empty());
  EXPECT_GE(activity[0].read_bytes, kBytes) << "at least what was read past the cache";
  EXPECT_GT(activity[0].read_MBps, 0);
  EXPECT_GT(activity[0].busy_pct, 0);
  EXPECT_LE(activity[0].busy_pct, 100);
}

}  // namespace
}  // namespace fleetbench::agent
