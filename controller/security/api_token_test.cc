// The token text: fresh tokens parse back, anything else is malformed
// without being quoted; hashes compare by value; names are bounded.
#include "controller/security/api_token.h"
#include "controller/security/auth.h"

#include <set>
#include <string>

#include "gtest/gtest.h"

namespace fleetbench::controller {
namespace {

TEST(ApiTokenTest, AFreshTokenParsesBackAndTokensDiffer) {
  std::set<std::string> seen;
  for (int i = 0; i < 50; ++i) {
    absl::StatusOr<ApiTokenText> t = NewApiToken();
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_EQ(t->text.rfind(kApiTokenPrefix, 0), 0u);
    EXPECT_EQ(t->id.size(), kApiTokenIdHex);
    EXPECT_EQ(t->secret.size(), kApiTokenSecretHex);
    absl::StatusOr<ApiTokenText> back = ParseApiToken(t->text);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(back->id, t->id);
    EXPECT_EQ(back->secret, t->secret);
    EXPECT_TRUE(seen.insert(t->text).second);
  }
}

TEST(ApiTokenTest, MalformedTokensAreRefusedWithoutQuotingThem) {
  absl::StatusOr<ApiTokenText> good = NewApiToken();
  ASSERT_TRUE(good.ok());
  const std::string& g = good->text;
  const std::string cases[] = {
      "fbt1.",
      "fbt1." + good->id,
      g.substr(0, g.size() - 1),
      g + "0",
      "fbt1." + good->id + "x" + good->secret,
      "fbt2." + good->id + "." + good->secret,
      "fbt1." + std::string(16, 'G') + "." + good->secret,
      "fbt1." + good->id + "." + std::string(64, 'A'),
  };
  for (const std::string& bad : cases) {
    absl::StatusOr<ApiTokenText> parsed = ParseApiToken(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kUnauthenticated);
    EXPECT_NE(parsed.status().message().find("malformed token"), std::string::npos);
    EXPECT_EQ(parsed.status().message().find(good->secret.substr(0, 8)), std::string::npos);
  }
}

TEST(ApiTokenTest, HashesAreSha256AndCompareByValue) {
  // SHA-256("abc"), FIPS 180-2 appendix B.1.
  const std::string abc = HashTokenSecret("abc");
  ASSERT_EQ(abc.size(), 32u);
  EXPECT_EQ(static_cast<unsigned char>(abc[0]), 0xba);
  EXPECT_EQ(static_cast<unsigned char>(abc[31]), 0xad);
  EXPECT_TRUE(TokenHashesMatch(abc, HashTokenSecret("abc")));
  EXPECT_FALSE(TokenHashesMatch(abc, HashTokenSecret("abd")));
  EXPECT_FALSE(TokenHashesMatch(abc, abc.substr(1)));
  EXPECT_FALSE(TokenHashesMatch("", ""));
}

TEST(ApiTokenTest, NamesAreBoundedAndPlain) {
  for (const char* ok : {"ci", "alice.ops", "node_7-enroll", "A"}) {
    EXPECT_TRUE(CheckTokenName(ok).ok()) << ok;
  }
  for (const std::string& bad :
       {std::string(), std::string(65, 'a'), std::string("a b"), std::string("x/y"),
        std::string("caf\xc3\xa9"), std::string("a\nb"), std::string(kSharedTokenPrincipal)}) {
    absl::Status s = CheckTokenName(bad);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_EQ(std::string(s.message()).find('\n'), std::string::npos);
  }
}

}  // namespace
}  // namespace fleetbench::controller
