#include "storage/sqlite_sample_ids.h"

#include <sqlite3.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "common/ulid.h"
#include "storage/sqlite_statement.h"

namespace fleetbench::storage {
namespace {

void SampleIdFunction(sqlite3_context* context, int argc, sqlite3_value** argv) {
  if (argc != 1 || sqlite3_value_type(argv[0]) != SQLITE_TEXT) {
    sqlite3_result_value(context, argv[0]);  // NULL, or already a blob
    return;
  }
  const auto* text = reinterpret_cast<const char*>(sqlite3_value_text(argv[0]));
  const absl::string_view id(text, static_cast<size_t>(sqlite3_value_bytes(argv[0])));
  const auto bytes = UlidBytes(id);
  if (!bytes.has_value()) {
    sqlite3_result_value(context, argv[0]);
    return;
  }
  sqlite3_result_blob(context, bytes->data(), static_cast<int>(bytes->size()),
                      SQLITE_TRANSIENT);
}

}  // namespace

StoredSampleId::StoredSampleId(absl::string_view id) : bytes_(UlidBytes(id)), text_(id) {}

void StoredSampleId::BindTo(Statement& s, int index) const {
  if (bytes_.has_value()) {
    s.Bind(index, SqlBlob{absl::string_view(reinterpret_cast<const char*>(bytes_->data()),
                                            bytes_->size())});
  } else {
    s.Bind(index, text_);
  }
}

std::string SampleIdOfColumn(const Statement& s, int col) {
  if (!s.IsBlob(col)) return s.Text(col);
  const absl::string_view blob = s.Blob(col);
  std::array<uint8_t, 16> bytes;
  // Only UlidBytes makes blobs here; any other length is shown as hex
  // rather than guessed at.
  if (blob.size() != bytes.size()) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string hex = "x";
    for (unsigned char c : blob) {
      hex.push_back(kHex[c >> 4]);
      hex.push_back(kHex[c & 15]);
    }
    return hex;
  }
  std::memcpy(bytes.data(), blob.data(), bytes.size());
  return UlidFromBytes(bytes);
}

absl::Status RegisterSampleIdFunction(sqlite3* db) {
  const int rc = sqlite3_create_function_v2(
      db, "fleetbench_sample_id", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS,
      nullptr, SampleIdFunction, nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return SqliteStatus(db, rc, "registering fleetbench_sample_id");
  return absl::OkStatus();
}

}  // namespace fleetbench::storage
