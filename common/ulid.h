// common/ulid.h — unique, time-ordered ids for samples, reports and runs.
// A ULID is 48 bits of milliseconds and 80 random bits in Crockford base32
// (26 characters). Time order keeps SQLite's primary-key inserts appending.
// Thread-safe.
#ifndef FLEETBENCH_COMMON_ULID_H_
#define FLEETBENCH_COMMON_ULID_H_

#include <string>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace fleetbench {

std::string NewUlid(absl::Time now = absl::Now());
// True when `id` is 26 Crockford base32 characters.
bool IsUlid(const std::string& id);

}  // namespace fleetbench

#endif  // FLEETBENCH_COMMON_ULID_H_
