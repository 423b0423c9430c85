#include "agent/benchmarks/pairwise/tcp_socket.h"

#include "gtest/gtest.h"

namespace fleetbench::agent::pairwise {
namespace {

TEST(HostPortTest, ParsesNamesV4AndBracketedV6) {
  absl::StatusOr<HostPort> a = ParseHostPort("10.0.0.5:5201");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->host, "10.0.0.5");
  EXPECT_EQ(a->port, 5201);
  absl::StatusOr<HostPort> b = ParseHostPort("node-7.example:80");
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->host, "node-7.example");
  absl::StatusOr<HostPort> c = ParseHostPort("[fe80::1]:9000");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->host, "fe80::1");
  EXPECT_EQ(c->port, 9000);
  EXPECT_EQ(FormatHostPort("fe80::1", 9000), "[fe80::1]:9000");
  EXPECT_EQ(FormatHostPort("10.0.0.5", 1), "10.0.0.5:1");
}

TEST(HostPortTest, RejectsWhatCannotBeDialled) {
  for (const char* bad :
       {"", "host", "host:", ":80", "host:0", "host:65536", "host:http",
        "fe80::1:80", "[fe80::1]80", "[fe80::1"}) {
    absl::StatusOr<HostPort> p = ParseHostPort(bad);
    EXPECT_TRUE(absl::IsInvalidArgument(p.status())) << bad;
  }
}

}  // namespace
}  // namespace fleetbench::agent::pairwise
