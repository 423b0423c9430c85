#include "agent/benchmarks/param_reader.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/reason.h"

namespace fleetbench::agent {

absl::Status ParamReader::Error(absl::string_view key,
                                absl::string_view what) const {
  return absl::InvalidArgumentError(
      absl::StrCat(plugin_, ": ", ClipInput(key), ": ", what));
}

absl::Status ParamReader::CheckKeys(
    absl::Span<const absl::string_view> allowed) const {
  for (const auto& [key, value] : params_) {
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat(plugin_, ": unknown parameter '", ClipInput(key),
                       "' (allowed: ", absl::StrJoin(allowed, ", "), ")"));
    }
  }
  return absl::OkStatus();
}

std::string ParamReader::Get(const std::string& key,
                             const std::string& fallback) const {
  auto it = params_.find(key);
  return it == params_.end() ? fallback : it->second;
}

absl::StatusOr<int64_t> ParamReader::Int(const std::string& key,
                                         int64_t fallback, int64_t lo,
                                         int64_t hi) const {
  if (Has(key)) return IntFrom(key, Get(key, ""), lo, hi);
  if (fallback < lo || fallback > hi) {
    return Error(key, absl::StrCat(fallback, " is outside ", lo, "..", hi));
  }
  return fallback;
}

absl::StatusOr<int64_t> ParamReader::IntFrom(const std::string& key,
                                             absl::string_view text,
                                             int64_t lo, int64_t hi) const {
  int64_t value = 0;
  if (!absl::SimpleAtoi(text, &value)) {
    return Error(key, absl::StrCat("'", ClipInput(text), "' is not an integer"));
  }
  if (value < lo || value > hi) {
    return Error(key, absl::StrCat(value, " is outside ", lo, "..", hi));
  }
  return value;
}

absl::StatusOr<int64_t> ParamReader::Bytes(const std::string& key,
                                           int64_t fallback, int64_t lo,
                                           int64_t hi) const {
  if (!Has(key)) return fallback;
  std::string text = Get(key, "");
  int64_t scale = 1;
  if (!text.empty()) {
    switch (text.back()) {
      case 'K': case 'k': scale = int64_t{1} << 10; break;
      case 'M': case 'm': scale = int64_t{1} << 20; break;
      case 'G': case 'g': scale = int64_t{1} << 30; break;
      default: break;
    }
    if (scale != 1) text.pop_back();
  }
  int64_t value = 0;
  if (!absl::SimpleAtoi(text, &value) || value < 0 ||
      value > hi / scale) {
    if (absl::SimpleAtoi(text, &value) && value >= 0) {
      return Error(key, absl::StrCat(Get(key, ""), " is outside ", lo, "..",
                                     hi, " bytes"));
    }
    return Error(key, absl::StrCat("'", ClipInput(Get(key, "")),
                                   "' is not a byte count (e.g. 1048576, 64K, "
                                   "1M, 1G)"));
  }
  value *= scale;
  if (value < lo || value > hi) {
    return Error(key, absl::StrCat(Get(key, ""), " is outside ", lo, "..", hi,
                                   " bytes"));
  }
  return value;
}

absl::StatusOr<double> ParamReader::Double(const std::string& key,
                                           double fallback, double lo,
                                           double hi) const {
  double value = fallback;
  if (Has(key)) {
    const std::string text = Get(key, "");
    if (!absl::SimpleAtod(text, &value) || !std::isfinite(value)) {
      return Error(key, absl::StrCat("'", ClipInput(text), "' is not a number"));
    }
  }
  if (!(value >= lo && value <= hi)) {
    return Error(key, absl::StrCat(value, " is outside ", lo, "..", hi));
  }
  return value;
}

absl::StatusOr<bool> ParamReader::Bool(const std::string& key,
                                       bool fallback) const {
  if (!Has(key)) return fallback;
  const std::string text =
      absl::AsciiStrToLower(absl::StripAsciiWhitespace(Get(key, "")));
  if (text == "1" || text == "true") return true;
  if (text == "0" || text == "false") return false;
  return Error(key, absl::StrCat("'", ClipInput(Get(key, "")),
                                 "' is not one of 0, 1, true, false"));
}

absl::StatusOr<std::vector<std::string>> ParamReader::List(
    const std::string& key, const std::string& fallback,
    absl::Span<const absl::string_view> allowed) const {
  return ListOf(key, fallback, &allowed);
}

absl::StatusOr<std::vector<std::string>> ParamReader::List(
    const std::string& key, const std::string& fallback) const {
  return ListOf(key, fallback, nullptr);
}

absl::StatusOr<std::vector<std::string>> ParamReader::ListOf(
    const std::string& key, const std::string& fallback,
    const absl::Span<const absl::string_view>* allowed) const {
  const std::string text = Get(key, fallback);
  if (absl::StripAsciiWhitespace(text).empty()) {
    return Error(key, "is empty; give a comma-separated list");
  }
  std::vector<std::string> items;
  std::set<std::string> seen;
  for (absl::string_view item : absl::StrSplit(text, ',')) {
    item = absl::StripAsciiWhitespace(item);
    if (item.empty()) {
      return Error(key, absl::StrCat("'", ClipInput(text), "' has an empty entry"));
    }
    if (allowed != nullptr &&
        std::find(allowed->begin(), allowed->end(), item) == allowed->end()) {
      return Error(key, absl::StrCat("'", ClipInput(item), "' is not one of ",
                                     absl::StrJoin(*allowed, ", ")));
    }
    if (!seen.insert(std::string(item)).second) {
      return Error(key, absl::StrCat("'", ClipInput(item), "' is listed twice"));
    }
    items.emplace_back(item);
  }
  return items;
}

}  // namespace fleetbench::agent
