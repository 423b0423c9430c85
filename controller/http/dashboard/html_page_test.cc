#include "controller/http/dashboard/html_page.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetbench::controller::dashboard {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(HtmlPageTest, EscapesEveryCharacterThatEndsTextOrAnAttribute) {
  EXPECT_EQ(HtmlEscape("<script>alert('x') & \"y\"</script>"),
            "&lt;script&gt;alert(&#39;x&#39;) &amp; &quot;y&quot;&lt;/script&gt;");
  EXPECT_EQ(HtmlEscape(""), "");
  EXPECT_EQ(HtmlEscape("plain node-1"), "plain node-1");
}

TEST(HtmlPageTest, LinksPercentEncodeUserInput) {
  EXPECT_EQ(Link("/node", {{"name", "a b&c=d\"<"}}), "/node?name=a%20b%26c%3Dd%22%3C");
  EXPECT_EQ(Link("/rank", {{"by", "node"}, {"metric", "gemm.cpu"}}),
            "/rank?by=node&metric=gemm.cpu");
  EXPECT_EQ(Link("/", {}), "/");
}

TEST(HtmlPageTest, TableCellsAreTextUnlessMarkedAndDataAttributesAreEscaped) {
  HtmlTable table({"NAME", "<V>"}, "t\"1");
  table.AddRow({TextCell("<img src=x onerror=alert(1)>"),
                NumberCell("1.5000", {{"node", "n\"1"}, {"col", "median"}})});
  table.AddRow({HtmlCell("<b>bold</b>"), TextCell("")});
  const std::string html = table.Render();
  EXPECT_THAT(html, HasSubstr("<table id=\"t&quot;1\">"));
  EXPECT_THAT(html, HasSubstr("<th>&lt;V&gt;</th>"));
  EXPECT_THAT(html, HasSubstr("&lt;img src=x onerror=alert(1)&gt;"));
  EXPECT_THAT(html, Not(HasSubstr("<img")));
  EXPECT_THAT(html, HasSubstr("<td class=\"num\" data-col=\"median\" data-node=\"n&quot;1\">1.5000</td>"));
  EXPECT_THAT(html, HasSubstr("<td><b>bold</b></td>"));
  EXPECT_EQ(table.size(), 2u);
}

TEST(HtmlPageTest, APageHasNoScriptNoOutsideResourceAndRefreshesOnlyWhenAsked) {
  PageFrame frame;
  frame.title = "node <x>";
  frame.body_html = "<p>hi</p>";
  frame.principal = "alice<>";
  const std::string page = RenderPage(frame);
  EXPECT_THAT(page, HasSubstr("<title>node &lt;x&gt; — fleetbench</title>"));
  EXPECT_THAT(page, HasSubstr("alice&lt;&gt;"));
  EXPECT_THAT(page, HasSubstr("<a href=\"/logout\">"));
  EXPECT_THAT(page, Not(HasSubstr("<script")));
  EXPECT_THAT(page, Not(HasSubstr("http://")));
  EXPECT_THAT(page, Not(HasSubstr("https://")));
  EXPECT_THAT(page, Not(HasSubstr("http-equiv=\"refresh\"")));
  frame.refresh_seconds = 3;
  EXPECT_THAT(RenderPage(frame), HasSubstr("<meta http-equiv=\"refresh\" content=\"3\">"));
  frame.principal = "";
  EXPECT_THAT(RenderPage(frame), Not(HasSubstr("/logout")));
}

TEST(HtmlPageTest, TheLoginFormPostsTheTokenAndEscapesItsError) {
  const std::string page = RenderLoginPage("token '<b>' is wrong", "/node?name=\"x\"");
  EXPECT_THAT(page, HasSubstr("<form method=\"post\" action=\"/login\""));
  EXPECT_THAT(page, HasSubstr("type=\"password\" name=\"token\""));
  EXPECT_THAT(page, HasSubstr("token &#39;&lt;b&gt;&#39; is wrong"));
  EXPECT_THAT(page, HasSubstr("value=\"/node?name=&quot;x&quot;\""));
  EXPECT_THAT(RenderLoginPage("", "/"), Not(HasSubstr("id=\"error\"")));
}

}  // namespace
}  // namespace fleetbench::controller::dashboard
