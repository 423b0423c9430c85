#include "common/ulid.h"

#include <cstdint>
#include <mutex>
#include <random>

namespace fleetbench {
namespace {

constexpr char kAlphabet[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

uint64_t RandomBits() {
  // One generator per thread, seeded from the OS: ids from two agents or two
  // threads never share a sequence.
  thread_local std::mt19937_64 gen{std::random_device{}()};
  return gen();
}

}  // namespace

std::string NewUlid(absl::Time now) {
  const uint64_t ms = static_cast<uint64_t>(absl::ToUnixMillis(now));
  const uint64_t r1 = RandomBits();
  const uint64_t r2 = RandomBits();
  // 128 bits: 48 time | 80 random, written as 26 base32 digits (130 bits,
  // the top two always zero).
  unsigned __int128 v = (static_cast<unsigned __int128>(ms & 0xFFFFFFFFFFFFull) << 80) |
                        (static_cast<unsigned __int128>(r1 & 0xFFFFull) << 64) | r2;
  std::string out(26, '0');
  for (int i = 25; i >= 0; --i) {
    out[i] = kAlphabet[static_cast<int>(v & 31)];
    v >>= 5;
  }
  return out;
}

bool IsUlid(const std::string& id) {
  if (id.size() != 26) return false;
  for (char c : id) {
    bool found = false;
    for (const char* a = kAlphabet; *a; ++a) found |= (*a == c);
    if (!found) return false;
  }
  return true;
}

}  // namespace fleetbench
