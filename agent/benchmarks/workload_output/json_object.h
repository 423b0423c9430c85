// agent/benchmarks/workload_output/json_object.h — one JSON object from a
// workload's output, read by protobuf's JSON parser into a Struct.
//
// The parsers of this folder read JSON only through here, so the text a
// workload prints meets one set of limits:
//  - it must be an object (the first character past leading whitespace is
//    '{'); anything else is refused without reaching the parser;
//  - it may nest at most `max_depth` objects and lists: protobuf 3.21 takes
//    time quadratic in the nesting of lists (2,000 levels: 0.09 s; 16,000:
//    10 s, measured on the build VM), and the text is not ours;
//  - what is left is protobuf's parser's to judge. It refuses a repeated
//    key, text after the object, NaN, Infinity and numbers beyond a double's
//    range, and accepts a few forms beyond strict JSON (unquoted keys,
//    single-quoted strings, a trailing comma): harmless here, since the
//    callers check every field they use.
//
// Errors: INVALID_ARGUMENT with a one-line message (the parser's own goes on
// with the text and a caret; only its first line is kept). Pure functions,
// thread-safe.
#ifndef FLEETBENCH_AGENT_BENCHMARKS_WORKLOAD_OUTPUT_JSON_OBJECT_H_
#define FLEETBENCH_AGENT_BENCHMARKS_WORKLOAD_OUTPUT_JSON_OBJECT_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/struct.pb.h"

namespace fleetbench::agent {

absl::StatusOr<google::protobuf::Struct> ParseJsonObject(absl::string_view text,
                                                         int max_depth);

// "null", "number", "string", "bool", "object" or "list": what a field
// holds, for an error message that says what was expected instead.
absl::string_view JsonTypeName(const google::protobuf::Value& value);

// `text` C-escaped and in double quotes, cut to its first 64 bytes ("..."
// after it when cut): how an error quotes a workload's output, so a message
// stays one short line whatever the workload printed.
std::string QuoteForError(absl::string_view text);

}  // namespace fleetbench::agent

#endif  // FLEETBENCH_AGENT_BENCHMARKS_WORKLOAD_OUTPUT_JSON_OBJECT_H_
