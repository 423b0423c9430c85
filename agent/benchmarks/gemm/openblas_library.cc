#include "agent/benchmarks/gemm/openblas_library.h"

#include <dlfcn.h>

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace fleetbench::agent {
namespace {

// Debian's libopenblas0 (via alternatives) provides the versioned name;
// the unversioned one exists only with -dev packages.
constexpr const char* kSonames[] = {"libopenblas.so.0", "libopenblas.so"};

template <typename Fn>
bool Bind(void* handle, const char* symbol, Fn* out) {
  *out = reinterpret_cast<Fn>(dlsym(handle, symbol));
  return *out != nullptr;
}

}  // namespace

absl::StatusOr<OpenBlasLibrary> LoadOpenBlasFrom(const std::string& soname) {
  void* handle = dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return absl::FailedPreconditionError(
        absl::StrCat("gemm: cannot load OpenBLAS (", soname, "): ",
                     why != nullptr ? why : "unknown dlopen error",
                     "; install libopenblas0"));
  }
  OpenBlasLibrary lib;
  lib.path = soname;
  const char* missing = nullptr;
  if (!Bind(handle, "cblas_sgemm", &lib.sgemm)) missing = "cblas_sgemm";
  else if (!Bind(handle, "cblas_dgemm", &lib.dgemm)) missing = "cblas_dgemm";
  else if (!Bind(handle, "openblas_get_num_threads", &lib.get_num_threads))
    missing = "openblas_get_num_threads";
  else if (!Bind(handle, "openblas_set_num_threads", &lib.set_num_threads))
    missing = "openblas_set_num_threads";
  else if (!Bind(handle, "openblas_get_config", &lib.get_config))
    missing = "openblas_get_config";
  if (missing == nullptr) {
    // Optional: absent from many builds; the plugin says so when asked.
    (void)Bind(handle, "cblas_sbgemm", &lib.sbgemm);
    (void)Bind(handle, "cblas_shgemm", &lib.shgemm);
  }
  if (missing != nullptr) {
    dlclose(handle);
    return absl::FailedPreconditionError(absl::StrCat(
        "gemm: ", soname, " has no ", missing, "; is it OpenBLAS?"));
  }
  return lib;
}

absl::StatusOr<const OpenBlasLibrary*> OpenBlas() {
  // A function-local static: loaded once, thread-safe, never unloaded.
  static const absl::StatusOr<OpenBlasLibrary>* const loaded = [] {
    absl::Status first_error;
    for (const char* soname : kSonames) {
      absl::StatusOr<OpenBlasLibrary> lib = LoadOpenBlasFrom(soname);
      if (lib.ok()) return new absl::StatusOr<OpenBlasLibrary>(std::move(lib));
      if (first_error.ok()) first_error = lib.status();
    }
    return new absl::StatusOr<OpenBlasLibrary>(first_error);
  }();
  if (!loaded->ok()) return loaded->status();
  return &**loaded;
}

}  // namespace fleetbench::agent
