// common/proto_json.h — JSON output for --json, in protobuf's JSON mapping
// with the proto field names (snake_case), never a hand-written parallel
// format per message.
//
// Contract: the text is what protobuf's own printer
// (util::MessageToJsonString with preserve_proto_field_names,
// always_print_primitive_fields and add_whitespace) writes for the same
// message, byte for byte, with two deliberate differences: a map's entries
// come in key order (protobuf's come in hash order, which changes from one
// process to the next), and a string that is not valid UTF-8 has each bad
// byte written as U+FFFD (protobuf drops them). proto_json_test.cc holds the
// two printers to that on every message type of fleetbench.v1.
//
// Why not protobuf's printer: in protobuf 3.21 it serialises the message
// and re-reads it through a stream of converters; for a 1,000-row rank that
// was 22 ms of a CLI call's 50 ms of CPU (docs/results-log.md, "The client
// binary"). This one
// walks the message once with reflection. Thread-safe; no state.
#ifndef FLEETBENCH_COMMON_PROTO_JSON_H_
#define FLEETBENCH_COMMON_PROTO_JSON_H_

#include <string>

#include "google/protobuf/message.h"

namespace fleetbench {

// The message as indented JSON, ending in a newline.
std::string ToJson(const google::protobuf::Message& message);

}  // namespace fleetbench

#endif  // FLEETBENCH_COMMON_PROTO_JSON_H_
