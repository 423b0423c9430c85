#include "tests/webdriver.h"

#include <fstream>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/util/json_util.h"
#include "httplib.h"

namespace fleetbench::testing {
namespace {

constexpr char kElementKey[] = "element-6066-11e4-a52e-4f735466cecf";

}  // namespace

std::string JsonString(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

absl::StatusOr<std::unique_ptr<WebDriver>> WebDriver::Start(const std::string& dir) {
  std::unique_ptr<WebDriver> wd(new WebDriver);
  const int port = PickFreePort();
  // Its output to a file: an unread pipe would block it.
  wd->driver_ = std::make_unique<Process>(
      std::vector<std::string>{"/bin/sh", "-c",
                               absl::StrCat("exec /usr/bin/chromedriver --port=", port, " > ", dir,
                                            "/chromedriver.log 2>&1")},
      std::map<std::string, std::string>{});
  wd->http_ = std::make_unique<httplib::Client>("127.0.0.1", port);
  wd->http_->set_connection_timeout(2);
  wd->http_->set_read_timeout(60);
  const bool ready = WaitFor(
      [&] {
        auto res = wd->http_->Get("/status");
        return res && res->status == 200 && res->body.find("\"ready\":true") != std::string::npos;
      },
      absl::Seconds(30));
  if (!ready) return absl::UnavailableError("chromedriver did not start; see " + dir);
  const std::string caps = absl::StrCat(
      R"({"capabilities":{"alwaysMatch":{"browserName":"chrome",)",
      R"("goog:chromeOptions":{"binary":"/usr/bin/chromium","args":["--headless=new",)",
      R"("--no-sandbox","--disable-gpu","--disable-dev-shm-usage","--window-size=1280,1000",)",
      R"("--user-data-dir=)", dir, R"(/profile"]},)", R"("goog:loggingPrefs":{"browser":"ALL"}}}})");
  absl::StatusOr<google::protobuf::Value> session = wd->Call("POST", "/session", caps);
  if (!session.ok()) return session.status();
  wd->session_ = session->struct_value().fields().at("sessionId").string_value();
  return wd;
}

WebDriver::~WebDriver() {
  if (!session_.empty()) (void)Call("DELETE", "", "");
}

absl::StatusOr<google::protobuf::Value> WebDriver::Call(const std::string& method,
                                                        const std::string& path,
                                                        const std::string& body) {
  const std::string url =
      path == "/session" ? path : absl::StrCat("/session/", session_, path);
  httplib::Result res = method == "GET"      ? http_->Get(url.c_str())
                        : method == "DELETE" ? http_->Delete(url.c_str())
                                             : http_->Post(url.c_str(), body, "application/json");
  if (!res) return absl::UnavailableError(absl::StrCat("no answer from chromedriver for ", url));
  google::protobuf::Value parsed;
  if (!google::protobuf::util::JsonStringToMessage(res->body, &parsed).ok()) {
    return absl::InternalError(absl::StrCat("chromedriver answered ", res->status, ": ",
                                            res->body.substr(0, 500)));
  }
  google::protobuf::Value value;
  if (parsed.struct_value().fields().contains("value")) {
    value = parsed.struct_value().fields().at("value");
  }
  if (res->status != 200) {
    return absl::InternalError(absl::StrCat(method, " ", path, ": ", res->status, " ",
                                            res->body.substr(0, 500)));
  }
  return value;
}

absl::Status WebDriver::Navigate(const std::string& url) {
  return Call("POST", "/url", absl::StrCat(R"({"url":)", JsonString(url), "}")).status();
}

absl::StatusOr<std::string> WebDriver::CurrentUrl() {
  absl::StatusOr<google::protobuf::Value> v = Call("GET", "/url", "");
  if (!v.ok()) return v.status();
  return v->string_value();
}

absl::StatusOr<std::string> WebDriver::Find(const std::string& css) {
  absl::StatusOr<google::protobuf::Value> v = Call(
      "POST", "/element", absl::StrCat(R"({"using":"css selector","value":)", JsonString(css), "}"));
  if (!v.ok()) return v.status();
  const auto& fields = v->struct_value().fields();
  if (!fields.contains(kElementKey)) {
    std::string json;
    (void)google::protobuf::util::MessageToJsonString(*v, &json);
    return absl::NotFoundError(absl::StrCat("no element ", css, ": ", json.substr(0, 300)));
  }
  return fields.at(kElementKey).string_value();
}

absl::Status WebDriver::Type(const std::string& element, const std::string& text) {
  return Call("POST", absl::StrCat("/element/", element, "/value"),
              absl::StrCat(R"({"text":)", JsonString(text), "}"))
      .status();
}

absl::Status WebDriver::Click(const std::string& element) {
  return Call("POST", absl::StrCat("/element/", element, "/click"), "{}").status();
}

absl::StatusOr<google::protobuf::Value> WebDriver::Execute(const std::string& script) {
  return Call("POST", "/execute/sync",
              absl::StrCat(R"({"script":)", JsonString(script), R"(,"args":[]})"));
}

absl::Status WebDriver::Screenshot(const std::string& path) {
  absl::StatusOr<google::protobuf::Value> v = Call("GET", "/screenshot", "");
  if (!v.ok()) return v.status();
  std::string png;
  if (!absl::Base64Unescape(v->string_value(), &png)) {
    return absl::InternalError("the screenshot is not base64");
  }
  std::ofstream out(path, std::ios::binary);
  out << png;
  return out ? absl::OkStatus() : absl::InternalError("cannot write " + path);
}

absl::StatusOr<std::vector<std::string>> WebDriver::ConsoleErrors() {
  absl::StatusOr<google::protobuf::Value> v = Call("POST", "/se/log", R"({"type":"browser"})");
  if (!v.ok()) return v.status();
  std::vector<std::string> errors;
  for (const google::protobuf::Value& entry : v->list_value().values()) {
    const auto& f = entry.struct_value().fields();
    const std::string level = f.contains("level") ? f.at("level").string_value() : "";
    if (level == "SEVERE" || level == "WARNING") {
      errors.push_back(level + " " + (f.contains("message") ? f.at("message").string_value() : ""));
    }
  }
  return errors;
}

}  // namespace fleetbench::testing
