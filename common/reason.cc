#include "common/reason.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/utf8.h"

namespace fleetbench {

std::string TruncateReason(absl::string_view raw, size_t max) {
  // A reason may quote a tool's output: make it text protobuf carries.
  const std::string valid = ToValidUtf8(std::string_view(raw.data(), raw.size()));
  const absl::string_view text = valid;
  if (text.size() <= max) return valid;
  // The marker's length depends on how much is cut, which depends on the
  // marker: size it for the largest possible count (the whole text).
  const std::string widest = absl::StrCat("… (", text.size(), " bytes cut)");
  if (widest.size() >= max) return "";
  size_t keep = max - widest.size();
  // Never split a multi-byte character: back off over continuation bytes.
  while (keep > 0 && (static_cast<unsigned char>(text[keep]) & 0xC0) == 0x80) --keep;
  return absl::StrCat(text.substr(0, keep), "… (", text.size() - keep, " bytes cut)");
}

std::string ClipInput(absl::string_view input, size_t max) {
  if (input.size() <= max) return std::string(input);
  size_t keep = max;
  while (keep > 0 && (static_cast<unsigned char>(input[keep]) & 0xC0) == 0x80) --keep;
  return absl::StrCat(input.substr(0, keep), "...");
}

std::string ReasonOf(absl::string_view name, absl::string_view message) {
  const std::string prefix = absl::StrCat(name, ": ");
  if (absl::StartsWith(message, prefix)) return std::string(message);
  return absl::StrCat(prefix, message);
}

}  // namespace fleetbench
