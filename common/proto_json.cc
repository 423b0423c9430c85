#include "common/proto_json.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/utf8.h"
#include "google/protobuf/descriptor.h"

namespace fleetbench {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::EnumValueDescriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

// Code points protobuf's printer writes as \uXXXX although JSON would take
// them raw: invisible format characters a browser or terminal could be
// fooled by. Above U+FFFF it writes the UTF-16 surrogate pair.
bool EscapedAboveLatin1(uint32_t cp) {
  switch (cp) {
    case 0x00ad: case 0x06dd: case 0x070f: case 0x17b4: case 0x17b5:
    case 0xfeff: case 0xfff9: case 0xfffa: case 0xfffb: case 0xe0001:
      return true;
    default:
      return (cp >= 0x0600 && cp <= 0x0603) || (cp >= 0x200b && cp <= 0x200f) ||
             (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2060 && cp <= 0x2064) ||
             (cp >= 0x206a && cp <= 0x206f) || (cp >= 0x1d173 && cp <= 0x1d17a) ||
             (cp >= 0xe0020 && cp <= 0xe007f);
  }
}

void AppendU16(std::string& out, uint32_t unit) {
  static constexpr char kHex[] = "0123456789abcdef";
  const char text[6] = {'\\', 'u', kHex[(unit >> 12) & 0xf], kHex[(unit >> 8) & 0xf],
                        kHex[(unit >> 4) & 0xf], kHex[unit & 0xf]};
  out.append(text, sizeof(text));
}

void AppendEscapedCodePoint(std::string& out, uint32_t cp) {
  if (cp > 0xffff) {
    cp -= 0x10000;
    AppendU16(out, 0xd800 + (cp >> 10));
    AppendU16(out, 0xdc00 + (cp & 0x3ff));
  } else {
    AppendU16(out, cp);
  }
}

void AppendQuoted(std::string& out, std::string_view s) {
  out.push_back('"');
  size_t plain = 0;  // start of the run not yet copied
  for (size_t i = 0; i < s.size();) {
    const uint8_t c = static_cast<uint8_t>(s[i]);
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\' && c != '<' && c != '>') {
      ++i;
      continue;
    }
    uint32_t cp = c;
    int len = 1;
    if (c >= 0x80) {
      len = DecodeUtf8(s, i, &cp);
      if (len == 0) {  // not UTF-8: say so visibly rather than drop the byte
        out.append(s.substr(plain, i - plain));
        out.append("\xef\xbf\xbd");
        plain = ++i;
        continue;
      }
      if (cp >= 0xa0 && !EscapedAboveLatin1(cp)) {
        i += len;
        continue;
      }
    }
    out.append(s.substr(plain, i - plain));
    switch (cp) {
      case '"': out.append("\\\""); break;
      case '\\': out.append("\\\\"); break;
      case '\b': out.append("\\b"); break;
      case '\t': out.append("\\t"); break;
      case '\n': out.append("\\n"); break;
      case '\f': out.append("\\f"); break;
      case '\r': out.append("\\r"); break;
      default: AppendEscapedCodePoint(out, cp);
    }
    i += len;
    plain = i;
  }
  out.append(s.substr(plain));
  out.push_back('"');
}

// Shortest of 15 or 17 significant digits that reads back to the same
// double, as protobuf's SimpleDtoa; a float likewise with 6 or 9.
template <typename T>
void AppendReal(std::string& out, T value) {
  if (std::isnan(value)) {
    out.append("\"NaN\"");
    return;
  }
  if (std::isinf(value)) {
    out.append(value > 0 ? "\"Infinity\"" : "\"-Infinity\"");
    return;
  }
  constexpr bool kIsFloat = sizeof(T) == sizeof(float);
  char text[32];
  int n = std::snprintf(text, sizeof(text), "%.*g", kIsFloat ? 6 : 15, static_cast<double>(value));
  const bool exact = kIsFloat ? std::strtof(text, nullptr) == value : std::strtod(text, nullptr) == value;
  if (!exact) n = std::snprintf(text, sizeof(text), "%.*g", kIsFloat ? 9 : 17, static_cast<double>(value));
  out.append(text, static_cast<size_t>(n));
}

class Printer {
 public:
  explicit Printer(std::string& out) : out_(out) {}

  // Protobuf's order, which --json users may already diff against: the
  // fields in declaration order (messages only when set), except that the
  // set scalars of oneofs, proto3 `optional` ones included, come last in
  // field number order: protobuf's printer lays out the type's other fields
  // first and appends these as it meets them on the wire.
  void PrintMessage(const Message& message, int depth) {
    const Descriptor* type = message.GetDescriptor();
    const Reflection* reflection = message.GetReflection();
    bool first = true;
    std::vector<const FieldDescriptor*> set_scalars_of_oneofs;
    for (int i = 0; i < type->field_count(); ++i) {
      const FieldDescriptor* field = type->field(i);
      if (field->containing_oneof() != nullptr && field->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) {
        if (reflection->HasField(message, field)) set_scalars_of_oneofs.push_back(field);
        continue;
      }
      if (!field->is_repeated() && field->has_presence() && !reflection->HasField(message, field)) {
        continue;
      }
      PrintField(message, field, depth, first);
    }
    std::sort(set_scalars_of_oneofs.begin(), set_scalars_of_oneofs.end(),
              [](const FieldDescriptor* a, const FieldDescriptor* b) { return a->number() < b->number(); });
    for (const FieldDescriptor* field : set_scalars_of_oneofs) PrintField(message, field, depth, first);
    if (first) {
      out_.append("{}");
      return;
    }
    NewLine(depth);
    out_.push_back('}');
  }

 private:
  void PrintField(const Message& message, const FieldDescriptor* field, int depth, bool& first) {
    out_.append(first ? "{" : ",");
    first = false;
    NewLine(depth + 1);
    AppendQuoted(out_, field->name());
    out_.append(": ");
    if (field->is_map()) {
      PrintMap(message, field, depth + 1);
    } else if (field->is_repeated()) {
      PrintList(message, field, depth + 1);
    } else {
      PrintValue(message, field, -1, depth + 1);
    }
  }

  void NewLine(int depth) {
    out_.push_back('\n');
    out_.append(static_cast<size_t>(depth), ' ');
  }

  void PrintList(const Message& message, const FieldDescriptor* field, int depth) {
    const int n = message.GetReflection()->FieldSize(message, field);
    if (n == 0) {
      out_.append("[]");
      return;
    }
    out_.push_back('[');
    for (int i = 0; i < n; ++i) {
      if (i > 0) out_.push_back(',');
      NewLine(depth + 1);
      PrintValue(message, field, i, depth + 1);
    }
    NewLine(depth);
    out_.push_back(']');
  }

  // A map in key order, so two calls print the same text.
  void PrintMap(const Message& message, const FieldDescriptor* field, int depth) {
    const Reflection* reflection = message.GetReflection();
    const int n = reflection->FieldSize(message, field);
    if (n == 0) {
      out_.append("{}");
      return;
    }
    const FieldDescriptor* key_field = field->message_type()->map_key();
    const FieldDescriptor* value_field = field->message_type()->map_value();
    std::vector<std::pair<std::string, const Message*>> entries;
    entries.reserve(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      const Message& entry = reflection->GetRepeatedMessage(message, field, i);
      entries.emplace_back(MapKey(entry, key_field), &entry);
    }
    // A map filled through reflection can hold a key twice; the last one
    // is the map's value, as when protobuf serialises it.
    std::stable_sort(entries.begin(), entries.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    out_.push_back('{');
    bool first = true;
    for (size_t i = 0; i < entries.size(); ++i) {
      if (i + 1 < entries.size() && entries[i + 1].first == entries[i].first) continue;
      if (!first) out_.push_back(',');
      first = false;
      NewLine(depth + 1);
      AppendQuoted(out_, entries[i].first);
      out_.append(": ");
      PrintValue(*entries[i].second, value_field, -1, depth + 1);
    }
    NewLine(depth);
    out_.push_back('}');
  }

  static std::string MapKey(const Message& entry, const FieldDescriptor* key) {
    const Reflection* r = entry.GetReflection();
    switch (key->cpp_type()) {
      case FieldDescriptor::CPPTYPE_STRING: return r->GetString(entry, key);
      case FieldDescriptor::CPPTYPE_BOOL: return r->GetBool(entry, key) ? "true" : "false";
      case FieldDescriptor::CPPTYPE_INT32: return absl::StrCat(r->GetInt32(entry, key));
      case FieldDescriptor::CPPTYPE_INT64: return absl::StrCat(r->GetInt64(entry, key));
      case FieldDescriptor::CPPTYPE_UINT32: return absl::StrCat(r->GetUInt32(entry, key));
      case FieldDescriptor::CPPTYPE_UINT64: return absl::StrCat(r->GetUInt64(entry, key));
      default: return "";  // protobuf allows no other key types
    }
  }

  // One value of `field`: element `index` of a repeated field, or the
  // singular value when index is -1.
  void PrintValue(const Message& m, const FieldDescriptor* field, int index, int depth) {
    const Reflection* r = m.GetReflection();
    const bool one = index < 0;
    switch (field->cpp_type()) {
      case FieldDescriptor::CPPTYPE_INT32:
        absl::StrAppend(&out_, one ? r->GetInt32(m, field) : r->GetRepeatedInt32(m, field, index));
        return;
      case FieldDescriptor::CPPTYPE_UINT32:
        absl::StrAppend(&out_, one ? r->GetUInt32(m, field) : r->GetRepeatedUInt32(m, field, index));
        return;
      case FieldDescriptor::CPPTYPE_INT64:  // quoted: a JavaScript number holds 53 bits
        absl::StrAppend(&out_, "\"", one ? r->GetInt64(m, field) : r->GetRepeatedInt64(m, field, index),
                        "\"");
        return;
      case FieldDescriptor::CPPTYPE_UINT64:
        absl::StrAppend(&out_, "\"",
                        one ? r->GetUInt64(m, field) : r->GetRepeatedUInt64(m, field, index), "\"");
        return;
      case FieldDescriptor::CPPTYPE_DOUBLE:
        AppendReal(out_, one ? r->GetDouble(m, field) : r->GetRepeatedDouble(m, field, index));
        return;
      case FieldDescriptor::CPPTYPE_FLOAT:
        AppendReal(out_, one ? r->GetFloat(m, field) : r->GetRepeatedFloat(m, field, index));
        return;
      case FieldDescriptor::CPPTYPE_BOOL:
        out_.append((one ? r->GetBool(m, field) : r->GetRepeatedBool(m, field, index)) ? "true"
                                                                                          : "false");
        return;
      case FieldDescriptor::CPPTYPE_ENUM: {
        const int number = one ? r->GetEnumValue(m, field) : r->GetRepeatedEnumValue(m, field, index);
        const EnumValueDescriptor* value = field->enum_type()->FindValueByNumber(number);
        if (value != nullptr) {
          AppendQuoted(out_, value->name());
        } else {
          absl::StrAppend(&out_, number);  // a number this build has no name for
        }
        return;
      }
      case FieldDescriptor::CPPTYPE_STRING: {
        std::string scratch;
        const std::string& text = one ? r->GetStringReference(m, field, &scratch)
                                      : r->GetRepeatedStringReference(m, field, index, &scratch);
        if (field->type() == FieldDescriptor::TYPE_BYTES) {
          out_.push_back('"');
          out_.append(absl::Base64Escape(text));
          out_.push_back('"');
        } else {
          AppendQuoted(out_, text);
        }
        return;
      }
      case FieldDescriptor::CPPTYPE_MESSAGE:
        PrintMessage(one ? r->GetMessage(m, field) : r->GetRepeatedMessage(m, field, index), depth);
        return;
    }
  }

  std::string& out_;
};

}  // namespace

std::string ToJson(const google::protobuf::Message& message) {
  std::string out;
  Printer(out).PrintMessage(message, 0);
  out.push_back('\n');
  return out;
}

}  // namespace fleetbench
