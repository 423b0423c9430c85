#include "controller/security/api_token.h"

#include "controller/security/auth.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/reason.h"

namespace fleetbench::controller {
namespace {

absl::StatusOr<std::string> RandomHex(size_t bytes) {
  std::string raw(bytes, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(raw.data()), static_cast<int>(bytes)) != 1) {
    return absl::InternalError("the random generator failed (OpenSSL RAND_bytes)");
  }
  return absl::BytesToHexString(raw);
}

bool IsLowerHex(absl::string_view s) {
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<ApiTokenText> NewApiToken() {
  ApiTokenText t;
  absl::StatusOr<std::string> id = RandomHex(kApiTokenIdHex / 2);
  if (!id.ok()) return id.status();
  absl::StatusOr<std::string> secret = RandomHex(kApiTokenSecretHex / 2);
  if (!secret.ok()) return secret.status();
  t.id = std::move(*id);
  t.secret = std::move(*secret);
  t.text = absl::StrCat(kApiTokenPrefix, t.id, ".", t.secret);
  return t;
}

bool HasApiTokenPrefix(absl::string_view token) {
  return absl::StartsWith(token, kApiTokenPrefix);
}

absl::StatusOr<ApiTokenText> ParseApiToken(absl::string_view token) {
  const absl::Status malformed = absl::UnauthenticatedError(
      "malformed token: an API token is fbt1.<16 hex>.<64 hex> (docs/security.md)");
  if (!HasApiTokenPrefix(token)) return malformed;
  absl::string_view rest = token.substr(sizeof(kApiTokenPrefix) - 1);
  if (rest.size() != kApiTokenIdHex + 1 + kApiTokenSecretHex || rest[kApiTokenIdHex] != '.') {
    return malformed;
  }
  ApiTokenText t;
  t.id = std::string(rest.substr(0, kApiTokenIdHex));
  t.secret = std::string(rest.substr(kApiTokenIdHex + 1));
  if (!IsLowerHex(t.id) || !IsLowerHex(t.secret)) return malformed;
  t.text = std::string(token);
  return t;
}

std::string HashTokenSecret(absl::string_view secret) {
  std::string digest(SHA256_DIGEST_LENGTH, '\0');
  SHA256(reinterpret_cast<const unsigned char*>(secret.data()), secret.size(),
         reinterpret_cast<unsigned char*>(digest.data()));
  return digest;
}

bool TokenHashesMatch(absl::string_view a, absl::string_view b) {
  if (a.size() != b.size() || a.empty()) return false;
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

absl::Status CheckTokenName(absl::string_view name) {
  bool ok = !name.empty() && name.size() <= kMaxTokenNameLength;
  for (char c : name) {
    if (!(absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' ||
          c == '-')) {
      ok = false;
    }
  }
  if (ok && name == kSharedTokenPrincipal) {
    // The shared token's principal: a token by that name would pass for it
    // in the audit and on the agent stream.
    return absl::InvalidArgumentError(
        absl::StrCat("token name '", name, "' is reserved for the shared token"));
  }
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("token name '", absl::CHexEscape(ClipInput(name)),
                   "': want 1-64 of A-Z a-z 0-9 . _ -"));
}

}  // namespace fleetbench::controller
