#include "agent/benchmarks/workload_output/json_object.h"

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/util/json_util.h"

namespace fleetbench::agent {
namespace {

// The deepest nesting of objects and lists in `text`, counting brackets
// outside strings. Not a parser: it only has to be right for text the
// parser would take, and may be wrong for the rest, which the parser
// refuses anyway. Strings may be double- or single-quoted (protobuf's
// parser takes both) and hold backslash escapes.
int NestingDepth(absl::string_view text, int stop_above) {
  int depth = 0;
  int deepest = 0;
  char quote = 0;  // the quote that opened the string we are in, or 0
  bool escaped = false;
  for (char c : text) {
    if (quote != 0) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == quote) {
        quote = 0;
      }
      continue;
    }
    if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '{' || c == '[') {
      if (++depth > deepest) deepest = depth;
      if (deepest > stop_above) break;
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return deepest;
}

}  // namespace

absl::StatusOr<google::protobuf::Struct> ParseJsonObject(absl::string_view text,
                                                         int max_depth) {
  const absl::string_view body = absl::StripLeadingAsciiWhitespace(text);
  if (body.empty() || body.front() != '{') {
    return absl::InvalidArgumentError(
        "not a JSON object (it must start with '{')");
  }
  if (NestingDepth(body, max_depth) > max_depth) {
    return absl::InvalidArgumentError(
        absl::StrCat("JSON nested deeper than ", max_depth, " levels"));
  }
  google::protobuf::Struct object;
  const auto parsed = google::protobuf::util::JsonStringToMessage(
      google::protobuf::StringPiece(body.data(), body.size()), &object);
  if (!parsed.ok()) {
    const absl::string_view message(parsed.message().data(),
                                    parsed.message().size());
    return absl::InvalidArgumentError(absl::StrCat(
        "not valid JSON: ", message.substr(0, message.find('\n'))));
  }
  return object;
}

absl::string_view JsonTypeName(const google::protobuf::Value& value) {
  switch (value.kind_case()) {
    case google::protobuf::Value::kNullValue:
      return "null";
    case google::protobuf::Value::kNumberValue:
      return "number";
    case google::protobuf::Value::kStringValue:
      return "string";
    case google::protobuf::Value::kBoolValue:
      return "bool";
    case google::protobuf::Value::kStructValue:
      return "object";
    case google::protobuf::Value::kListValue:
      return "list";
    case google::protobuf::Value::KIND_NOT_SET:
      break;
  }
  return "nothing";
}

std::string QuoteForError(absl::string_view text) {
  constexpr size_t kMaxQuotedBytes = 64;
  if (text.size() <= kMaxQuotedBytes)
    return absl::StrCat("\"", absl::CHexEscape(text), "\"");
  return absl::StrCat("\"", absl::CHexEscape(text.substr(0, kMaxQuotedBytes)),
                      "\"...");
}

}  // namespace fleetbench::agent
