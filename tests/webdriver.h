// tests/webdriver.h — a real headless Chromium driven over WebDriver
// (chromedriver, W3C protocol over HTTP on loopback), for the dashboard's
// browser tests: load pages, fill and submit forms, run a line of script to
// read the DOM, take screenshots, read the browser's console log.
#ifndef FLEETBENCH_TESTS_WEBDRIVER_H_
#define FLEETBENCH_TESTS_WEBDRIVER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "google/protobuf/struct.pb.h"
#include "tests/process.h"

namespace httplib {
class Client;
}

namespace fleetbench::testing {

class WebDriver {
 public:
  // Starts chromedriver on a free port and a headless Chromium session
  // (its profile and the driver's log under `dir`).
  static absl::StatusOr<std::unique_ptr<WebDriver>> Start(const std::string& dir);
  ~WebDriver();

  absl::Status Navigate(const std::string& url);
  absl::StatusOr<std::string> CurrentUrl();
  // The element matching a CSS selector: its WebDriver id.
  absl::StatusOr<std::string> Find(const std::string& css);
  absl::Status Type(const std::string& element, const std::string& text);
  absl::Status Click(const std::string& element);
  // Runs `script` (a function body: "return ...") in the page; its value.
  absl::StatusOr<google::protobuf::Value> Execute(const std::string& script);
  // Saves a PNG of the viewport to `path`.
  absl::Status Screenshot(const std::string& path);
  // The console entries logged since the last call, "LEVEL message" each.
  absl::StatusOr<std::vector<std::string>> ConsoleErrors();

 private:
  WebDriver() = default;
  absl::StatusOr<google::protobuf::Value> Call(const std::string& method, const std::string& path,
                                               const std::string& body);

  std::unique_ptr<Process> driver_;
  std::unique_ptr<httplib::Client> http_;
  std::string session_;
};

// A JSON string literal of `text`.
std::string JsonString(const std::string& text);

}  // namespace fleetbench::testing

#endif  // FLEETBENCH_TESTS_WEBDRIVER_H_
