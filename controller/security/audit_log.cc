#include "controller/security/audit_log.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/reason.h"

namespace fleetbench::controller {
namespace {

constexpr uint32_t kDefaultAuditLimit = 100;
constexpr uint32_t kMaxAuditLimit = 1000;

// "PERMISSION_DENIED" for the code; gRPC's and absl's codes are the same.
std::string CodeName(int code) {
  return absl::StatusCodeToString(static_cast<absl::StatusCode>(code));
}

}  // namespace

void AuditLog::Record(const Principal& who, absl::string_view rpc, absl::string_view target,
                      const absl::Status& outcome) {
  storage::AuditRecord r;
  r.time = clock_->Now();
  r.principal = who.name;
  r.role = std::string(RoleName(who.role));
  r.rpc = std::string(rpc);
  r.target = ClipInput(target, kMaxAuditTargetLength);
  r.code = static_cast<int>(outcome.code());
  r.message = ClipInput(outcome.message(), kMaxAuditTargetLength);
  if (absl::StatusOr<int64_t> id = store_->AppendAudit(r, keep_); !id.ok()) {
    LOG(WARNING) << "audit: cannot record " << r.rpc << " by '" << r.principal
                 << "': " << id.status();
  }
}

absl::StatusOr<v1::ListAuditResponse> AuditLog::List(const v1::ListAuditRequest& request) {
  if (request.limit() > kMaxAuditLimit) {
    return absl::InvalidArgumentError(
        absl::StrCat("limit ", request.limit(), " is above ", kMaxAuditLimit));
  }
  if (request.since_ms() < 0 || request.before_id() < 0) {
    return absl::InvalidArgumentError("since_ms and before_id are not negative");
  }
  const int limit = request.limit() == 0 ? kDefaultAuditLimit : request.limit();
  const absl::Time since = request.since_ms() == 0
                               ? absl::InfinitePast()
                               : clock_->Now() - absl::Milliseconds(request.since_ms());
  absl::StatusOr<std::vector<storage::AuditRecord>> rows =
      store_->ListAudit(since, limit, request.before_id());
  if (!rows.ok()) return rows.status();
  v1::ListAuditResponse response;
  for (const storage::AuditRecord& r : *rows) {
    v1::AuditEntry* e = response.add_entries();
    e->set_id(r.id);
    e->set_unix_ms(absl::ToUnixMillis(r.time));
    e->set_principal(r.principal);
    e->set_role(r.role);
    e->set_rpc(r.rpc);
    e->set_target(r.target);
    e->set_code(CodeName(r.code));
    e->set_message(r.message);
  }
  return response;
}

}  // namespace fleetbench::controller
