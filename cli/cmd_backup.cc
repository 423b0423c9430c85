// `fleetbench backup --out FILE`: a consistent copy of the controller's
// history while it runs (docs/operations.md, Backup). The controller makes
// the copy with SQLite's online backup and streams it back in chunks; this
// command writes them to a hidden file beside FILE, checks that every byte
// came in order, syncs it and only then renames it to FILE, so FILE is
// never a partial copy. An existing FILE is never overwritten.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "cli/args.h"
#include "cli/client.h"
#include "cli/usage.h"
#include "common/proto_json.h"
#include "fleetbench/v1/backup.pb.h"
#include "google/protobuf/struct.pb.h"

namespace fleetbench::cli {
namespace {

absl::Status WriteAll(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return absl::InternalError(absl::StrCat("writing the copy: ", strerror(errno)));
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

}  // namespace

int BackupCommand(const Argv& argv) {
  const std::vector<FlagSpec> flags = {
      {"out", true, false, "the file to write (must not exist)"},
      {"timeout", true, false, "give up after this long (default 1h)"},
      kJsonFlag};
  int code = 0;
  auto p = Prepare("backup", argv, flags, 0, &code);
  if (!p) return code;
  const std::string out = p->args.Get("out");
  if (out.empty()) return Usage("backup", "--out FILE is required", flags);
  absl::Duration timeout = absl::Hours(1);
  if (p->args.Has("timeout") &&
      (!absl::ParseDuration(p->args.Get("timeout"), &timeout) || timeout <= absl::ZeroDuration())) {
    return Usage("backup", "--timeout wants a duration like 30m", flags);
  }
  std::error_code error;
  if (std::filesystem::exists(out, error)) {
    return Usage("backup", absl::StrCat("--out ", out, " exists; not overwriting it"), flags);
  }
  std::filesystem::path target(out);
  std::string partial =
      (target.parent_path() / ("." + target.filename().string() + ".partial-XXXXXX")).string();
  const int fd = mkstemp(partial.data());
  if (fd < 0) return Fail("backup", absl::StrCat("cannot create a file beside ", out, ": ",
                                                 strerror(errno)));

  int64_t received = 0;
  int64_t total = -1;
  int schema_version = 0;
  absl::Status s = p->client->ReadStream<v1::BackupRequest, v1::BackupChunk>(
      &v1::Fleet::Stub::Backup, v1::BackupRequest(),
      [&](const v1::BackupChunk& chunk) -> absl::Status {
        if (chunk.offset() != received) {
          return absl::DataLossError(absl::StrCat("chunk at ", chunk.offset(), ", expected ",
                                                  received));
        }
        total = chunk.total_bytes();
        schema_version = chunk.schema_version();
        if (received + static_cast<int64_t>(chunk.data().size()) > total) {
          return absl::DataLossError("more bytes than the copy's size");
        }
        received += static_cast<int64_t>(chunk.data().size());
        return WriteAll(fd, chunk.data());
      },
      timeout);
  if (s.ok() && received != total) {
    s = absl::DataLossError(absl::StrCat("got ", received, " of ", total, " bytes"));
  }
  if (s.ok() && fsync(fd) != 0) {
    s = absl::InternalError(absl::StrCat("syncing the copy: ", strerror(errno)));
  }
  close(fd);
  // link() refuses an existing name, so a FILE made meanwhile survives.
  if (s.ok() && link(partial.c_str(), out.c_str()) != 0) {
    s = absl::InternalError(absl::StrCat("naming the copy ", out, ": ", strerror(errno)));
  }
  unlink(partial.c_str());
  if (!s.ok()) return RemoteError("backup", s);

  if (p->args.Has("json")) {
    google::protobuf::Struct summary;
    (*summary.mutable_fields())["path"].set_string_value(out);
    (*summary.mutable_fields())["bytes"].set_number_value(static_cast<double>(received));
    (*summary.mutable_fields())["schema_version"].set_number_value(schema_version);
    std::cout << ToJson(summary) << "\n";
  } else {
    std::cout << "backup: " << received << " bytes (schema version " << schema_version
              << ") in " << out << "\n";
  }
  return kExitOk;
}

}  // namespace fleetbench::cli
