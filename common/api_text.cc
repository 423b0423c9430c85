#include "common/api_text.h"

#include <map>
#include <vector>

#include "absl/strings/str_join.h"

namespace fleetbench {

std::string LabelsText(const google::protobuf::Map<std::string, std::string>& labels) {
  std::map<std::string, std::string> sorted(labels.begin(), labels.end());
  std::vector<std::string> parts;
  for (const auto& [k, v] : sorted) parts.push_back(k + "=" + v);
  return absl::StrJoin(parts, ",");
}

std::string MeasuredParamsText(const google::protobuf::Map<std::string, std::string>& params) {
  std::vector<std::string> parts;
  for (const char* key : {"dtype", "size", "threads", "runs", "spread", "peer_node", "streams"}) {
    if (auto it = params.find(key); it != params.end()) parts.push_back(it->first + "=" + it->second);
  }
  return absl::StrJoin(parts, " ");
}

}  // namespace fleetbench
