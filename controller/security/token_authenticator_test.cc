// TokenAuthenticator on a real SQLite file with a fake clock: role tokens
// authenticate as themselves, expire by the clock, are refused from the
// call after Revoke, survive a restart; malformed, unknown and wrong tokens
// are refused without being quoted; the shared token is admin until it is
// turned off, which a restart keeps.
#include "controller/security/token_authenticator.h"

#include <filesystem>
#include <memory>
#include <string>

#include "absl/time/time.h"
#include "common/clock.h"
#include "common/ulid.h"
#include "controller/security/api_token.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/sqlite_store.h"
#include "storage/store.h"

namespace fleetbench::controller {
namespace {

using ::testing::HasSubstr;

constexpr char kShared[] = "shared-secret-0123456789";

class TokenAuthenticatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("token_auth_test_" + NewUlid());
    std::filesystem::create_directories(dir_);
    Restart();
  }
  void TearDown() override {
    auth_.reset();
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  // A new store connection and authenticator on the same file: a
  // controller restart.
  void Restart() {
    auth_.reset();
    store_.reset();
    storage::SqliteOptions options;
    options.path = dir_ + "/h.db";
    auto store = storage::OpenSqliteStore(options);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
    auto auth = TokenAuthenticator::Load(store_.get(), &clock_, kShared);
    ASSERT_TRUE(auth.ok()) << auth.status();
    auth_ = std::move(*auth);
  }
  std::string MustCreate(const std::string& name, Role role, absl::Duration ttl) {
    auto created = auth_->Create(name, role, ttl);
    EXPECT_TRUE(created.ok()) << created.status();
    return created.ok() ? created->secret : "";
  }
  // The refusal's message; fails the test when it authenticated.
  std::string Refusal(const std::string& token) {
    absl::StatusOr<Principal> who = auth_->Authenticate(token);
    EXPECT_FALSE(who.ok()) << "authenticated as " << (who.ok() ? who->name : "");
    if (who.ok()) return "";
    EXPECT_EQ(who.status().code(), absl::StatusCode::kUnauthenticated);
    return std::string(who.status().message());
  }

  std::string dir_;
  FakeClock clock_{absl::FromUnixSeconds(1'800'000'000)};
  std::unique_ptr<storage::Store> store_;
  std::unique_ptr<TokenAuthenticator> auth_;
};

TEST_F(TokenAuthenticatorTest, EachRoleTokenIsItsOwnPrincipal) {
  const std::string viewer = MustCreate("dash", Role::kViewer, absl::ZeroDuration());
  const std::string op = MustCreate("ci", Role::kOperator, absl::Hours(24));
  const std::string admin = MustCreate("root-ops", Role::kAdmin, absl::ZeroDuration());
  const std::string enroll = MustCreate("enroll-n1", Role::kEnroll, absl::Hours(1));
  struct Case {
    std::string token, name;
    Role role;
  };
  for (const Case& c : {Case{viewer, "dash", Role::kViewer}, Case{op, "ci", Role::kOperator},
                        Case{admin, "root-ops", Role::kAdmin},
                        Case{enroll, "enroll-n1", Role::kEnroll}}) {
    absl::StatusOr<Principal> who = auth_->Authenticate(c.token);
    ASSERT_TRUE(who.ok()) << c.name << ": " << who.status();
    EXPECT_EQ(who->name, c.name);
    EXPECT_EQ(who->role, c.role);
  }
  // The stored rows hold no secret.
  auto rows = store_->ListApiTokens();
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 4u);
  for (const auto& r : *rows) {
    EXPECT_EQ(r.secret_hash.size(), 32u);
    for (const std::string& t : {viewer, op, admin, enroll}) {
      EXPECT_EQ(r.secret_hash.find(t.substr(22, 16)), std::string::npos);
    }
  }
}

TEST_F(TokenAuthenticatorTest, ATokenExpiresByTheClock) {
  const std::string token = MustCreate("short", Role::kViewer, absl::Minutes(10));
  clock_.Advance(absl::Minutes(10) - absl::Milliseconds(1));
  EXPECT_TRUE(auth_->Authenticate(token).ok());
  clock_.Advance(absl::Milliseconds(1));
  const std::string message = Refusal(token);
  EXPECT_THAT(message, HasSubstr("token 'short' expired at "));
  EXPECT_EQ(message.find(token), std::string::npos);
  // Expired is dead: the name can be taken again, and only the new one works.
  const std::string again = MustCreate("short", Role::kOperator, absl::ZeroDuration());
  EXPECT_TRUE(auth_->Authenticate(again).ok());
  EXPECT_THAT(Refusal(token), HasSubstr("unknown or wrong token"));
}

TEST_F(TokenAuthenticatorTest, RevokeIsRefusedAtOnceAndAfterARestart) {
  const std::string token = MustCreate("leaked", Role::kOperator, absl::ZeroDuration());
  ASSERT_TRUE(auth_->Authenticate(token).ok());
  auto revoked = auth_->Revoke("leaked");
  ASSERT_TRUE(revoked.ok()) << revoked.status();
  EXPECT_EQ(revoked->revoked, clock_.Now());
  EXPECT_THAT(Refusal(token), HasSubstr("token 'leaked' was revoked at "));
  EXPECT_EQ(auth_->Revoke("leaked").status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(auth_->Revoke("nobody").status().code(), absl::StatusCode::kNotFound);
  Restart();
  EXPECT_THAT(Refusal(token), HasSubstr("was revoked"));
}

TEST_F(TokenAuthenticatorTest, TokensSurviveARestart) {
  const std::string token = MustCreate("kept", Role::kAdmin, absl::Hours(2));
  Restart();
  absl::StatusOr<Principal> who = auth_->Authenticate(token);
  ASSERT_TRUE(who.ok()) << who.status();
  EXPECT_EQ(who->role, Role::kAdmin);
  clock_.Advance(absl::Hours(2));
  EXPECT_THAT(Refusal(token), HasSubstr("expired"));
}

TEST_F(TokenAuthenticatorTest, MalformedUnknownAndWrongTokensAreRefusedUnquoted) {
  const std::string token = MustCreate("real", Role::kViewer, absl::ZeroDuration());
  absl::StatusOr<ApiTokenText> parsed = ParseApiToken(token);
  ASSERT_TRUE(parsed.ok());
  // Right id, wrong secret.
  std::string wrong = token;
  wrong.back() = wrong.back() == '0' ? '1' : '0';
  EXPECT_THAT(Refusal(wrong), HasSubstr("unknown or wrong token"));
  absl::StatusOr<ApiTokenText> stranger = NewApiToken();
  ASSERT_TRUE(stranger.ok());
  EXPECT_THAT(Refusal(stranger->text), HasSubstr("unknown or wrong token"));
  for (const std::string& bad : {token.substr(0, 30), token + "ff", std::string("fbt1.zz")}) {
    const std::string message = Refusal(bad);
    EXPECT_THAT(message, HasSubstr("malformed token"));
    EXPECT_EQ(message.find(parsed->secret.substr(0, 12)), std::string::npos);
  }
  EXPECT_THAT(Refusal(""), HasSubstr("missing token"));
  EXPECT_THAT(Refusal("not-the-shared-token"), HasSubstr("wrong token"));
}

TEST_F(TokenAuthenticatorTest, BadNamesAndLifetimesAreRefused) {
  EXPECT_EQ(auth_->Create("a b", Role::kViewer, absl::ZeroDuration()).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(auth_->Create(std::string(65, 'a'), Role::kViewer, absl::ZeroDuration())
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  // Enrollment tokens must be short-lived.
  for (absl::Duration ttl : {absl::ZeroDuration(), absl::Seconds(30), absl::Hours(24 * 7 + 1)}) {
    absl::Status s = auth_->Create("enroll", Role::kEnroll, ttl).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << ttl;
    EXPECT_THAT(std::string(s.message()), HasSubstr("7d"));
  }
  EXPECT_TRUE(auth_->Create("enroll", Role::kEnroll, absl::Hours(24 * 7)).ok());
  EXPECT_EQ(auth_->Create("x", Role::kViewer, absl::Hours(24 * 3651)).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(auth_->Create("enroll", Role::kEnroll, absl::Hours(1)).status().code(),
            absl::StatusCode::kAlreadyExists);
}

TEST_F(TokenAuthenticatorTest, TheSharedTokenIsAdminUntilTurnedOffAndStaysOff) {
  absl::StatusOr<Principal> who = auth_->Authenticate(kShared);
  ASSERT_TRUE(who.ok());
  EXPECT_EQ(who->name, kSharedTokenPrincipal);
  EXPECT_EQ(who->role, Role::kAdmin);
  // Not without a live admin token to manage the controller with.
  MustCreate("viewer", Role::kViewer, absl::ZeroDuration());
  absl::Status refused = auth_->SetSharedTokenEnabled(false);
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(auth_->shared_token_enabled());
  const std::string admin = MustCreate("admin", Role::kAdmin, absl::ZeroDuration());
  ASSERT_TRUE(auth_->SetSharedTokenEnabled(false).ok());
  EXPECT_FALSE(auth_->shared_token_enabled());
  const std::string message = Refusal(kShared);
  EXPECT_THAT(message, HasSubstr("shared token is turned off"));
  EXPECT_EQ(message.find(kShared), std::string::npos);
  EXPECT_TRUE(auth_->Authenticate(admin).ok());
  Restart();
  EXPECT_FALSE(auth_->shared_token_enabled());
  EXPECT_THAT(Refusal(kShared), HasSubstr("turned off"));
  ASSERT_TRUE(auth_->SetSharedTokenEnabled(true).ok());
  Restart();
  EXPECT_TRUE(auth_->Authenticate(kShared).ok());
}

TEST_F(TokenAuthenticatorTest, LastUseIsKeptAndWrittenAtMostOnceAMinute) {
  const std::string token = MustCreate("busy", Role::kViewer, absl::ZeroDuration());
  const absl::Time first = clock_.Now();
  ASSERT_TRUE(auth_->Authenticate(token).ok());
  clock_.Advance(absl::Seconds(20));
  ASSERT_TRUE(auth_->Authenticate(token).ok());
  // In memory: the newest use.
  ASSERT_EQ(auth_->List().size(), 1u);
  EXPECT_EQ(auth_->List()[0].last_used, first + absl::Seconds(20));
  // In the store: the first use (written), not the second (within a minute).
  auto rows = store_->ListApiTokens();
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ((*rows)[0].last_used, first);
}

TEST_F(TokenAuthenticatorTest, AnAuthenticatorWithoutASharedTokenTakesOnlyApiTokens) {
  auto auth = TokenAuthenticator::Load(store_.get(), &clock_, "");
  ASSERT_TRUE(auth.ok());
  EXPECT_FALSE((*auth)->Authenticate(kShared).ok());
  EXPECT_FALSE((*auth)->Authenticate("x").ok());
}

}  // namespace
}  // namespace fleetbench::controller
