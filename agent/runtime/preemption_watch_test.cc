// The preemption notice sources: a file that appears, an HTTP endpoint
// (a real server on loopback answering as the clouds' metadata services
// do), a program's exit status; and the termination time in their text.
#include "agent/runtime/preemption_watch.h"

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "common/ulid.h"
#include "gtest/gtest.h"
#include "httplib.h"

namespace fleetbench::agent {
namespace {

TEST(PreemptionWatchTest, RefusesSourcesItCannotWatch) {
  for (const char* bad : {"", "spot", "file:relative/path", "url:https://x/y", "url:http://:80/",
                          "url:http://h:0/", "url:http://h:99999/", "cmd:", "cmd:sh -c x"}) {
    auto watch = PreemptionWatch::Parse(bad);
    EXPECT_TRUE(absl::IsInvalidArgument(watch.status())) << bad;
    EXPECT_NE(watch.status().message().find("--preemption-notice"), std::string::npos);
  }
}

TEST(PreemptionWatchTest, AFileThatAppears) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("notice_" + NewUlid())).string();
  auto watch = PreemptionWatch::Parse("file:" + path);
  ASSERT_TRUE(watch.ok()) << watch.status();
  EXPECT_FALSE((*watch)->Check().has_value());
  std::ofstream(path) << R"({"action": "terminate", "time": "2027-01-15T08:02:00Z"})";
  std::optional<PreemptionNotice> notice = (*watch)->Check();
  ASSERT_TRUE(notice.has_value());
  EXPECT_EQ(notice->source, "file:" + path);
  EXPECT_EQ(notice->termination, absl::FromUnixSeconds(1800000120));
  std::filesystem::remove(path);
}

TEST(PreemptionWatchTest, AMetadataEndpointThatAnswers404ThenANotice) {
  httplib::Server server;
  absl::Mutex mu;
  int status = 404;
  std::string body;
  server.Get("/latest/meta-data/spot/instance-action",
             [&](const httplib::Request&, httplib::Response& res) {
               absl::MutexLock lock(&mu);
               res.status = status;
               res.set_content(body, "text/plain");
             });
  const int port = server.bind_to_any_port("127.0.0.1");
  std::thread serving([&] { server.listen_after_bind(); });
  // Bound and listening already: a client connects before the accept loop runs.
  auto watch = PreemptionWatch::Parse(
      "url:http://127.0.0.1:" + std::to_string(port) + "/latest/meta-data/spot/instance-action");
  ASSERT_TRUE(watch.ok()) << watch.status();
  EXPECT_FALSE((*watch)->Check().has_value());
  {
    absl::MutexLock lock(&mu);
    status = 200;
    body = "FALSE\n";  // how a preemptible VM's metadata says "not yet"
  }
  EXPECT_FALSE((*watch)->Check().has_value());
  {
    absl::MutexLock lock(&mu);
    body = R"({"action": "stop", "time": "2027-01-15T08:02:00.000Z"})";
  }
  std::optional<PreemptionNotice> notice = (*watch)->Check();
  ASSERT_TRUE(notice.has_value());
  EXPECT_EQ(notice->termination, absl::FromUnixSeconds(1800000120));
  server.stop();
  serving.join();
  // An endpoint gone is no notice.
  EXPECT_FALSE((*watch)->Check().has_value());
}

TEST(PreemptionWatchTest, AProgramThatExitsZero) {
  auto no = PreemptionWatch::Parse("cmd:/bin/false");
  ASSERT_TRUE(no.ok());
  EXPECT_FALSE((*no)->Check().has_value());
  auto yes = PreemptionWatch::Parse("cmd:/bin/echo TRUE 2027-01-15T08:02:00Z");
  ASSERT_TRUE(yes.ok());
  std::optional<PreemptionNotice> notice = (*yes)->Check();
  ASSERT_TRUE(notice.has_value());
  EXPECT_EQ(notice->termination, absl::FromUnixSeconds(1800000120));
  // One that does not end in time is killed and gives no notice.
  auto stuck = PreemptionWatch::Parse("cmd:/bin/sleep 600", absl::Milliseconds(200));
  ASSERT_TRUE(stuck.ok());
  EXPECT_FALSE((*stuck)->Check().has_value());
  auto missing = PreemptionWatch::Parse("cmd:/nonexistent/program");
  ASSERT_TRUE(missing.ok());
  EXPECT_FALSE((*missing)->Check().has_value());
}

TEST(PreemptionWatchTest, TerminationTimeInWhateverWrapsIt) {
  EXPECT_EQ(TerminationTimeIn("TRUE"), absl::InfinitePast());
  EXPECT_EQ(TerminationTimeIn("2027-01-15T08:02:00"), absl::InfinitePast()) << "no zone";
  EXPECT_EQ(TerminationTimeIn("NotBefore: 2027-01-15T08:02:00Z"),
            absl::FromUnixSeconds(1800000120));
  EXPECT_EQ(TerminationTimeIn("1999-99-99T99:99:99Z then 2027-01-15T08:02:00Z"),
            absl::FromUnixSeconds(1800000120));
}

}  // namespace
}  // namespace fleetbench::agent
