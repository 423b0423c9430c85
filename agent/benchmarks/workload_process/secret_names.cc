#include "agent/benchmarks/workload_process/secret_names.h"

#include <string>
#include <vector>

#include "absl/strings/ascii.h"

namespace fleetbench::agent {
namespace {

// Upper-cased words of `name`, cut as the header says.
std::vector<std::string> Words(std::string_view name) {
  std::vector<std::string> words;
  std::string word;
  char previous = '\0';
  for (char c : name) {
    const bool alnum = absl::ascii_isalnum(static_cast<unsigned char>(c));
    const bool camel_break =
        absl::ascii_isupper(static_cast<unsigned char>(c)) &&
        absl::ascii_islower(static_cast<unsigned char>(previous));
    if ((!alnum || camel_break) && !word.empty()) {
      words.push_back(word);
      word.clear();
    }
    if (alnum)
      word.push_back(absl::ascii_toupper(static_cast<unsigned char>(c)));
    previous = c;
  }
  if (!word.empty()) words.push_back(word);
  return words;
}

constexpr std::string_view kAnywhere[] = {
    "PASSWORD", "PASSWD", "PASSPHRASE", "SECRET", "CREDENTIAL", "APIKEY"};
constexpr std::string_view kWholeWords[] = {
    "TOKEN", "TOKENS", "KEY",    "KEYS",    "AUTH",
    "PASS",  "CREDS",  "COOKIE", "COOKIES", "AUTHORIZATION"};

}  // namespace

bool LooksLikeSecret(std::string_view env_name) {
  std::string upper(env_name);
  for (char& c : upper) c = absl::ascii_toupper(static_cast<unsigned char>(c));
  for (std::string_view part : kAnywhere) {
    if (upper.find(part) != std::string::npos) return true;
  }
  const std::vector<std::string> words = Words(env_name);
  for (const std::string& word : words) {
    for (std::string_view secret : kWholeWords) {
      if (word == secret) return true;
    }
    if (word.size() >= 5 && word.compare(word.size() - 5, 5, "TOKEN") == 0)
      return true;
    if (word == "PWD" && words.size() > 1) return true;
  }
  return false;
}

}  // namespace fleetbench::agent
