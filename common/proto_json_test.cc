// ToJson against protobuf's own JSON printer, on random messages of every
// message type in fleetbench.v1: the same bytes (maps of one entry), the
// same message read back (maps of many), and the two places it differs on
// purpose.
#include "common/proto_json.h"

#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "fleetbench/v1/agent.pb.h"
#include "fleetbench/v1/agent_service.pb.h"
#include "fleetbench/v1/backup.pb.h"
#include "fleetbench/v1/facts.pb.h"
#include "fleetbench/v1/finding.pb.h"
#include "fleetbench/v1/gpu.pb.h"
#include "fleetbench/v1/history.pb.h"
#include "fleetbench/v1/metric.pb.h"
#include "fleetbench/v1/node.pb.h"
#include "fleetbench/v1/price.pb.h"
#include "fleetbench/v1/probe.pb.h"
#include "fleetbench/v1/rank.pb.h"
#include "fleetbench/v1/result.pb.h"
#include "fleetbench/v1/run.pb.h"
#include "fleetbench/v1/schedule.pb.h"
#include "fleetbench/v1/security.pb.h"
#include "fleetbench/v1/variance.pb.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/descriptor.pb.h"
#include "google/protobuf/dynamic_message.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/field_comparator.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"

namespace fleetbench {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::FileDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

std::string ProtobufJson(const Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  options.add_whitespace = true;
  std::string out;
  EXPECT_TRUE(google::protobuf::util::MessageToJsonString(message, &out, options).ok());
  return out;
}

// Every message type (nested ones too) of fleetbench.v1: one message of
// each .proto file names the file (a new file adds its line here).
std::vector<const Descriptor*> AllMessageTypes() {
  const std::vector<const FileDescriptor*> files = {
      v1::Capability::descriptor()->file(),     v1::EnrollRequest::descriptor()->file(),
      v1::BackupRequest::descriptor()->file(),  v1::CpuFacts::descriptor()->file(),
      v1::FindingSubject::descriptor()->file(), v1::GpuReadings::descriptor()->file(),
      v1::HistoryRequest::descriptor()->file(), v1::MetricDescriptor::descriptor()->file(),
      v1::Node::descriptor()->file(),           v1::CatalogPrice::descriptor()->file(),
      v1::ProbeReport::descriptor()->file(),    v1::RankRequest::descriptor()->file(),
      v1::Sample::descriptor()->file(),         v1::GroupOptions::descriptor()->file(),
      v1::ScheduleFiring::descriptor()->file(), v1::ApiToken::descriptor()->file(),
      v1::VarianceRequest::descriptor()->file()};
  std::vector<const Descriptor*> types;
  for (const FileDescriptor* file : files) {
    for (int m = 0; m < file->message_type_count(); ++m) types.push_back(file->message_type(m));
  }
  for (size_t i = 0; i < types.size(); ++i) {
    for (int n = 0; n < types[i]->nested_type_count(); ++n) {
      if (!types[i]->nested_type(n)->options().map_entry()) types.push_back(types[i]->nested_type(n));
    }
  }
  return types;
}

// Random values that reach every branch of the printer: defaults, text
// that needs escaping (quotes, controls, <, >, C1 controls, invisible
// format characters, astral code points), every float class.
class RandomFiller {
 public:
  RandomFiller(uint32_t seed, int max_map_entries) : rng_(seed), max_map_entries_(max_map_entries) {}

  void Fill(Message* message, int depth) {
    const Descriptor* type = message->GetDescriptor();
    const Reflection* r = message->GetReflection();
    for (int i = 0; i < type->field_count(); ++i) {
      const FieldDescriptor* field = type->field(i);
      if (field->is_map()) {
        const int n = Pick(max_map_entries_ + 1);
        for (int k = 0; k < n; ++k) {
          Message* entry = r->AddMessage(message, field);
          Fill(entry, depth + 1);
          // Distinct keys, as a map holds them (every key in the API is text).
          const FieldDescriptor* key = field->message_type()->map_key();
          if (key->cpp_type() == FieldDescriptor::CPPTYPE_STRING) {
            entry->GetReflection()->SetString(entry, key, absl::StrCat(k, Text()));
          }
        }
      } else if (field->is_repeated()) {
        const int n = Pick(4);
        for (int k = 0; k < n; ++k) AddValue(message, field, depth);
      } else if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
        if (depth < 4 && Pick(2) == 0) Fill(r->MutableMessage(message, field), depth + 1);
      } else if (Pick(3) != 0) {  // a third stay at the default or unset
        SetValue(message, field);
      }
    }
  }

 private:
  int Pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }

  std::string Text() {
    static const std::vector<std::string> kPieces = {
        "gemm", "a b", "\"", "\\", "\n", "\t", "\r", "\b", "\f", std::string(1, '\0'), "\x01",
        "\x1f", "\x7f", "<", ">", "&", "'", "/", "é", "\xc2\x85", "\xc2\x9f", "\xc2\xa0", "\xc2\xad",
        "\xe2\x80\xa8", "\xe2\x80\x8b", "\xef\xbb\xbf", "\xe2\x82\xac", "\xf0\x9f\x98\x80",
        "\xf3\xa0\x80\x81", "\xf0\x9d\x85\xb3", "\xd8\x80", "\xe2\x81\xa0", "日本"};
    std::string text;
    const int n = Pick(5);
    for (int i = 0; i < n; ++i) text += kPieces[Pick(static_cast<int>(kPieces.size()))];
    return text;
  }

  double Real() {
    switch (Pick(9)) {
      case 0: return 0.0;
      case 1: return -0.0;
      case 2: return std::numeric_limits<double>::quiet_NaN();
      case 3: return Pick(2) ? std::numeric_limits<double>::infinity()
                             : -std::numeric_limits<double>::infinity();
      case 4: return 0.1 * Pick(100);
      case 5: return std::uniform_real_distribution<double>(-1e300, 1e300)(rng_);
      case 6: return std::uniform_real_distribution<double>(0, 1e-300)(rng_);
      case 7: return static_cast<double>(Pick(1000000));
      default: return std::uniform_real_distribution<double>(0, 2)(rng_);
    }
  }

  int64_t Int() {
    switch (Pick(4)) {
      case 0: return std::numeric_limits<int64_t>::max();
      case 1: return std::numeric_limits<int64_t>::min();
      case 2: return Pick(1000) - 500;
      default: return static_cast<int64_t>(rng_());
    }
  }

  int EnumNumber(const FieldDescriptor* field) {
    const auto* e = field->enum_type();
    if (Pick(10) == 0) return 1000 + Pick(10);  // a value this build has no name for
    return e->value(Pick(e->value_count()))->number();
  }

  void SetValue(Message* m, const FieldDescriptor* f) {
    const Reflection* r = m->GetReflection();
    switch (f->cpp_type()) {
      case FieldDescriptor::CPPTYPE_INT32: r->SetInt32(m, f, static_cast<int32_t>(Int())); break;
      case FieldDescriptor::CPPTYPE_UINT32: r->SetUInt32(m, f, static_cast<uint32_t>(Int())); break;
      case FieldDescriptor::CPPTYPE_INT64: r->SetInt64(m, f, Int()); break;
      case FieldDescriptor::CPPTYPE_UINT64: r->SetUInt64(m, f, static_cast<uint64_t>(Int())); break;
      case FieldDescriptor::CPPTYPE_DOUBLE: r->SetDouble(m, f, Real()); break;
      case FieldDescriptor::CPPTYPE_FLOAT: r->SetFloat(m, f, static_cast<float>(Real())); break;
      case FieldDescriptor::CPPTYPE_BOOL: r->SetBool(m, f, Pick(2) == 1); break;
      case FieldDescriptor::CPPTYPE_ENUM: r->SetEnumValue(m, f, EnumNumber(f)); break;
      case FieldDescriptor::CPPTYPE_STRING: r->SetString(m, f, Text()); break;
      case FieldDescriptor::CPPTYPE_MESSAGE: break;
    }
  }

  void AddValue(Message* m, const FieldDescriptor* f, int depth) {
    const Reflection* r = m->GetReflection();
    switch (f->cpp_type()) {
      case FieldDescriptor::CPPTYPE_INT32: r->AddInt32(m, f, static_cast<int32_t>(Int())); break;
      case FieldDescriptor::CPPTYPE_UINT32: r->AddUInt32(m, f, static_cast<uint32_t>(Int())); break;
      case FieldDescriptor::CPPTYPE_INT64: r->AddInt64(m, f, Int()); break;
      case FieldDescriptor::CPPTYPE_UINT64: r->AddUInt64(m, f, static_cast<uint64_t>(Int())); break;
      case FieldDescriptor::CPPTYPE_DOUBLE: r->AddDouble(m, f, Real()); break;
      case FieldDescriptor::CPPTYPE_FLOAT: r->AddFloat(m, f, static_cast<float>(Real())); break;
      case FieldDescriptor::CPPTYPE_BOOL: r->AddBool(m, f, Pick(2) == 1); break;
      case FieldDescriptor::CPPTYPE_ENUM: r->AddEnumValue(m, f, EnumNumber(f)); break;
      case FieldDescriptor::CPPTYPE_STRING: r->AddString(m, f, Text()); break;
      case FieldDescriptor::CPPTYPE_MESSAGE:
        if (depth < 4) Fill(r->AddMessage(m, f), depth + 1);
        break;
    }
  }

  std::mt19937 rng_;
  int max_map_entries_;
};

TEST(ProtoJson, WritesProtobufsBytesForEveryMessageTypeOfTheApi) {
  const std::vector<const Descriptor*> types = AllMessageTypes();
  ASSERT_GT(types.size(), 100u);  // the walk found the API, not one file
  RandomFiller filler(20261205, /*max_map_entries=*/1);
  int compared = 0;
  for (const Descriptor* type : types) {
    const Message* prototype = google::protobuf::MessageFactory::generated_factory()->GetPrototype(type);
    ASSERT_NE(prototype, nullptr) << type->full_name();
    for (int i = 0; i < 40; ++i) {
      std::unique_ptr<Message> message(prototype->New());
      if (i > 0) filler.Fill(message.get(), 0);  // the first one empty
      ASSERT_EQ(ToJson(*message), ProtobufJson(*message))
          << type->full_name() << " #" << i << ":\n" << message->DebugString();
      ++compared;
    }
  }
  EXPECT_EQ(compared, 40 * static_cast<int>(types.size()));
}

// Types the API does not use yet (float, maps with number or bool keys,
// repeated bytes, oneofs of messages), on a message type made here.
TEST(ProtoJson, WritesProtobufsBytesForTypesTheApiDoesNotUseYet) {
  google::protobuf::FileDescriptorProto file;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(R"pb(
    name: "kitchen.proto" package: "kitchen" syntax: "proto3"
    message_type {
      name: "Sink"
      field { name: "f" number: 1 type: TYPE_FLOAT label: LABEL_OPTIONAL }
      field { name: "fs" number: 2 type: TYPE_FLOAT label: LABEL_REPEATED }
      field { name: "by_number" number: 3 type: TYPE_MESSAGE label: LABEL_REPEATED
              type_name: ".kitchen.Sink.ByNumberEntry" }
      field { name: "by_flag" number: 4 type: TYPE_MESSAGE label: LABEL_REPEATED
              type_name: ".kitchen.Sink.ByFlagEntry" }
      field { name: "blobs" number: 5 type: TYPE_BYTES label: LABEL_REPEATED }
      field { name: "child" number: 6 type: TYPE_MESSAGE label: LABEL_OPTIONAL
              type_name: ".kitchen.Sink" oneof_index: 0 }
      field { name: "word" number: 7 type: TYPE_STRING label: LABEL_OPTIONAL oneof_index: 0 }
      field { name: "s" number: 8 type: TYPE_SINT64 label: LABEL_OPTIONAL }
      field { name: "u" number: 9 type: TYPE_FIXED32 label: LABEL_OPTIONAL }
      oneof_decl { name: "either" }
      nested_type {
        name: "ByNumberEntry" options { map_entry: true }
        field { name: "key" number: 1 type: TYPE_INT64 label: LABEL_OPTIONAL }
        field { name: "value" number: 2 type: TYPE_FLOAT label: LABEL_OPTIONAL }
      }
      nested_type {
        name: "ByFlagEntry" options { map_entry: true }
        field { name: "key" number: 1 type: TYPE_BOOL label: LABEL_OPTIONAL }
        field { name: "value" number: 2 type: TYPE_MESSAGE label: LABEL_OPTIONAL
                type_name: ".kitchen.Sink" }
      }
    })pb", &file));
  google::protobuf::DescriptorPool pool;
  const FileDescriptor* built = pool.BuildFile(file);
  ASSERT_NE(built, nullptr);
  google::protobuf::DynamicMessageFactory factory(&pool);
  const Message* prototype = factory.GetPrototype(built->message_type(0));
  RandomFiller filler(11, /*max_map_entries=*/1);
  for (int i = 0; i < 2000; ++i) {
    std::unique_ptr<Message> message(prototype->New());
    filler.Fill(message.get(), 0);
    ASSERT_EQ(ToJson(*message), ProtobufJson(*message)) << message->DebugString();
  }
}

TEST(ProtoJson, MapsOfManyEntriesReadBackToTheSameMessageInKeyOrder) {
  RandomFiller filler(7, /*max_map_entries=*/6);
  for (const Descriptor* type : AllMessageTypes()) {
    const Message* prototype = google::protobuf::MessageFactory::generated_factory()->GetPrototype(type);
    for (int i = 0; i < 10; ++i) {
      std::unique_ptr<Message> message(prototype->New());
      filler.Fill(message.get(), 0);
      std::unique_ptr<Message> back(prototype->New());
      const std::string json = ToJson(*message);
      ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(json, back.get()).ok()) << json;
      google::protobuf::util::DefaultFieldComparator comparator;
      comparator.set_treat_nan_as_equal(true);  // and -0 reads back as 0, equal as a double
      google::protobuf::util::MessageDifferencer differencer;
      differencer.set_field_comparator(&comparator);
      differencer.set_message_field_comparison(google::protobuf::util::MessageDifferencer::EQUIVALENT);
      std::string difference;
      differencer.ReportDifferencesToString(&difference);
      EXPECT_TRUE(differencer.Compare(*message, *back)) << type->full_name() << ": " << difference;
    }
  }
  v1::Node node;
  (*node.mutable_labels())["zone"] = "b";
  (*node.mutable_labels())["gpu"] = "h200";
  (*node.mutable_labels())["region"] = "eu";
  const std::string json = ToJson(node);
  const size_t gpu = json.find("\"gpu\""), region = json.find("\"region\""), zone = json.find("\"zone\"");
  ASSERT_NE(zone, std::string::npos) << json;
  EXPECT_LT(gpu, region);
  EXPECT_LT(region, zone);
}

TEST(ProtoJson, TextThatIsNotUtf8ShowsEachBadByteAsAReplacementCharacter) {
  v1::HistoryRequest request;
  request.set_node(std::string("gpu\xff-0\xc3", 7));  // a stray byte, a cut sequence
  const std::string json = ToJson(request);
  EXPECT_TRUE(absl::StrContains(json, "\"gpu\xef\xbf\xbd-0\xef\xbf\xbd\"")) << json;
}

}  // namespace
}  // namespace fleetbench
