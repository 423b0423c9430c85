#include "common/proto_json.h"

#include "google/protobuf/util/json_util.h"

namespace fleetbench {

std::string ToJson(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  options.add_whitespace = true;
  std::string out;
  // Printing a well-formed message cannot fail.
  (void)google::protobuf::util::MessageToJsonString(message, &out, options);
  return out;
}

}  // namespace fleetbench
