// storage/sqlite_sample_ids.h — how the store keeps a sample's id.
//
// Agents make sample ids as ULIDs (common/ulid.h) and the controller accepts
// nothing else, so nearly every id is stored as the ULID's 16 bytes instead
// of its 26 characters: a BLOB whose byte order is the text's order. An id
// that is not a canonical ULID (older files, tests) is stored as its TEXT.
// SQLite orders every TEXT before every BLOB, so one column holds both and
// still has one total order; binds and reads go through these helpers so
// that a value compared in SQL always has the stored form.
#ifndef FLEETBENCH_STORAGE_SQLITE_SAMPLE_IDS_H_
#define FLEETBENCH_STORAGE_SQLITE_SAMPLE_IDS_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "storage/sqlite_statement.h"

namespace fleetbench::storage {

// A sample id in its stored form, to bind. Holds a view of `id`: the text
// must outlive the statement's step.
class StoredSampleId {
 public:
  explicit StoredSampleId(absl::string_view id);
  void BindTo(Statement& s, int index) const;

 private:
  std::optional<std::array<uint8_t, 16>> bytes_;
  absl::string_view text_;
};

// The id in column `col` of the current row, as the agent wrote it.
std::string SampleIdOfColumn(const Statement& s, int col);

// Registers fleetbench_sample_id(text) on `db`: the stored form of an id,
// for SQL that moves ids (the schema step that made the compact samples).
absl::Status RegisterSampleIdFunction(sqlite3* db);

}  // namespace fleetbench::storage

#endif  // FLEETBENCH_STORAGE_SQLITE_SAMPLE_IDS_H_
