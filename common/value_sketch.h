// common/value_sketch.h — a mergeable summary of many values whose
// percentiles stay within a fixed relative error of the exact ones, for the
// history's day summaries (docs/storage.md, Day summaries).
//
// The scheme is DDSketch's (Masson, Rim and Lee, VLDB 2019): a value v > 0
// counts in bucket i = ceil(log_γ v), with γ = (1 + α) / (1 − α), and a
// bucket stands for 2γ^i / (γ + 1), within α of every value in it; negative
// values count by |v| in a second set of buckets, zeros apart. Adding is
// O(1), merging two sketches adds their buckets (so the merge of day
// sketches is the sketch of all their values, exactly), and a percentile
// walks the buckets.
//
// Contract:
//   * count(), min() and max() are exact; non-finite values are not added.
//   * Percentile(q) interpolates between the two order statistics around
//     rank q·(n − 1) as common/stats.h's Percentile does (type 7), with each
//     order statistic replaced by its bucket's value, clamped to [min, max].
//     When those two statistics have the same sign the answer is within
//     kRelativeAccuracy (0.5%) of the exact percentile; q = 0 and q = 1
//     give min and max exactly. Values below kMinMagnitude in magnitude
//     count as 0.
//   * At most kMaxBuckets buckets per sign: values spanning more than a
//     factor of about 7·10^8 merge their smallest magnitudes into one
//     bucket, which then loses the bound for the low percentiles only.
//   * Encode/Decode round-trip exactly; Decode refuses (INVALID_ARGUMENT)
//     anything Encode could not have written, whatever its bytes.
// Thread safety: none; a sketch is a value.
#ifndef FLEETBENCH_COMMON_VALUE_SKETCH_H_
#define FLEETBENCH_COMMON_VALUE_SKETCH_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace fleetbench {

class ValueSketch {
 public:
  static constexpr double kRelativeAccuracy = 0.005;
  static constexpr double kMinMagnitude = 1e-300;
  static constexpr int kMaxBuckets = 2048;

  void Add(double value);
  void Merge(const ValueSketch& other);

  uint64_t count() const { return count_; }
  bool empty() const { return count_ == 0; }
  double min() const { return count_ ? min_ : 0; }
  double max() const { return count_ ? max_ : 0; }
  // 0 for an empty sketch, like Percentile of no values.
  double Percentile(double q) const;
  double Median() const { return Percentile(0.5); }

  std::string Encode() const;
  static absl::StatusOr<ValueSketch> Decode(absl::string_view bytes);

 private:
  // Buckets of one sign: counts[k] is bucket offset + k.
  struct Buckets {
    int32_t offset = 0;
    std::vector<uint64_t> counts;
    void Add(int32_t index, uint64_t n);
    uint64_t total = 0;
  };
  // The value the k-th (0-based) smallest added value is taken to be.
  double OrderStatistic(uint64_t k) const;

  Buckets positive_;
  Buckets negative_;  // by magnitude
  uint64_t zeros_ = 0;
  uint64_t count_ = 0;
  double min_ = 0;
  double max_ = 0;
};

}  // namespace fleetbench

#endif  // FLEETBENCH_COMMON_VALUE_SKETCH_H_
