// The HTTP server's access rules with browser login: sessions on their own,
// then a real HttpServer on loopback driven by an HTTP client.
#include "controller/http/http_sessions.h"

#include <memory>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "controller/security/auth.h"
#include "controller/http/http_server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "httplib.h"

namespace fleetbench::controller {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(HttpSessionsTest, ASessionLivesUntilItExpiresOrIsRemoved) {
  HttpSessions sessions(absl::Hours(1), 100);
  const absl::Time t0 = absl::FromUnixSeconds(1000000);
  const std::string id = sessions.Create("tok", t0);
  EXPECT_EQ(id.size(), 64u);
  EXPECT_EQ(sessions.TokenOf(id, t0 + absl::Minutes(59)), "tok");
  EXPECT_EQ(sessions.TokenOf(id, t0 + absl::Hours(1)), std::nullopt);
  EXPECT_EQ(sessions.TokenOf("nope", t0), std::nullopt);
  const std::string other = sessions.Create("tok2", t0);
  EXPECT_NE(other, id);
  sessions.Remove(other);
  EXPECT_EQ(sessions.TokenOf(other, t0), std::nullopt);
}

TEST(HttpSessionsTest, PastTheBoundTheOldestGoes) {
  HttpSessions sessions(absl::Hours(1), 2);
  const absl::Time t0 = absl::FromUnixSeconds(1000000);
  const std::string a = sessions.Create("a", t0);
  const std::string b = sessions.Create("b", t0 + absl::Seconds(1));
  const std::string c = sessions.Create("c", t0 + absl::Seconds(2));
  EXPECT_EQ(sessions.size(), 2u);
  EXPECT_EQ(sessions.TokenOf(a, t0), std::nullopt);
  EXPECT_EQ(sessions.TokenOf(b, t0), "b");
  EXPECT_EQ(sessions.TokenOf(c, t0), "c");
}

TEST(HttpSessionsTest, CookieValueFindsTheNamedCookie) {
  EXPECT_EQ(CookieValue("a=1; fleetbench_session=xyz; b=2", "fleetbench_session"), "xyz");
  EXPECT_EQ(CookieValue("fleetbench_session=", "fleetbench_session"), "");
  EXPECT_EQ(CookieValue("xfleetbench_session=1", "fleetbench_session"), "");
  EXPECT_EQ(CookieValue("", "fleetbench_session"), "");
}

// Two tokens: "admin-token" (admin) and "enroll-token" (enroll); a third,
// "revoked", stops working when the test says so.
class TestAuthenticator final : public Authenticator {
 public:
  absl::StatusOr<Principal> Authenticate(absl::string_view token) const override {
    if (token == "admin-token") return Principal{"alice", Role::kAdmin};
    if (token == "enroll-token") return Principal{"enroller", Role::kEnroll};
    if (token == "revoked" && !revoked) return Principal{"bob", Role::kViewer};
    return absl::UnauthenticatedError("wrong token");
  }
  std::atomic<bool> revoked{false};
};

class HttpLoginTest : public ::testing::Test {
 protected:
  void SetUp() override {
    HttpServerOptions options;
    options.listen = "127.0.0.1:0";
    options.authenticator = &auth_;
    options.login_page = [](absl::string_view error, absl::string_view next) {
      return absl::StrCat("LOGIN error=[", error, "] next=[", next, "]");
    };
    options.page_paths = {"/", "/node"};
    options.open_paths = {"/open"};
    std::map<std::string, HttpHandler> routes;
    routes["/"] = [](const HttpRequest& r) {
      return HttpReply{200, "text/html", "FLEET for " + r.principal.name, ""};
    };
    routes["/node"] = [](const HttpRequest& r) {
      return HttpReply{200, "text/html", "NODE " + r.params.find("name")->second, ""};
    };
    routes["/metrics"] = [](const HttpRequest&) { return HttpReply{200, "text/plain", "M", ""}; };
    routes["/open"] = [](const HttpRequest& r) {
      return HttpReply{200, "text/plain", "OPEN[" + r.principal.name + "]", ""};
    };
    auto server = HttpServer::Start(options, std::move(routes));
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
  }
  // Logs in with `token`; the Set-Cookie's "name=value", or "".
  std::string LogIn(const std::string& token, int* status = nullptr) {
    auto res = client_->Post("/login", "token=" + token + "&next=%2Fnode%3Fname%3Dn1",
                             "application/x-www-form-urlencoded");
    EXPECT_TRUE(res);
    if (!res) return "";
    if (status) *status = res->status;
    const std::string cookie = res->get_header_value("Set-Cookie");
    return cookie.substr(0, cookie.find(';'));
  }
  httplib::Result GetWithCookie(const std::string& path, const std::string& cookie) {
    return client_->Get(path.c_str(), {{"Cookie", cookie}});
  }

  TestAuthenticator auth_;
  std::unique_ptr<HttpServer> server_;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(HttpLoginTest, AnAnonymousBrowserIsSentToTheFormAndSeesNoFleetData) {
  auto page = client_->Get("/node?name=n%201");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 303);
  // Sent as /login?next=/node%3Fname%3Dn%25201; cpp-httplib's client
  // (0.11) percent-decodes header values once as it reads them.
  EXPECT_EQ(page->get_header_value("Location"), "/login?next=/node?name=n%201");
  EXPECT_THAT(page->body, Not(HasSubstr("NODE")));
  // Not a page: 401 as before, and an unknown path stays 401 too.
  EXPECT_EQ(client_->Get("/metrics")->status, 401);
  EXPECT_EQ(client_->Get("/nope")->status, 401);
  auto form = client_->Get("/login?next=/node%3Fname%3Dn1");
  ASSERT_TRUE(form);
  EXPECT_EQ(form->status, 200);
  EXPECT_EQ(form->body, "LOGIN error=[] next=[/node?name=n1]");
}

TEST_F(HttpLoginTest, ALoginSetsAStrictHttpOnlyCookieThatOpensPages) {
  auto res = client_->Post("/login", "token=admin-token&next=%2Fnode%3Fname%3Dn1",
                           "application/x-www-form-urlencoded");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 303);
  EXPECT_EQ(res->get_header_value("Location"), "/node?name=n1");
  const std::string set_cookie = res->get_header_value("Set-Cookie");
  EXPECT_THAT(set_cookie, HasSubstr("fleetbench_session="));
  EXPECT_THAT(set_cookie, HasSubstr("HttpOnly"));
  EXPECT_THAT(set_cookie, HasSubstr("SameSite=Strict"));
  EXPECT_THAT(set_cookie, HasSubstr("Path=/"));
  EXPECT_THAT(set_cookie, HasSubstr("Max-Age=43200"));
  const std::string cookie = set_cookie.substr(0, set_cookie.find(';'));
  auto page = GetWithCookie("/", cookie);
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_EQ(page->body, "FLEET for alice");
  EXPECT_EQ(GetWithCookie("/metrics", cookie)->status, 200);
  // A made-up session id is nobody.
  EXPECT_EQ(GetWithCookie("/", "fleetbench_session=" + std::string(64, 'a'))->status, 303);
  // The bearer header still works without a cookie.
  EXPECT_EQ(client_->Get("/", {{"Authorization", "Bearer admin-token"}})->body, "FLEET for alice");
}

TEST_F(HttpLoginTest, AWrongOrEnrollTokenGetsTheFormBackWithTheReason) {
  int status = 0;
  EXPECT_EQ(LogIn("nope", &status), "");
  EXPECT_EQ(status, 401);
  EXPECT_EQ(LogIn("enroll-token", &status), "");
  EXPECT_EQ(status, 403);
  auto res = client_->Post("/login", "token=nope", "application/x-www-form-urlencoded");
  EXPECT_EQ(res->body, "LOGIN error=[wrong token] next=[/]");
  auto empty = client_->Post("/login", "next=%2F", "application/x-www-form-urlencoded");
  EXPECT_EQ(empty->status, 400);
}

TEST_F(HttpLoginTest, NextIsALocalPathOnly) {
  for (const std::string next : {"https%3A%2F%2Fevil.example", "%2F%2Fevil.example",
                                 "%2F%5Cevil.example", "evil", "%2Fa%0D%0ASet-Cookie%3A%20x"}) {
    auto res = client_->Post("/login", "token=admin-token&next=" + next,
                             "application/x-www-form-urlencoded");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->get_header_value("Location"), "/") << next;
  }
}

TEST_F(HttpLoginTest, LogoutAndARevokedTokenEndTheSession) {
  const std::string cookie = LogIn("admin-token");
  ASSERT_FALSE(cookie.empty());
  auto out = GetWithCookie("/logout", cookie);
  ASSERT_TRUE(out);
  EXPECT_EQ(out->status, 303);
  EXPECT_THAT(out->get_header_value("Set-Cookie"), HasSubstr("Max-Age=0"));
  EXPECT_EQ(GetWithCookie("/", cookie)->status, 303);

  const std::string bob = LogIn("revoked");
  ASSERT_FALSE(bob.empty());
  EXPECT_EQ(GetWithCookie("/", bob)->status, 200);
  auth_.revoked = true;
  EXPECT_EQ(GetWithCookie("/", bob)->status, 303);
  auth_.revoked = false;  // the session is gone, not just refused once
  EXPECT_EQ(GetWithCookie("/", bob)->status, 303);
}

TEST_F(HttpLoginTest, OnlyLoginTakesAPostAndOpenPathsNeedNoToken) {
  auto post = client_->Post("/", "x=1", "application/x-www-form-urlencoded");
  ASSERT_TRUE(post);
  EXPECT_EQ(post->status, 405);
  EXPECT_EQ(post->get_header_value("Allow"), "GET, HEAD");
  auto put = client_->Put("/login", "token=admin-token", "application/x-www-form-urlencoded");
  EXPECT_EQ(put->status, 405);
  EXPECT_EQ(put->get_header_value("Allow"), "GET, HEAD, POST");
  // A body past the bound is refused unread.
  auto big = client_->Post("/login", "token=" + std::string(10000, 'a'),
                           "application/x-www-form-urlencoded");
  ASSERT_TRUE(big);
  EXPECT_EQ(big->status, 413);
  auto open = client_->Get("/open");
  ASSERT_TRUE(open);
  EXPECT_EQ(open->status, 200);
  EXPECT_EQ(open->body, "OPEN[]");
}

}  // namespace
}  // namespace fleetbench::controller
