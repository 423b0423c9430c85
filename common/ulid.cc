#include "common/ulid.h"

#include "absl/base/const_init.h"
#include "absl/synchronization/mutex.h"

#include <array>
#include <cstdint>
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
  // Monotonic within this process (the ULID spec's monotonic mode): an id
  // made in the same millisecond as the previous one, or while the clock
  // stepped back, is the previous one plus one. Ids made in one place thus
  // sort in the order they were made, which keeps task order and primary-key
  // inserts in order.
  static absl::Mutex mu(absl::kConstInit);
  static uint64_t last_ms = 0;
  static unsigned __int128 last_random = 0;  // 80 bits used
  const uint64_t ms = static_cast<uint64_t>(absl::ToUnixMillis(now)) & 0xFFFFFFFFFFFFull;
  unsigned __int128 random;
  uint64_t stamp;
  {
    absl::MutexLock lock(&mu);
    if (ms > last_ms) {
      last_ms = ms;
      last_random = (static_cast<unsigned __int128>(RandomBits() & 0xFFFFull) << 64) | RandomBits();
    } else {
      ++last_random;  // 80 random bits never overflow in practice
    }
    stamp = last_ms;
    random = last_random & ((static_cast<unsigned __int128>(1) << 80) - 1);
  }
  unsigned __int128 v = (static_cast<unsigned __int128>(stamp) << 80) | random;
  std::string out(26, '0');
  for (int i = 25; i >= 0; --i) {
    out[i] = kAlphabet[static_cast<int>(v & 31)];
    v >>= 5;
  }
  return out;
}

namespace {

// Every id of every sample is checked on ingest: one table lookup per
// character (a scan of the 32 letters per character was 8% of the ingest
// actor's CPU in a profile).
constexpr std::array<bool, 256> kIsUlidChar = [] {
  std::array<bool, 256> table{};
  for (const char* a = kAlphabet; *a; ++a) {
    table[static_cast<unsigned char>(*a)] = true;
  }
  return table;
}();

}  // namespace

bool IsUlid(const std::string& id) {
  if (id.size() != 26) return false;
  for (char c : id) {
    if (!kIsUlidChar[static_cast<unsigned char>(c)]) return false;
  }
  return true;
}

namespace {

// Crockford base32 value of each canonical character, -1 for the rest.
constexpr std::array<int8_t, 256> kUlidValue = [] {
  std::array<int8_t, 256> table{};
  table.fill(-1);
  for (int i = 0; kAlphabet[i] != '\0'; ++i) {
    table[static_cast<unsigned char>(kAlphabet[i])] = static_cast<int8_t>(i);
  }
  return table;
}();

}  // namespace

std::optional<std::array<uint8_t, 16>> UlidBytes(absl::string_view id) {
  // 26 characters carry 130 bits: the first may use only the low 3.
  if (id.size() != 26 || kUlidValue[static_cast<unsigned char>(id[0])] > 7) {
    return std::nullopt;
  }
  unsigned __int128 v = 0;
  for (char c : id) {
    const int8_t digit = kUlidValue[static_cast<unsigned char>(c)];
    if (digit < 0) return std::nullopt;
    v = (v << 5) | static_cast<unsigned>(digit);
  }
  std::array<uint8_t, 16> bytes;
  for (int i = 15; i >= 0; --i) {
    bytes[i] = static_cast<uint8_t>(v & 0xFF);
    v >>= 8;
  }
  return bytes;
}

std::string UlidFromBytes(const std::array<uint8_t, 16>& bytes) {
  unsigned __int128 v = 0;
  for (uint8_t b : bytes) v = (v << 8) | b;
  std::string out(26, '0');
  for (int i = 25; i >= 0; --i) {
    out[i] = kAlphabet[static_cast<int>(v & 31)];
    v >>= 5;
  }
  return out;
}

}  // namespace fleetbench
