#include "storage/sample_params.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"

namespace fleetbench::storage {
namespace {

using Entry = ParamMap::value_type;

std::vector<const Entry*> SortedEntries(const ParamMap& params) {
  std::vector<const Entry*> entries;
  entries.reserve(params.size());
  for (const auto& entry : params) entries.push_back(&entry);
  std::sort(entries.begin(), entries.end(),
            [](const Entry* a, const Entry* b) { return a->first < b->first; });
  return entries;
}

// Appends map entries {1: key, 2: value} of Sample.params, by hand so that
// no carrier message is built; `with_values` false writes empty values.
void WriteEntries(const std::vector<const Entry*>& entries, bool with_values,
                  std::string& out) {
  if (entries.empty()) return;
  using google::protobuf::io::CodedOutputStream;
  google::protobuf::io::StringOutputStream raw(&out);
  CodedOutputStream coded(&raw);
  constexpr uint32_t kLengthDelimited = 2;
  for (const Entry* entry : entries) {
    const std::string& key = entry->first;
    const absl::string_view value = with_values ? absl::string_view(entry->second) : "";
    const size_t entry_size =
        1 + CodedOutputStream::VarintSize32(static_cast<uint32_t>(key.size())) + key.size() +
        1 + CodedOutputStream::VarintSize32(static_cast<uint32_t>(value.size())) +
        value.size();
    coded.WriteTag((v1::Sample::kParamsFieldNumber << 3) | kLengthDelimited);
    coded.WriteVarint32(static_cast<uint32_t>(entry_size));
    coded.WriteTag((1 << 3) | kLengthDelimited);
    coded.WriteVarint32(static_cast<uint32_t>(key.size()));
    coded.WriteRaw(key.data(), static_cast<int>(key.size()));
    coded.WriteTag((2 << 3) | kLengthDelimited);
    coded.WriteVarint32(static_cast<uint32_t>(value.size()));
    coded.WriteRaw(value.data(), static_cast<int>(value.size()));
  }
}

}  // namespace

bool IsMeasuredParamValue(absl::string_view value) {
  if (value.empty() || value.size() > 32) return false;
  bool digit = false;
  for (char c : value) {
    if (c >= '0' && c <= '9') {
      digit = true;
    } else if (c != '+' && c != '-' && c != '.' && c != 'e' && c != 'E') {
      return false;
    }
  }
  return digit;
}

void SerializeParams(const ParamMap& params, std::string& out) {
  out.clear();
  WriteEntries(SortedEntries(params), true, out);
}

void SplitSampleParams(const ParamMap& params, SplitParams& out) {
  out.kind_params.clear();
  out.measured_keys.clear();
  out.measured_values.clear();
  std::vector<const Entry*> kind;
  std::vector<const Entry*> measured;
  for (const Entry* entry : SortedEntries(params)) {
    (IsMeasuredParamValue(entry->second) ? measured : kind).push_back(entry);
  }
  WriteEntries(kind, true, out.kind_params);
  WriteEntries(measured, false, out.measured_keys);
  for (size_t i = 0; i < measured.size(); ++i) {
    if (i > 0) out.measured_values.push_back(',');
    out.measured_values.append(measured[i]->second);
  }
}

std::string MeasuredDifference(absl::string_view values, absl::string_view kind_default) {
  if (values == kind_default) return "";
  const std::vector<absl::string_view> mine = absl::StrSplit(values, ',');
  const std::vector<absl::string_view> theirs = absl::StrSplit(kind_default, ',');
  // Another key set cannot share a kind; whole values if it ever did.
  if (mine.size() != theirs.size()) return std::string(values);
  std::string out;
  for (size_t i = 0; i < mine.size(); ++i) {
    if (i > 0) out.push_back(',');
    if (mine[i] != theirs[i]) out.append(mine[i].data(), mine[i].size());
  }
  return out;
}

absl::Status AddMeasuredParams(absl::string_view measured_keys,
                               absl::string_view kind_default,
                               std::optional<absl::string_view> stored, v1::Sample& sample) {
  if (measured_keys.empty()) {
    if (kind_default.empty() && (!stored.has_value() || stored->empty())) {
      return absl::OkStatus();
    }
    return absl::DataLossError("measured values without keys");
  }
  v1::Sample keys;
  if (!keys.ParseFromArray(measured_keys.data(), static_cast<int>(measured_keys.size()))) {
    return absl::DataLossError("cannot parse a sample kind's measured keys");
  }
  std::vector<const std::string*> names;
  names.reserve(keys.params_size());
  for (const auto& [key, unused] : keys.params()) names.push_back(&key);
  std::sort(names.begin(), names.end(),
            [](const std::string* a, const std::string* b) { return *a < *b; });
  const std::vector<absl::string_view> defaults = absl::StrSplit(kind_default, ',');
  std::vector<absl::string_view> values = defaults;
  if (stored.has_value()) values = absl::StrSplit(*stored, ',');
  if (values.size() != names.size() || defaults.size() != names.size()) {
    return absl::DataLossError(absl::StrCat("a sample has ", values.size(), " measured values (",
                                            defaults.size(), " by default) for ", names.size(),
                                            " keys"));
  }
  auto& params = *sample.mutable_params();
  for (size_t i = 0; i < names.size(); ++i) {
    params[*names[i]] = std::string(values[i].empty() ? defaults[i] : values[i]);
  }
  return absl::OkStatus();
}

}  // namespace fleetbench::storage
