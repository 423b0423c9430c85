// common/api_text.h — the API's messages as the short text that the CLI's
// tables and the dashboard's pages both show, so that a figure reads the
// same in a terminal and in a browser.
#ifndef FLEETBENCH_COMMON_API_TEXT_H_
#define FLEETBENCH_COMMON_API_TEXT_H_

#include <string>

#include "google/protobuf/map.h"

namespace fleetbench {

// "k=v,k2=v2", sorted by key, as `fleetbench nodes` prints labels.
std::string LabelsText(const google::protobuf::Map<std::string, std::string>& labels);
// The parameters that say what was measured ("dtype=fp32 size=2048"), as
// `fleetbench results` shows them; the statistics are in --json.
std::string MeasuredParamsText(const google::protobuf::Map<std::string, std::string>& params);

}  // namespace fleetbench

#endif  // FLEETBENCH_COMMON_API_TEXT_H_
