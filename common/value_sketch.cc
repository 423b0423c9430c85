#include "common/value_sketch.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace fleetbench {
namespace {

constexpr double kGamma =
    (1 + ValueSketch::kRelativeAccuracy) / (1 - ValueSketch::kRelativeAccuracy);
const double kLogGamma = std::log(kGamma);
constexpr uint8_t kEncodingVersion = 1;

int32_t IndexOf(double magnitude) {
  return static_cast<int32_t>(std::ceil(std::log(magnitude) / kLogGamma));
}

// Within α of every magnitude in (γ^(i-1), γ^i].
double ValueOf(int32_t index) {
  return std::exp(static_cast<double>(index) * kLogGamma) * 2 / (kGamma + 1);
}

const int32_t kMinIndex = IndexOf(ValueSketch::kMinMagnitude);
const int32_t kMaxIndex = IndexOf(std::numeric_limits<double>::max());

void PutVarint(uint64_t v, std::string& out) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

bool GetVarint(absl::string_view& in, uint64_t& v) {
  v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (in.empty()) return false;
    const auto byte = static_cast<uint8_t>(in.front());
    in.remove_prefix(1);
    if (shift == 63 && byte > 1) return false;
    v |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) return true;
  }
  return false;
}

void PutDouble(double d, std::string& out) {
  uint64_t bits = std::bit_cast<uint64_t>(d);
  if constexpr (std::endian::native == std::endian::big) bits = __builtin_bswap64(bits);
  char bytes[8];
  std::memcpy(bytes, &bits, 8);
  out.append(bytes, 8);
}

bool GetDouble(absl::string_view& in, double& d) {
  if (in.size() < 8) return false;
  uint64_t bits;
  std::memcpy(&bits, in.data(), 8);
  if constexpr (std::endian::native == std::endian::big) bits = __builtin_bswap64(bits);
  d = std::bit_cast<double>(bits);
  in.remove_prefix(8);
  return true;
}

absl::Status Malformed(absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("value sketch: ", why));
}

}  // namespace

void ValueSketch::Buckets::Add(int32_t index, uint64_t n) {
  if (counts.empty()) {
    offset = index;
    counts.assign(1, 0);
  }
  const int32_t top = offset + static_cast<int32_t>(counts.size()) - 1;
  const int32_t new_top = std::max(top, index);
  int32_t new_low = std::min(offset, index);
  // Past the cap the smallest magnitudes share the lowest kept bucket.
  new_low = std::max(new_low, new_top - kMaxBuckets + 1);
  if (new_low != offset || new_top != top) {
    std::vector<uint64_t> grown(static_cast<size_t>(new_top - new_low + 1), 0);
    for (size_t k = 0; k < counts.size(); ++k) {
      const int32_t i = std::max(offset + static_cast<int32_t>(k), new_low);
      grown[static_cast<size_t>(i - new_low)] += counts[k];
    }
    counts = std::move(grown);
    offset = new_low;
  }
  counts[static_cast<size_t>(std::max(index, offset) - offset)] += n;
  total += n;
}

void ValueSketch::Add(double value) {
  if (!std::isfinite(value)) return;
  if (count_ == 0) {
    min_ = max_ = value;
  } else {
    min_ = std::min(min_, value);
    max_ = std::max(max_, value);
  }
  ++count_;
  const double magnitude = std::fabs(value);
  if (magnitude < kMinMagnitude) {
    ++zeros_;
  } else if (value > 0) {
    positive_.Add(IndexOf(magnitude), 1);
  } else {
    negative_.Add(IndexOf(magnitude), 1);
  }
}

void ValueSketch::Merge(const ValueSketch& other) {
  if (other.count_ == 0) return;
  if (count_ == 0) {
    *this = other;
    return;
  }
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
  count_ += other.count_;
  zeros_ += other.zeros_;
  for (auto [mine, theirs] : {std::pair{&positive_, &other.positive_},
                              std::pair{&negative_, &other.negative_}}) {
    if (theirs->counts.empty()) continue;
    // Widen once to both ends, then add bucket by bucket.
    mine->Add(theirs->offset + static_cast<int32_t>(theirs->counts.size()) - 1, 0);
    mine->Add(theirs->offset, 0);
    for (size_t k = 0; k < theirs->counts.size(); ++k) {
      if (theirs->counts[k] != 0) {
        mine->Add(theirs->offset + static_cast<int32_t>(k), theirs->counts[k]);
      }
    }
  }
}

double ValueSketch::OrderStatistic(uint64_t k) const {
  if (k < negative_.total) {
    // Most negative first: the largest magnitudes.
    for (size_t j = negative_.counts.size(); j-- > 0;) {
      if (k < negative_.counts[j]) return -ValueOf(negative_.offset + static_cast<int32_t>(j));
      k -= negative_.counts[j];
    }
  }
  k -= std::min(k, negative_.total);
  if (k < zeros_) return 0;
  k -= zeros_;
  for (size_t j = 0; j < positive_.counts.size(); ++j) {
    if (k < positive_.counts[j]) return ValueOf(positive_.offset + static_cast<int32_t>(j));
    k -= positive_.counts[j];
  }
  return max_;
}

double ValueSketch::Percentile(double q) const {
  if (count_ == 0) return 0;
  q = std::clamp(q, 0.0, 1.0);
  const double rank = q * static_cast<double>(count_ - 1);
  const auto lo = static_cast<uint64_t>(std::floor(rank));
  const uint64_t hi = std::min(lo + 1, count_ - 1);
  auto at = [&](uint64_t k) {
    if (k == 0) return min_;
    if (k == count_ - 1) return max_;
    return std::clamp(OrderStatistic(k), min_, max_);
  };
  const double a = at(lo);
  const double b = at(hi);
  return std::clamp(a + (b - a) * (rank - static_cast<double>(lo)), min_, max_);
}

std::string ValueSketch::Encode() const {
  std::string out;
  out.push_back(static_cast<char>(kEncodingVersion));
  PutVarint(zeros_, out);
  PutDouble(min(), out);
  PutDouble(max(), out);
  for (const Buckets* b : {&positive_, &negative_}) {
    // Zero buckets at the ends (left by Merge's widening) are not written.
    size_t first = 0;
    size_t last = b->counts.size();
    while (first < last && b->counts[first] == 0) ++first;
    while (last > first && b->counts[last - 1] == 0) --last;
    PutVarint(last - first, out);
    if (last == first) continue;
    const int64_t offset = b->offset + static_cast<int64_t>(first);
    PutVarint(static_cast<uint64_t>(offset < 0 ? ((-offset) << 1) - 1 : offset << 1), out);
    for (size_t k = first; k < last; ++k) PutVarint(b->counts[k], out);
  }
  return out;
}

absl::StatusOr<ValueSketch> ValueSketch::Decode(absl::string_view in) {
  ValueSketch s;
  if (in.empty() || static_cast<uint8_t>(in.front()) != kEncodingVersion) {
    return Malformed("unknown encoding version");
  }
  in.remove_prefix(1);
  if (!GetVarint(in, s.zeros_)) return Malformed("truncated zero count");
  if (!GetDouble(in, s.min_) || !GetDouble(in, s.max_)) return Malformed("truncated min/max");
  if (!std::isfinite(s.min_) || !std::isfinite(s.max_) || s.min_ > s.max_) {
    return Malformed("min/max not finite and ordered");
  }
  uint64_t count = s.zeros_;
  for (Buckets* b : {&s.positive_, &s.negative_}) {
    uint64_t n = 0;
    if (!GetVarint(in, n)) return Malformed("truncated bucket count");
    if (n > static_cast<uint64_t>(kMaxBuckets)) return Malformed("too many buckets");
    if (n == 0) continue;
    uint64_t zigzag = 0;
    if (!GetVarint(in, zigzag)) return Malformed("truncated bucket offset");
    const int64_t offset = (zigzag & 1) ? -static_cast<int64_t>((zigzag + 1) >> 1)
                                        : static_cast<int64_t>(zigzag >> 1);
    if (offset < kMinIndex || offset + static_cast<int64_t>(n) - 1 > kMaxIndex) {
      return Malformed("bucket index out of range");
    }
    b->offset = static_cast<int32_t>(offset);
    b->counts.resize(n);
    for (uint64_t k = 0; k < n; ++k) {
      if (!GetVarint(in, b->counts[k])) return Malformed("truncated bucket");
      if (b->counts[k] > std::numeric_limits<uint64_t>::max() - b->total) {
        return Malformed("counts overflow");
      }
      b->total += b->counts[k];
    }
    if (b->counts.front() == 0 || b->counts.back() == 0) return Malformed("empty end bucket");
    if (b->total > std::numeric_limits<uint64_t>::max() - count) return Malformed("counts overflow");
    count += b->total;
  }
  if (!in.empty()) return Malformed("trailing bytes");
  if (count == 0 && (s.min_ != 0 || s.max_ != 0)) return Malformed("empty sketch with a range");
  s.count_ = count;
  return s;
}

}  // namespace fleetbench
