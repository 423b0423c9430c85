// storage/sample_params.h — how the store keeps a sample's params.
//
// A plugin's params say two things: what was measured (dtype, workload,
// the BLAS build, the fio command it matches) and how the repetitions
// behind the value spread (runs, min_/max_/p10_/p90_<unit>, spread,
// mean_us, iops ...). The first repeats across a node's samples and is
// interned with the benchmark and unit as a sample kind; the second is new
// in every sample and interning it made a kind per sample (the demo: 361
// kinds for 532 samples). So the store splits params by value, not by name:
// a value written as a number ("12", "0.183943", "-1e-05") is *measured*
// and stored with the sample, everything else goes to the kind. The rule
// decides only where a value lies, never what is read back: reading joins
// the two into the params that were written, text for text.
//
// Stored forms:
//  - kind params and measured keys: the serialization of a Sample holding
//    only `params` (the measured keys with empty values), entries in key
//    order, so equal maps give equal bytes;
//  - measured values: the numbers, in the keys' order, joined by ','
//    (a number as the rule defines it has no ','). A kind keeps its first
//    sample's values as its default; a sample stores only the fields that
//    differ from it, an empty field standing for the default's (a number
//    is never empty), and nothing (NULL) when none differs: a shape's
//    numbers (m, n, k) cost a sample nothing, its statistics only
//    themselves.
#ifndef FLEETBENCH_STORAGE_SAMPLE_PARAMS_H_
#define FLEETBENCH_STORAGE_SAMPLE_PARAMS_H_

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "fleetbench/v1/result.pb.h"
#include "google/protobuf/map.h"

namespace fleetbench::storage {

using ParamMap = google::protobuf::Map<std::string, std::string>;

// Whether `value` is stored with the sample: 1 to 32 characters of
// [0-9+-.eE], at least one digit.
bool IsMeasuredParamValue(absl::string_view value);

// All of `params` in the stored form above (the layout before schema 12).
void SerializeParams(const ParamMap& params, std::string& out);

// `params` split by IsMeasuredParamValue; each output is cleared first and
// empty when it has nothing.
struct SplitParams {
  std::string kind_params;
  std::string measured_keys;
  std::string measured_values;
};
void SplitSampleParams(const ParamMap& params, SplitParams& out);

// What a sample stores for `values` under a kind whose default is
// `kind_default`: "" for NULL (all the default's), else the differing
// fields with the others empty.
std::string MeasuredDifference(absl::string_view values, absl::string_view kind_default);

// Adds the measured params back to `sample` from the kind's keys and
// default and the sample's stored difference (nullopt for NULL). DataLoss
// when any cannot be read or their counts differ.
absl::Status AddMeasuredParams(absl::string_view measured_keys,
                               absl::string_view kind_default,
                               std::optional<absl::string_view> stored, v1::Sample& sample);

}  // namespace fleetbench::storage

#endif  // FLEETBENCH_STORAGE_SAMPLE_PARAMS_H_
