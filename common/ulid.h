// common/ulid.h — unique, time-ordered ids for samples, reports and runs.
// A ULID is 48 bits of milliseconds and 80 random bits in Crockford base32
// (26 characters). Time order keeps SQLite's primary-key inserts appending.
// Thread-safe.
#ifndef FLEETBENCH_COMMON_ULID_H_
#define FLEETBENCH_COMMON_ULID_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace fleetbench {

std::string NewUlid(absl::Time now = absl::Now());
// True when `id` is 26 Crockford base32 characters.
bool IsUlid(const std::string& id);

// The 128 bits of a canonical ULID (26 upper-case Crockford characters,
// the first at most '7'), big-endian, so byte order is the text's order;
// nullopt for anything else. The store keeps sample ids this way: 16
// bytes instead of 26.
std::optional<std::array<uint8_t, 16>> UlidBytes(absl::string_view id);
// The canonical text of 16 bytes made by UlidBytes.
std::string UlidFromBytes(const std::array<uint8_t, 16>& bytes);

}  // namespace fleetbench

#endif  // FLEETBENCH_COMMON_ULID_H_
