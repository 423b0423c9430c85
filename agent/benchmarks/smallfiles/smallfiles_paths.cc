#include "agent/benchmarks/smallfiles/smallfiles_paths.h"

#include <random>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

namespace fleetbench::agent {
namespace {

constexpr char kDirPrefix[] = "fleetbench-smallfiles-";

uint64_t SplitMix(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

absl::Status CheckAbsoluteFolder(absl::string_view what,
                                 absl::string_view path) {
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": '", path.substr(0, 64),
                     path.size() > 64 ? "…" : "", "' ", why));
  };
  if (path.empty() || path.front() != '/') return bad("is not an absolute path");
  if (path.size() > 4096) return bad("is longer than 4096 characters");
  if (path.find('\0') != absl::string_view::npos) return bad("contains NUL");
  for (absl::string_view part : absl::StrSplit(path, '/')) {
    if (part == "." || part == "..") {
      return bad("has a '.' or '..' component");
    }
  }
  return absl::OkStatus();
}

std::string CollapseSlashes(absl::string_view path) {
  std::string out;
  for (char c : path) {
    if (c == '/' && !out.empty() && out.back() == '/') continue;
    out.push_back(c);
  }
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

bool IsUnderRoot(absl::string_view path, absl::string_view root) {
  const std::string p = CollapseSlashes(path);
  const std::string r = CollapseSlashes(root);
  if (r == "/") return !p.empty() && p.front() == '/';
  if (p.size() < r.size() || p.compare(0, r.size(), r) != 0) return false;
  return p.size() == r.size() || p[r.size()] == '/';
}

std::string RootHolding(absl::string_view path,
                        const std::vector<std::string>& roots) {
  for (const std::string& root : roots) {
    if (IsUnderRoot(path, root)) return root;
  }
  return "";
}

std::string RandomSmallFilesDirName() {
  std::random_device device;
  const uint64_t bits = (static_cast<uint64_t>(device()) << 32) ^ device();
  return absl::StrFormat("%s%016x", kDirPrefix, bits);
}

bool IsSmallFilesDirName(absl::string_view name) {
  const absl::string_view prefix = kDirPrefix;
  if (name.size() != prefix.size() + 16 || !absl::StartsWith(name, prefix)) {
    return false;
  }
  for (char c : name.substr(prefix.size())) {
    if (!absl::ascii_isxdigit(static_cast<unsigned char>(c)) ||
        absl::ascii_isupper(static_cast<unsigned char>(c))) {
      return false;
    }
  }
  return true;
}

std::string SmallFileName(int64_t index) {
  return absl::StrFormat("f%07d.bin", index);
}

std::vector<int64_t> ShuffledOrder(int64_t n, uint64_t seed) {
  std::vector<int64_t> order(static_cast<size_t>(n > 0 ? n : 0));
  for (int64_t i = 0; i < n; ++i) order[static_cast<size_t>(i)] = i;
  uint64_t state = seed;
  for (int64_t i = n - 1; i > 0; --i) {
    const uint64_t j = static_cast<uint64_t>(
        (static_cast<unsigned __int128>(SplitMix(state)) *
         static_cast<uint64_t>(i + 1)) >>
        64);
    std::swap(order[static_cast<size_t>(i)], order[static_cast<size_t>(j)]);
  }
  return order;
}

}  // namespace fleetbench::agent
