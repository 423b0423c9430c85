#include "kernels/gpu_status.h"

#include "absl/strings/str_cat.h"

namespace fleetbench::kernels {

absl::string_view ShortSourcePath(absl::string_view file) {
  for (absl::string_view top : {"/agent/", "/kernels/", "/tests/"}) {
    const size_t at = file.rfind(top);
    if (at != absl::string_view::npos) return file.substr(at + 1);
  }
  const size_t slash = file.rfind('/');
  return slash == absl::string_view::npos ? file : file.substr(slash + 1);
}

absl::Status GpuCallStatus(absl::StatusCode code, absl::string_view library,
                           int raw_code, absl::string_view text,
                           absl::string_view expression, absl::string_view file,
                           int line) {
  if (code == absl::StatusCode::kOk) return absl::OkStatus();
  std::string message = absl::StrCat(expression, ": ", text);
  if (raw_code != 0) {
    absl::StrAppend(&message, " (", library, " error ", raw_code, ")");
  }
  if (!file.empty()) {
    absl::StrAppend(&message, " [", ShortSourcePath(file), ":", line, "]");
  }
  return absl::Status(code, message);
}

}  // namespace fleetbench::kernels
