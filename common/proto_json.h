// common/proto_json.h — JSON output for --json: protobuf's own printer with
// the proto field names (snake_case), never a hand-written parallel format.
#ifndef FLEETBENCH_COMMON_PROTO_JSON_H_
#define FLEETBENCH_COMMON_PROTO_JSON_H_

#include <string>

#include "google/protobuf/message.h"

namespace fleetbench {

std::string ToJson(const google::protobuf::Message& message);

}  // namespace fleetbench

#endif  // FLEETBENCH_COMMON_PROTO_JSON_H_
