// FleetService::Backup: the history copied by FleetCore::BackupHistory,
// streamed back in chunks and removed. The copy is unlinked as soon as it
// is open, so a client that goes away (or a cancelled stream) leaves
// nothing behind; the open descriptor keeps the bytes readable until sent.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "controller/security/auth.h"
#include "controller/api/fleet_service.h"
#include "common/grpc_status.h"
#include "storage/sqlite_store.h"
#include "storage/store.h"

namespace fleetbench::controller {
namespace {

constexpr uint32_t kDefaultChunkBytes = 1 << 20;
constexpr uint32_t kMaxChunkBytes = 2 << 20;

}  // namespace

grpc::Status FleetService::Backup(grpc::ServerContext* context, const v1::BackupRequest* request,
                                  grpc::ServerWriter<v1::BackupChunk>* writer) {
  // A copy of everything: an admin's call (the role table in
  // fleet_service.cc).
  const FleetRpcRule* rule = FindFleetRpcRule("Backup");
  if (rule == nullptr) {
    return grpc::Status(grpc::StatusCode::PERMISSION_DENIED, "Backup has no role on this controller");
  }
  if (grpc::Status auth = AuthorizeCall(*context, *authenticator_, rule->need); !auth.ok()) {
    return auth;
  }
  if (request->chunk_bytes() > kMaxChunkBytes) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        absl::StrCat("chunk_bytes ", request->chunk_bytes(), " is over the ",
                                     kMaxChunkBytes, " allowed"));
  }
  const uint32_t chunk_bytes =
      request->chunk_bytes() == 0 ? kDefaultChunkBytes : request->chunk_bytes();
  absl::StatusOr<std::string> path = core_->BackupHistory();
  if (!path.ok()) return ToGrpcStatus(path.status());
  const int fd = open(path->c_str(), O_RDONLY | O_CLOEXEC);
  const int open_errno = errno;
  unlink(path->c_str());
  if (fd < 0) {
    return grpc::Status(grpc::StatusCode::INTERNAL,
                        absl::StrCat("reading the backup: ", strerror(open_errno)));
  }
  struct stat st {};
  fstat(fd, &st);
  v1::BackupChunk chunk;
  chunk.set_total_bytes(st.st_size);
  chunk.set_schema_version(storage::LatestSchemaVersion());
  std::string buffer(chunk_bytes, '\0');
  int64_t offset = 0;
  grpc::Status result = grpc::Status::OK;
  while (offset < st.st_size) {
    if (context->IsCancelled()) {
      result = grpc::Status(grpc::StatusCode::CANCELLED, "the client went away");
      break;
    }
    const ssize_t n = pread(fd, buffer.data(), buffer.size(), offset);
    if (n <= 0) {
      result = grpc::Status(grpc::StatusCode::INTERNAL,
                            absl::StrCat("reading the backup at ", offset, ": ",
                                         n == 0 ? "unexpected end" : strerror(errno)));
      break;
    }
    chunk.set_offset(offset);
    chunk.set_data(buffer.data(), static_cast<size_t>(n));
    if (!writer->Write(chunk)) {
      result = grpc::Status(grpc::StatusCode::CANCELLED, "the client stopped reading");
      break;
    }
    offset += n;
  }
  close(fd);
  return result;
}

}  // namespace fleetbench::controller
