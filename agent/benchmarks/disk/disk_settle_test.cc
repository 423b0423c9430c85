#include "agent/benchmarks/disk/disk_settle.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace fleetbench::agent::disk {
namespace {

TEST(ParseInflightTest, SumsReadsAndWrites) {
  EXPECT_EQ(ParseInflight("       0        0\n"), 0);
  EXPECT_EQ(ParseInflight("       2       31\n"), 33);
  EXPECT_EQ(ParseInflight("4 5"), 9);
}

TEST(ParseInflightTest, RefusesAnythingElse) {
  EXPECT_EQ(ParseInflight(""), std::nullopt);
  EXPECT_EQ(ParseInflight("1"), std::nullopt);
  EXPECT_EQ(ParseInflight("1 2 3"), std::nullopt);
  EXPECT_EQ(ParseInflight("a b"), std::nullopt);
  EXPECT_EQ(ParseInflight("-1 0"), std::nullopt);
}

// A block-device folder with an `inflight` file the test writes, standing in
// for /sys/block/DEV (whose counts this machine's disk decides).
class SettleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/fb-settle-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    fd_ = open((dir_ + "/file").c_str(), O_CREAT | O_RDWR, 0600);
    ASSERT_GE(fd_, 0);
  }
  void TearDown() override {
    close(fd_);
    std::filesystem::remove_all(dir_);
  }
  void Inflight(const std::string& text) { std::ofstream(dir_ + "/inflight") << text; }

  std::string dir_;
  int fd_ = -1;
  SettleOptions fast_{.quiet_readings = 3,
                      .poll_interval = absl::Milliseconds(1),
                      .max_wait = absl::Milliseconds(50)};
};

TEST_F(SettleTest, QuietDeviceSettles) {
  Inflight("0 0\n");
  // A quiet device settles after three readings, however long the bound:
  // a generous one keeps a loaded machine's slow readings from failing it.
  SettleOptions generous = fast_;
  generous.max_wait = absl::Seconds(30);
  SettleResult r = SettleDevice(fd_, dir_, generous, nullptr);
  EXPECT_TRUE(r.settled) << r.note;
  EXPECT_EQ(r.note, "");
}

TEST_F(SettleTest, BusyDeviceIsWaitedForUpToTheBoundAndSaysSo) {
  Inflight("0 7\n");
  SettleResult r = SettleDevice(fd_, dir_, fast_, nullptr);
  EXPECT_FALSE(r.settled);
  EXPECT_GE(r.waited, fast_.max_wait);
  EXPECT_NE(r.note.find("7 I/Os still in flight"), std::string::npos) << r.note;
}

TEST_F(SettleTest, UnreadableOrUnknownDeviceOnlyFlushes) {
  SettleResult missing = SettleDevice(fd_, dir_ + "/nope", fast_, nullptr);
  EXPECT_FALSE(missing.settled);
  EXPECT_NE(missing.note.find("cannot read"), std::string::npos) << missing.note;
  SettleResult unknown = SettleDevice(fd_, "", fast_, nullptr);
  EXPECT_FALSE(unknown.settled);
  EXPECT_NE(unknown.note.find("device unknown"), std::string::npos) << unknown.note;
}

TEST_F(SettleTest, CancelReturnsAtOnce) {
  Inflight("3 3\n");
  SettleOptions slow = fast_;
  slow.max_wait = absl::Hours(1);
  SettleResult r = SettleDevice(fd_, dir_, slow, [] { return true; });
  EXPECT_FALSE(r.settled);
  EXPECT_EQ(r.note, "cancelled");
  EXPECT_LT(r.waited, absl::Seconds(10));
}

}  // namespace
}  // namespace fleetbench::agent::disk
