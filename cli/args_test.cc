#include "cli/args.h"

#include "gtest/gtest.h"

namespace fleetbench::cli {
namespace {

const std::vector<FlagSpec> kFlags = {
    {"name", true, false, ""}, {"label", true, true, ""}, {"json", false, false, ""}};

TEST(ParseArgsTest, ValuesBooleansAndRepeats) {
  auto args = ParseArgs({"--name", "a", "--label=x=1", "--label", "y=2", "--json", "pos"}, kFlags);
  ASSERT_TRUE(args.ok()) << args.status();
  EXPECT_EQ(args->Get("name"), "a");
  EXPECT_EQ(args->All("label"), (std::vector<std::string>{"x=1", "y=2"}));
  EXPECT_TRUE(args->Has("json"));
  EXPECT_EQ(args->positional, std::vector<std::string>{"pos"});
}

TEST(ParseArgsTest, UsageErrors) {
  EXPECT_FALSE(ParseArgs({"--nope"}, kFlags).ok());
  EXPECT_FALSE(ParseArgs({"--name"}, kFlags).ok());           // missing value
  EXPECT_FALSE(ParseArgs({"--json=1"}, kFlags).ok());         // boolean with value
  EXPECT_FALSE(ParseArgs({"--name", "a", "--name", "b"}, kFlags).ok());  // not repeatable
  EXPECT_FALSE(ParseArgs({"--help"}, kFlags).ok());
}

TEST(KeyValueTest, SplitsAtTheFirstEquals) {
  auto kv = ParseKeyValue("price_per_hour=1.5");
  ASSERT_TRUE(kv.ok());
  EXPECT_EQ(kv->first, "price_per_hour");
  EXPECT_EQ(kv->second, "1.5");
  EXPECT_EQ(ParseKeyValue("a=b=c")->second, "b=c");
  EXPECT_FALSE(ParseKeyValue("novalue").ok());
  EXPECT_FALSE(ParseKeyValue("=x").ok());
}

TEST(SplitListTest, DropsEmpties) {
  EXPECT_EQ(SplitList("a,,b,"), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(SplitList("").empty());
}

// Regression: `--listen 127.0.0.1:99999` bound a random port and
// `agent --controller ::::` redialled forever.
TEST(HostPortTest, RefusesWhatCannotBeDialled) {
  for (const char* ok : {"127.0.0.1:7070", "ctl.example:7070", "[::1]:7070", "0.0.0.0:1",
                         "localhost:65535", "unix:/run/fb.sock"}) {
    EXPECT_TRUE(CheckHostPort("--controller", ok).ok()) << ok;
  }
  for (const char* bad : {"::::", "127.0.0.1:99999", "127.0.0.1", "127.0.0.1:", ":7070",
                          "host:port", "::1:7070", "[::1]", "[]:7070", "a b:7070",
                          "127.0.0.1:0", "127.0.0.1:-1", "unix:"}) {
    EXPECT_EQ(CheckHostPort("--controller", bad).code(), absl::StatusCode::kInvalidArgument)
        << bad;
  }
  EXPECT_TRUE(CheckHostPort("--listen", "127.0.0.1:0", /*allow_any_port=*/true).ok());
  EXPECT_NE(CheckHostPort("--listen", "127.0.0.1:99999", true).message().find("65535"),
            std::string::npos);
}

TEST(ControllerListTest, OneAddressOrALeaderAndItsStandbys) {
  auto one = ParseControllerList("--controller", "unix:/run/fb.sock");
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(*one, std::vector<std::string>{"unix:/run/fb.sock"});
  auto two = ParseControllerList("--controller", "ctl-a.example:7070, [::1]:7071");
  ASSERT_TRUE(two.ok()) << two.status();
  EXPECT_EQ(*two, (std::vector<std::string>{"ctl-a.example:7070", "[::1]:7071"}));
  for (const char* bad : {"a:1,a:1", "a:1,", ",a:1", "a:1,unix:/run/fb.sock", "a:1,b",
                          "a:1,b:2,c:3,d:4,e:5,f:6,g:7,h:8,i:9"}) {
    auto parsed = ParseControllerList("--controller", bad);
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(parsed.status().message().find("--controller"), std::string::npos) << bad;
  }
}

TEST(ParseArgsTest, ErrorsClipWhatTheyEcho) {
  const std::string huge(128 << 10, 'z');
  auto args = ParseArgs({"--" + huge}, kFlags);
  ASSERT_FALSE(args.ok());
  EXPECT_LT(args.status().message().size(), 100u);
  EXPECT_LT(ParseKeyValue(huge).status().message().size(), 100u);
}

TEST(WindowTest, DaysOrDurations) {
  EXPECT_EQ(*ParseWindow("7d"), absl::Hours(24 * 7));
  EXPECT_EQ(*ParseWindow("90m"), absl::Minutes(90));
  for (const char* bad : {"", "0d", "-1d", "d", "0s", "-5m", "soon", "3651d", "9223372036854775807d",
                          "100000h"}) {
    EXPECT_FALSE(ParseWindow(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace fleetbench::cli
