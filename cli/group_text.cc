#include "cli/group_text.h"

#include <algorithm>
#include <map>
#include <string_view>
#include <set>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/match.h"
#include "cli/table.h"
#include "common/api_enums.h"
#include "common/reason.h"

namespace fleetbench::cli {
namespace {

// A failure's reason in a table cell stays short; --json has it whole.
constexpr size_t kCellReason = 80;

std::string Members(const v1::GroupResult& g, const char* sep = ",") {
  return absl::StrJoin(g.members(), sep);
}

bool Succeeded(const v1::GroupResult& g) {
  return g.state() == v1::TASK_STATE_SUCCEEDED && g.busbw_gbps() > 0;
}

// The busbw cell: the figure, or the state when there is none.
std::string BusbwCell(const v1::GroupResult& g) {
  if (Succeeded(g)) return FormatNumber(g.busbw_gbps());
  return g.state() == v1::TASK_STATE_SUCCEEDED ? "-" : TaskStateName(g.state());
}

// Rank 0's per-size samples of one group: the plugin names the members in
// the "nodes" parameter (a node is rank 0 of several groups in a scaling
// run), so a sample belongs to the group whose members it lists.
bool OfGroup(const v1::Sample& s, const v1::GroupResult& g) {
  if (g.members().empty() || s.node() != g.members(0)) return false;
  auto nodes = s.params().find("nodes");
  if (nodes != s.params().end()) return nodes->second == Members(g);
  auto ranks = s.params().find("ranks");
  return ranks != s.params().end() && ranks->second == absl::StrCat(g.members_size());
}

std::string Param(const v1::Sample& s, const std::string& key) {
  auto it = s.params().find(key);
  return it == s.params().end() ? "" : it->second;
}

// NCCL's facts of the run, from rank 0's INFO log (the allreduce plugin's
// nccl_* params, agent/benchmarks/gpu/nccl_log.h); empty for gloo.
std::string NcclFactsLine(const v1::Run& run, const v1::GroupResult& g) {
  for (const v1::Sample& s : run.samples()) {
    if (!OfGroup(s, g) || Param(s, "nccl_net").empty()) continue;
    std::string line = absl::StrCat("nccl: network ", Param(s, "nccl_net"));
    if (!Param(s, "nccl_rdma").empty()) {
      absl::StrAppend(&line, " (RDMA ", Param(s, "nccl_rdma"), ")");
    }
    if (!Param(s, "nccl_gdrdma").empty()) {
      absl::StrAppend(&line, "; GPUDirect RDMA: ", Param(s, "nccl_gdrdma"));
    }
    if (!Param(s, "nccl_net_devices").empty()) {
      absl::StrAppend(&line, "; devices ", Param(s, "nccl_net_devices"));
    }
    if (!Param(s, "nccl_log_version").empty()) {
      absl::StrAppend(&line, "; NCCL ", Param(s, "nccl_log_version"));
    }
    return line + "\n";
  }
  return "";
}

// GROUP: the curve of each op, by size, and the headline.
std::string RenderCurve(const v1::Run& run, const v1::GroupResult& g) {
  // op -> bytes -> sample
  std::map<std::string, std::map<int64_t, const v1::Sample*>> curves;
  for (const v1::Sample& s : run.samples()) {
    if (!absl::StrContains(s.metric(), "curve_busbw_GBps") || !OfGroup(s, g)) continue;
    int64_t bytes = 0;
    if (!absl::SimpleAtoi(Param(s, "bytes"), &bytes)) continue;
    curves[Param(s, "op")][bytes] = &s;
  }
  std::string out = absl::StrCat("\ngroup ", g.group_id(), " over ", g.members_size(), " nodes (",
                                 Members(g, ", "), "): ", TaskStateName(g.state()));
  if (!g.reason().empty()) absl::StrAppend(&out, ": ", g.reason());
  absl::StrAppend(&out, "\n");
  for (const auto& [op, points] : curves) {
    Table table({"OP", "SIZE", "ALGBW_GBps", "BUSBW_GBps"});
    for (const auto& [bytes, s] : points) {
      const std::string algbw = Param(*s, "algbw_GBps");
      table.AddRow({op.empty() ? "-" : op, FormatBytes(bytes), algbw.empty() ? "-" : algbw,
                    FormatNumber(s->value())});
    }
    absl::StrAppend(&out, table.Render());
  }
  absl::StrAppend(&out, NcclFactsLine(run, g));
  if (Succeeded(g)) {
    absl::StrAppend(&out, "busbw at the largest size: ", FormatNumber(g.busbw_gbps()), " GBps",
                    g.metric().empty() ? "" : " (" + g.metric() + ")", "\n");
  }
  return out;
}

// SCALING: busbw per N against the 2-node figure (or the smallest group of
// two or more when the sizes skip 2).
std::string RenderScaling(const v1::Run& run) {
  const v1::GroupResult* base = nullptr;
  for (const v1::GroupResult& g : run.groups()) {
    if (g.members_size() == 2 && Succeeded(g)) {
      base = &g;
      break;
    }
  }
  for (const v1::GroupResult& g : run.groups()) {
    if (base == nullptr && g.members_size() >= 2 && Succeeded(g)) base = &g;
  }
  Table table({"N", "NODES", "STATE", "BUSBW_GBps", "EFFICIENCY"});
  for (const v1::GroupResult& g : run.groups()) {
    std::string efficiency = "-";
    if (base != nullptr && Succeeded(g) && g.members_size() >= 2) {
      efficiency = absl::StrFormat("%.0f%%", 100 * g.busbw_gbps() / base->busbw_gbps());
    }
    std::string state = TaskStateName(g.state());
    if (!g.reason().empty()) absl::StrAppend(&state, ": ", TruncateReason(g.reason(), kCellReason));
    table.AddRow({absl::StrCat(g.members_size()), Members(g), state,
                  g.members_size() < 2 && g.state() == v1::TASK_STATE_SUCCEEDED ? "-"
                                                                                : BusbwCell(g),
                  efficiency});
  }
  std::string out = "\nscaling";
  if (base != nullptr) {
    absl::StrAppend(&out, " (efficiency: busbw over the ", base->members_size(), "-node figure, ",
                    FormatNumber(base->busbw_gbps()), " GBps",
                    base->members_size() == 2 ? "" : "; there is no 2-node group", ")");
  }
  absl::StrAppend(&out, "\n", table.Render());
  return out;
}

// "n2" < "n10": runs of digits compare as numbers.
bool NaturalLess(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (absl::ascii_isdigit(a[i]) && absl::ascii_isdigit(b[j])) {
      size_t ie = i, je = j;
      while (ie < a.size() && absl::ascii_isdigit(a[ie])) ++ie;
      while (je < b.size() && absl::ascii_isdigit(b[je])) ++je;
      std::string_view da(a.data() + i, ie - i), db(b.data() + j, je - j);
      while (da.size() > 1 && da[0] == '0') da.remove_prefix(1);
      while (db.size() > 1 && db[0] == '0') db.remove_prefix(1);
      if (da.size() != db.size()) return da.size() < db.size();
      if (da != db) return da < db;
      i = ie;
      j = je;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

// ISOLATE: the first pass's pairs as a matrix (like the TCP matrix), each
// pass's groups, then the verdict.
std::string RenderIsolation(const v1::Run& run) {
  const v1::IsolationVerdict& v = run.isolation();
  const double bar = v.expected_busbw_gbps() > 0 ? (1 - v.threshold()) * v.expected_busbw_gbps()
                                                 : 0;
  auto fails = [&](const v1::GroupResult& g) {
    return !Succeeded(g) || (bar > 0 && g.busbw_gbps() < bar);
  };
  auto cell = [&](const v1::GroupResult& g) {
    return BusbwCell(g) + (fails(g) ? " *" : "");
  };
  std::string out;
  // The nodes in the order they first appear, and pass 1's pair cells.
  std::vector<std::string> nodes;
  std::set<std::string> seen;
  std::map<std::pair<std::string, std::string>, std::string> cells;
  for (const v1::GroupResult& g : run.groups()) {
    for (const std::string& m : g.members()) {
      if (seen.insert(m).second) nodes.push_back(m);
    }
    if (g.pass() == 1 && g.members_size() == 2) {
      cells[{g.members(0), g.members(1)}] = cells[{g.members(1), g.members(0)}] = cell(g);
    }
  }
  // Rows and columns in natural order (n2 before n10), whatever order the
  // rounds met them in.
  std::sort(nodes.begin(), nodes.end(), NaturalLess);
  if (!cells.empty()) {
    std::vector<std::string> header = {"PAIR BUSBW_GBps"};
    header.insert(header.end(), nodes.begin(), nodes.end());
    Table matrix(header);
    for (const std::string& a : nodes) {
      std::vector<std::string> row = {a};
      for (const std::string& b : nodes) {
        auto it = cells.find({a, b});
        row.push_back(a == b ? "" : it == cells.end() ? "-" : it->second);
      }
      matrix.AddRow(row);
    }
    absl::StrAppend(&out, "\npass 1 pairs", bar > 0 ? absl::StrCat(" (* below ", FormatNumber(bar),
                                                                  " GBps)")
                                                    : "",
                    "\n", matrix.Render());
  }
  Table passes({"PASS", "GROUP", "BUSBW_GBps", "RESULT"});
  for (const v1::GroupResult& g : run.groups()) {
    std::string result = fails(g) ? "FAIL" : "pass";
    if (!g.reason().empty()) absl::StrAppend(&result, ": ", TruncateReason(g.reason(), kCellReason));
    passes.AddRow({absl::StrCat(g.pass()), Members(g, "-"), BusbwCell(g), result});
  }
  absl::StrAppend(&out, "\npasses\n", passes.Render());
  absl::StrAppend(&out, "\nisolation");
  if (v.expected_busbw_gbps() > 0) {
    absl::StrAppend(&out, ": expected ", FormatNumber(v.expected_busbw_gbps()), " GBps (",
                    v.expectation_source(), "), threshold ", absl::StrFormat("%g", v.threshold()),
                    " (fails below ", FormatNumber(bar), " GBps)");
  }
  absl::StrAppend(&out, ", ", v.pair_tests(), run.group().bisect() ? " group" : " pair",
                  v.pair_tests() == 1 ? " test\n" : " tests\n");
  auto list = [](const auto& names) { return names.empty() ? "none" : absl::StrJoin(names, ", "); };
  std::vector<std::string> links;
  for (const v1::LinkVerdict& l : v.bad_links()) {
    links.push_back(absl::StrCat(l.node_a(), "-", l.node_b(), " (", FormatNumber(l.busbw_gbps()),
                                 " GBps)"));
  }
  absl::StrAppend(&out, "  bad nodes: ", list(v.bad_nodes()), "\n", "  bad links: ", list(links),
                  "\n", "  cleared:   ", list(v.cleared()), "\n");
  return out;
}

}  // namespace

std::string FormatBytes(int64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  // Four significant digits: a collective's size is rounded down to a
  // multiple of ranks x element (2 MiB over 3 ranks of float32 is 2097144
  // bytes), which reads as "2 MiB", not "1.99999 MiB"; one that would read
  // as 1024 of a unit is 1 of the next. The exact bytes are in --json.
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1023.5 && unit + 1 < static_cast<int>(std::size(kUnits))) {
    value /= 1024;
    ++unit;
  }
  return absl::StrCat(absl::StrFormat("%.4g", value), " ", kUnits[unit]);
}

std::string RenderGroups(const v1::Run& run) {
  if (run.groups().empty()) return "";
  switch (run.group().mode()) {
    case v1::GROUP_MODE_SCALING:
      return RenderScaling(run);
    case v1::GROUP_MODE_ISOLATE:
      return RenderIsolation(run);
    default: {
      std::string out;
      for (const v1::GroupResult& g : run.groups()) absl::StrAppend(&out, RenderCurve(run, g));
      return out;
    }
  }
}

std::string GroupProgressLine(const v1::Run& run) {
  if (run.groups().empty()) return "";
  int ended = 0, running = 0;
  for (const v1::GroupResult& g : run.groups()) {
    if (IsTerminal(g.state())) {
      ++ended;
    } else if (g.state() == v1::TASK_STATE_RUNNING) {
      ++running;
    }
  }
  std::string line = absl::StrCat("groups: ", ended, " of ", run.groups_size(), " ended");
  if (running > 0) absl::StrAppend(&line, " (", running, " running)");
  if (run.group().mode() == v1::GROUP_MODE_ISOLATE && !run.isolation().summary().empty()) {
    absl::StrAppend(&line, "; ", run.isolation().summary());
  }
  return line;
}

std::string VerdictLine(const v1::Run& run) {
  if (run.group().mode() != v1::GROUP_MODE_ISOLATE) return "";
  const v1::IsolationVerdict& v = run.isolation();
  if (v.summary().empty()) return "verdict: none yet\n";
  return absl::StrCat("verdict: ", v.summary(), v.complete() ? "" : " (still running)", "\n");
}

}  // namespace fleetbench::cli
