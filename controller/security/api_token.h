// controller/security/api_token.h — the text of an API token, its secret's hash and
// the rules for token names (docs/security.md, Tokens).
//
// A token is "fbt1.<id>.<secret>": id is 8 random bytes and secret 32
// random bytes, both lower-case hex, from OpenSSL's RAND_bytes. The id is
// not secret: it finds the token's row with one indexed lookup, after which
// the SHA-256 of the secret is compared in constant time. A plain SHA-256
// is enough because the secret is 256 random bits: a slow KDF (bcrypt,
// argon2) protects low-entropy passwords from guessing, and nothing is
// gained by slowing the guessing of a 2^256 space, while every RPC would
// pay for it.
#ifndef FLEETBENCH_CONTROLLER_SECURITY_API_TOKEN_H_
#define FLEETBENCH_CONTROLLER_SECURITY_API_TOKEN_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace fleetbench::controller {

inline constexpr char kApiTokenPrefix[] = "fbt1.";
inline constexpr size_t kApiTokenIdHex = 16;
inline constexpr size_t kApiTokenSecretHex = 64;
inline constexpr size_t kMaxTokenNameLength = 64;

struct ApiTokenText {
  std::string id;      // hex
  std::string secret;  // hex
  std::string text;    // fbt1.<id>.<secret>
};

// A fresh token; INTERNAL when the random generator fails.
absl::StatusOr<ApiTokenText> NewApiToken();
// Whether `token` claims to be an API token (has the prefix): such a token
// is judged as one, never as the shared token.
bool HasApiTokenPrefix(absl::string_view token);
// UNAUTHENTICATED "malformed token: ..." (never quoting it) unless `token`
// is exactly fbt1.<16 hex>.<64 hex>.
absl::StatusOr<ApiTokenText> ParseApiToken(absl::string_view token);
// SHA-256 of `secret`, 32 raw bytes.
std::string HashTokenSecret(absl::string_view secret);
// Constant-time equality of two hashes (CRYPTO_memcmp); false when the
// sizes differ.
bool TokenHashesMatch(absl::string_view a, absl::string_view b);
// OK for 1-64 of A-Z a-z 0-9 . _ -; INVALID_ARGUMENT (quoting it clipped).
absl::Status CheckTokenName(absl::string_view name);

}  // namespace fleetbench::controller

#endif  // FLEETBENCH_CONTROLLER_SECURITY_API_TOKEN_H_
