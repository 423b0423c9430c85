// The workloads a node's operator declares: parsing and checking manifests.
#include "agent/benchmarks/workload/workload_manifest.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "common/workload_params.h"
#include "google/protobuf/util/json_util.h"

namespace fleetbench::agent {
namespace {

constexpr int64_t kMaxTimeoutS = int64_t{7} * 24 * 3600;
constexpr size_t kMaxManifestBytes = 64 * 1024;
constexpr int kMaxArgs = 256;

bool IdentifierChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

// Calls `fn(name, begin, end)` for every `{name}` in `arg` whose name is
// [a-z0-9_]+; other braces are literal text.
template <typename Fn>
void ForEachPlaceholder(const std::string& arg, Fn fn) {
  for (size_t open = arg.find('{'); open != std::string::npos; open = arg.find('{', open + 1)) {
    size_t close = open + 1;
    while (close < arg.size() && IdentifierChar(arg[close])) ++close;
    if (close == open + 1 || close >= arg.size() || arg[close] != '}') continue;
    fn(arg.substr(open + 1, close - open - 1), open, close + 1);
  }
}

bool EnvName(const std::string& name) {
  if (name.empty() || name.size() > 128 || (name[0] >= '0' && name[0] <= '9')) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_';
  });
}

absl::Status Check(const v1::WorkloadManifest& m) {
  auto bad = [](absl::string_view field, absl::string_view problem) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": ", problem));
  };
  if (m.command().empty()) return bad("command", "required: the program and its arguments");
  if (m.command_size() > kMaxArgs) return bad("command", absl::StrCat("more than ", kMaxArgs, " arguments"));
  if (!absl::StartsWith(m.command(0), "/")) {
    return bad("command[0]", "the program must be an absolute path (no shell, no PATH search)");
  }
  for (int i = 0; i < m.command_size(); ++i) {
    const std::string& arg = m.command(i);
    if (arg.size() > 4096) return bad(absl::StrCat("command[", i, "]"), "longer than 4096 bytes");
    absl::Status unknown = absl::OkStatus();
    ForEachPlaceholder(arg, [&](const std::string& name, size_t, size_t) {
      if (unknown.ok() && !m.params().contains(name)) {
        unknown = bad(absl::StrCat("command[", i, "]"),
                      absl::StrCat("{", name, "} names no parameter (declare it under params)"));
      }
    });
    if (!unknown.ok()) return unknown;
    if (i == 0 && arg.find('{') != std::string::npos && !m.params().empty()) {
      bool placeholder = false;
      ForEachPlaceholder(arg, [&](const std::string&, size_t, size_t) { placeholder = true; });
      if (placeholder) return bad("command[0]", "the program cannot be a parameter");
    }
  }
  if (!m.cwd().empty() && !absl::StartsWith(m.cwd(), "/")) {
    return bad("cwd", "must be an absolute path");
  }
  for (const auto& [name, value] : m.env()) {
    if (!EnvName(name)) return bad(absl::StrCat("env.", name), "not a variable name");
    if (value.size() > 4096) return bad(absl::StrCat("env.", name), "longer than 4096 bytes");
  }
  if (m.params_size() > kMaxWorkloadParams) {
    return bad("params", absl::StrCat(m.params_size(), " parameters; at most ",
                                      kMaxWorkloadParams));
  }
  for (const auto& [name, param] : m.params()) {
    const std::string field = absl::StrCat("params.", name);
    if (name.empty() || name.size() > 32 ||
        !std::all_of(name.begin(), name.end(), IdentifierChar)) {
      return bad(field, "a parameter name is [a-z0-9_]{1,32}");
    }
    if (name == kWorkloadNameParam) {
      return bad(field, "'name' is taken: it names the workload in a run's parameters");
    }
    if (param.pattern().empty()) {
      return bad(field + ".pattern", "required: the values a run may give, e.g. ^[0-9]{1,4}$");
    }
    if (param.pattern().size() > kMaxWorkloadPatternBytes) {
      return bad(field + ".pattern", absl::StrCat("longer than ", kMaxWorkloadPatternBytes,
                                                  " bytes"));
    }
    if (param.default_().size() > kMaxWorkloadValueBytes) {
      return bad(field + ".default", absl::StrCat("longer than ", kMaxWorkloadValueBytes,
                                                  " bytes"));
    }
    if (absl::Status s = CheckWorkloadPattern(param.pattern()); !s.ok()) {
      return bad(field + ".pattern", s.message());
    }
  }
  // A name in cwd, no folder: the agent removes it before each run and opens
  // it without following a link, which a folder on the way would defeat.
  if (!m.loadgen_summary().empty() &&
      (absl::StrContains(m.loadgen_summary(), "/") || m.loadgen_summary() == "." ||
       m.loadgen_summary() == "..")) {
    return bad("loadgen_summary", "a file name in cwd, without '/'");
  }
  if (m.work_unit().empty() || m.work_unit().size() > 32) {
    return bad("work_unit", "required, at most 32 bytes: what one unit of its work is "
                            "(samples, tokens, images)");
  }
  if (m.timeout_s() < 0 || m.timeout_s() > kMaxTimeoutS) {
    return bad("timeout_s", absl::StrCat(m.timeout_s(), " is outside 0 (1 hour) .. ",
                                         kMaxTimeoutS, " (7 days)"));
  }
  return absl::OkStatus();
}

}  // namespace

v1::WorkloadDeclaration Workload::Declaration() const {
  v1::WorkloadDeclaration d;
  d.set_name(name);
  *d.mutable_params() = manifest.params();
  d.set_work_unit(manifest.work_unit());
  d.set_timeout_ms(absl::ToInt64Milliseconds(Timeout()));
  return d;
}

absl::Duration Workload::Timeout() const {
  return manifest.timeout_s() > 0 ? absl::Seconds(manifest.timeout_s()) : absl::Hours(1);
}

absl::StatusOr<Workload> ParseWorkloadManifest(absl::string_view file, absl::string_view name,
                                               absl::string_view json) {
  // One line: the parser's messages may span several.
  auto refuse = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat(file, ": ", absl::StrReplaceAll(why, {{"\n", " "}})));
  };
  if (absl::Status s = CheckWorkloadName(name); !s.ok()) return refuse(s.message());
  if (json.size() > kMaxManifestBytes) return refuse("larger than 64 KiB");
  Workload w;
  w.name = std::string(name);
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  if (auto s = google::protobuf::util::JsonStringToMessage(std::string(json), &w.manifest, options);
      !s.ok()) {
    return refuse(absl::string_view(s.message().data(), s.message().size()));
  }
  if (absl::Status s = Check(w.manifest); !s.ok()) return refuse(s.message());
  // Defaults are checked as a run that gives no value would be, except
  // that an empty default means "the run must give one".
  v1::WorkloadDeclaration d = w.Declaration();
  for (auto& [key, param] : *d.mutable_params()) {
    if (param.default_().empty()) continue;
    v1::WorkloadDeclaration one;
    one.set_name(w.name);
    (*one.mutable_params())[key] = param;
    if (auto s = ResolveWorkloadParams(one, {}); !s.ok()) {
      return refuse(absl::StrCat("params.", key, ".default: ", s.status().message()));
    }
  }
  return w;
}

absl::StatusOr<std::vector<Workload>> LoadWorkloadDir(const std::string& dir) {
  std::error_code ec;
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  }
  if (ec) {
    return absl::InvalidArgumentError(
        absl::StrCat("--workload-dir ", dir, ": ", ec.message()));
  }
  if (files.size() > static_cast<size_t>(kMaxWorkloadsPerNode)) {
    return absl::InvalidArgumentError(absl::StrCat("--workload-dir ", dir, ": ", files.size(),
                                                   " manifests; at most ",
                                                   kMaxWorkloadsPerNode));
  }
  std::sort(files.begin(), files.end());
  std::vector<Workload> out;
  for (const std::filesystem::path& path : files) {
    // Size before reading: a manifest is small, and a folder or a device
    // named *.json is not one.
    if (!std::filesystem::is_regular_file(path, ec)) {
      return absl::InvalidArgumentError(absl::StrCat(path.string(), ": not a regular file"));
    }
    if (std::filesystem::file_size(path, ec) > kMaxManifestBytes || ec) {
      return absl::InvalidArgumentError(
          absl::StrCat(path.string(), ": larger than ", kMaxManifestBytes, " bytes"));
    }
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    if (!in.good() && !in.eof()) {
      return absl::InvalidArgumentError(absl::StrCat(path.string(), ": cannot be read"));
    }
    absl::StatusOr<Workload> w =
        ParseWorkloadManifest(path.string(), path.stem().string(), text.str());
    if (!w.ok()) return w.status();
    out.push_back(*std::move(w));
  }
  return out;
}

std::vector<std::string> ExpandCommand(const v1::WorkloadManifest& manifest,
                                       const std::map<std::string, std::string>& values) {
  std::vector<std::string> argv;
  for (const std::string& arg : manifest.command()) {
    std::string out;
    size_t copied = 0;
    ForEachPlaceholder(arg, [&](const std::string& name, size_t begin, size_t end) {
      auto value = values.find(name);
      if (value == values.end()) return;  // Check() made every name a parameter
      out.append(arg, copied, begin - copied);
      out += value->second;
      copied = end;
    });
    out.append(arg, copied, std::string::npos);
    argv.push_back(std::move(out));
  }
  return argv;
}

}  // namespace fleetbench::agent
