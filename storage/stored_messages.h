// storage/stored_messages.h — how every backend writes the parts of a
// record that are messages or lists: one message as its deterministic
// serialization (equal facts, equal bytes, so "changed" is a byte compare),
// a list of messages as protobuf's delimited format (no wrapper proto), a
// list of node names as one text, a name per line (names never hold a
// newline: [A-Za-z0-9._-]). Both backends store these bytes as they are,
// so a history copied from one into the other keeps them.
#ifndef FLEETBENCH_STORAGE_STORED_MESSAGES_H_
#define FLEETBENCH_STORAGE_STORED_MESSAGES_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/message_lite.h"
#include "google/protobuf/util/delimited_message_util.h"

namespace fleetbench::storage {

inline std::string SerializeDeterministic(const google::protobuf::MessageLite& m) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream raw(&out);
    google::protobuf::io::CodedOutputStream coded(&raw);
    coded.SetSerializationDeterministic(true);
    m.SerializeToCodedStream(&coded);
  }
  return out;
}

template <typename Message>
std::string SerializeDelimited(const std::vector<Message>& messages) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream raw(&out);
    google::protobuf::io::CodedOutputStream coded(&raw);
    coded.SetSerializationDeterministic(true);
    for (const Message& m : messages) {
      google::protobuf::util::SerializeDelimitedToCodedStream(m, &coded);
    }
  }
  return out;
}

// DATA_LOSS naming `what` when the bytes do not parse.
template <typename Message>
absl::StatusOr<std::vector<Message>> ParseDelimited(absl::string_view bytes,
                                                    absl::string_view what) {
  std::vector<Message> out;
  google::protobuf::io::ArrayInputStream raw(bytes.data(), static_cast<int>(bytes.size()));
  google::protobuf::io::CodedInputStream coded(&raw);
  while (true) {
    Message m;
    bool clean_eof = false;
    if (!google::protobuf::util::ParseDelimitedFromCodedStream(&m, &coded, &clean_eof)) {
      if (clean_eof) break;
      return absl::DataLossError(absl::StrCat("cannot parse stored ", what));
    }
    out.push_back(std::move(m));
  }
  return out;
}

inline std::string JoinNames(const std::vector<std::string>& names) {
  return absl::StrJoin(names, "\n");
}
inline std::vector<std::string> SplitNames(absl::string_view text) {
  if (text.empty()) return {};
  return absl::StrSplit(text, '\n');
}

}  // namespace fleetbench::storage

#endif  // FLEETBENCH_STORAGE_STORED_MESSAGES_H_
