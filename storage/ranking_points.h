// storage/ranking_points.h — the packed form of a ranking point, as stored
// in the recent_points and metric_points blobs (docs/storage.md, Ranking
// points): metric id, node id, run key, value bits, time in ms; each 8 bytes
// little-endian, 40 bytes a point. The layout is part of the file format.
//
// Inline: the ranking scan unpacks a million points a query.
#ifndef FLEETBENCH_STORAGE_RANKING_POINTS_H_
#define FLEETBENCH_STORAGE_RANKING_POINTS_H_

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace fleetbench::storage {

inline constexpr size_t kPointBytes = 40;

struct RankingPoint {
  int64_t metric_id;
  int64_t node_id;
  int64_t run_key;
  double value;
  int64_t time_ms;
};

inline void PutU64(char* out, uint64_t v) {
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap64(v);
  std::memcpy(out, &v, sizeof v);
}
inline uint64_t GetU64(const char* in) {
  uint64_t v;
  std::memcpy(&v, in, sizeof v);
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap64(v);
  return v;
}

// Writes kPointBytes to `out`.
inline void PackPoint(const RankingPoint& p, char* out) {
  uint64_t value_bits;
  std::memcpy(&value_bits, &p.value, sizeof value_bits);
  PutU64(out, static_cast<uint64_t>(p.metric_id));
  PutU64(out + 8, static_cast<uint64_t>(p.node_id));
  PutU64(out + 16, static_cast<uint64_t>(p.run_key));
  PutU64(out + 24, value_bits);
  PutU64(out + 32, static_cast<uint64_t>(p.time_ms));
}

// The i-th point of `packed` (which CheckPacked accepted).
inline RankingPoint PointAt(absl::string_view packed, size_t i) {
  const char* p = packed.data() + i * kPointBytes;
  RankingPoint point;
  point.metric_id = static_cast<int64_t>(GetU64(p));
  point.node_id = static_cast<int64_t>(GetU64(p + 8));
  point.run_key = static_cast<int64_t>(GetU64(p + 16));
  const uint64_t value_bits = GetU64(p + 24);
  std::memcpy(&point.value, &value_bits, sizeof point.value);
  point.time_ms = static_cast<int64_t>(GetU64(p + 32));
  return point;
}

// DATA_LOSS unless `packed` is whole points.
inline absl::Status CheckPacked(absl::string_view packed) {
  if (packed.size() % kPointBytes != 0) {
    return absl::DataLossError(absl::StrCat(
        "stored ranking points have ", packed.size(),
        " bytes, not a multiple of ", kPointBytes));
  }
  return absl::OkStatus();
}

}  // namespace fleetbench::storage

#endif  // FLEETBENCH_STORAGE_RANKING_POINTS_H_
