#include "agent/facts/gpu_facts.h"

#include <dlfcn.h>

#include <cstdlib>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/gpu_values.h"
#include "agent/facts/nvml_api.h"
#include "common/status_macros.h"
#include "kernels/gpu_status.h"

namespace fleetbench::gpu {

// Every entry point used; null when the library lacks an optional one.
struct Nvml::EntryPoints {
  nvmlInit_v2_fn init = nullptr;
  nvmlShutdown_fn shutdown = nullptr;
  nvmlErrorString_fn error_string = nullptr;
  nvmlSystemGetDriverVersion_fn driver_version = nullptr;
  nvmlSystemGetCudaDriverVersion_v2_fn cuda_driver_version = nullptr;
  nvmlDeviceGetCount_v2_fn count = nullptr;
  nvmlDeviceGetHandleByIndex_v2_fn handle_by_index = nullptr;
  nvmlDeviceGetName_fn name = nullptr;
  nvmlDeviceGetUUID_fn uuid = nullptr;
  nvmlDeviceGetPciInfo_v3_fn pci_info = nullptr;
  nvmlDeviceGetMemoryInfo_fn memory_info = nullptr;
  nvmlDeviceGetUintFn curr_pcie_gen = nullptr;
  nvmlDeviceGetUintFn max_pcie_gen = nullptr;
  nvmlDeviceGetUintFn curr_pcie_width = nullptr;
  nvmlDeviceGetUintFn max_pcie_width = nullptr;
  nvmlDeviceGetUintFn enforced_power_limit = nullptr;
  nvmlDeviceGetUintFn default_power_limit = nullptr;
  nvmlDeviceGetPowerManagementLimitConstraints_fn power_constraints = nullptr;
  nvmlDeviceGetUintFn power_usage = nullptr;
  nvmlDeviceGetClockInfo_fn clock_info = nullptr;
  nvmlDeviceGetClockInfo_fn max_clock_info = nullptr;
  nvmlDeviceGetTemperature_fn temperature = nullptr;
  nvmlDeviceGetTemperatureThreshold_fn temperature_threshold = nullptr;
  nvmlDeviceGetReasonsFn clock_event_reasons = nullptr;
  const char* clock_event_reasons_name = "nvmlDeviceGetCurrentClocksEventReasons";
  nvmlDeviceGetEccMode_fn ecc_mode = nullptr;
  nvmlDeviceGetTotalEccErrors_fn total_ecc_errors = nullptr;
  nvmlDeviceGetMigMode_fn mig_mode = nullptr;
  nvmlDeviceGetVirtualizationMode_fn virtualization_mode = nullptr;
  nvmlDeviceGetPersistenceMode_fn persistence_mode = nullptr;
};

namespace {

absl::StatusCode CodeOfNvmlError(nvmlReturn_t rc) {
  switch (rc) {
    case NVML_SUCCESS:
      return absl::StatusCode::kOk;
    case NVML_ERROR_NOT_SUPPORTED:
    case NVML_ERROR_DRIVER_NOT_LOADED:
    case NVML_ERROR_LIBRARY_NOT_FOUND:
    case NVML_ERROR_LIB_RM_VERSION_MISMATCH:
    case NVML_ERROR_UNINITIALIZED:
      return absl::StatusCode::kFailedPrecondition;
    case NVML_ERROR_NO_PERMISSION:
      return absl::StatusCode::kPermissionDenied;
    case NVML_ERROR_FUNCTION_NOT_FOUND:
      return absl::StatusCode::kUnimplemented;
    case NVML_ERROR_NOT_FOUND:
      return absl::StatusCode::kNotFound;
    case NVML_ERROR_TIMEOUT:
      return absl::StatusCode::kDeadlineExceeded;
    case NVML_ERROR_MEMORY:
      return absl::StatusCode::kResourceExhausted;
    case NVML_ERROR_GPU_IS_LOST:
      return absl::StatusCode::kUnavailable;
    default:
      return absl::StatusCode::kInternal;
  }
}

// The one NVML adapter: picks the code and NVML's own text, then formats
// through GpuCallStatus. No file:line: the call's name says where.
absl::Status NvmlStatus(const Nvml::EntryPoints& api, nvmlReturn_t rc,
                        absl::string_view call) {
  if (rc == NVML_SUCCESS) return absl::OkStatus();
  const char* text =
      api.error_string != nullptr ? api.error_string(rc) : nullptr;
  return kernels::GpuCallStatus(
      CodeOfNvmlError(rc), "nvml", static_cast<int>(rc),
      text != nullptr ? text : "unknown NVML error", call, "", 0);
}

template <typename Fn>
void Resolve(void* handle, const char* name, Fn* out) {
  *out = reinterpret_cast<Fn>(dlsym(handle, name));
}

absl::Status LoadEntryPoints(void* handle, Nvml::EntryPoints* api) {
  Resolve(handle, "nvmlInit_v2", &api->init);
  Resolve(handle, "nvmlShutdown", &api->shutdown);
  Resolve(handle, "nvmlErrorString", &api->error_string);
  Resolve(handle, "nvmlDeviceGetCount_v2", &api->count);
  Resolve(handle, "nvmlDeviceGetHandleByIndex_v2", &api->handle_by_index);
  for (const auto& [fn, name] :
       {std::pair<bool, const char*>{api->init != nullptr, "nvmlInit_v2"},
        {api->shutdown != nullptr, "nvmlShutdown"},
        {api->count != nullptr, "nvmlDeviceGetCount_v2"},
        {api->handle_by_index != nullptr, "nvmlDeviceGetHandleByIndex_v2"}}) {
    if (!fn) {
      return kernels::GpuCallStatus(
          absl::StatusCode::kFailedPrecondition, "dlsym", 0,
          "required entry point missing from libnvidia-ml", name, "", 0);
    }
  }
  Resolve(handle, "nvmlSystemGetDriverVersion", &api->driver_version);
  Resolve(handle, "nvmlSystemGetCudaDriverVersion_v2",
          &api->cuda_driver_version);
  Resolve(handle, "nvmlDeviceGetName", &api->name);
  Resolve(handle, "nvmlDeviceGetUUID", &api->uuid);
  Resolve(handle, "nvmlDeviceGetPciInfo_v3", &api->pci_info);
  Resolve(handle, "nvmlDeviceGetMemoryInfo", &api->memory_info);
  Resolve(handle, "nvmlDeviceGetCurrPcieLinkGeneration", &api->curr_pcie_gen);
  Resolve(handle, "nvmlDeviceGetMaxPcieLinkGeneration", &api->max_pcie_gen);
  Resolve(handle, "nvmlDeviceGetCurrPcieLinkWidth", &api->curr_pcie_width);
  Resolve(handle, "nvmlDeviceGetMaxPcieLinkWidth", &api->max_pcie_width);
  Resolve(handle, "nvmlDeviceGetEnforcedPowerLimit",
          &api->enforced_power_limit);
  Resolve(handle, "nvmlDeviceGetPowerManagementDefaultLimit",
          &api->default_power_limit);
  Resolve(handle, "nvmlDeviceGetPowerManagementLimitConstraints",
          &api->power_constraints);
  Resolve(handle, "nvmlDeviceGetPowerUsage", &api->power_usage);
  Resolve(handle, "nvmlDeviceGetClockInfo", &api->clock_info);
  Resolve(handle, "nvmlDeviceGetMaxClockInfo", &api->max_clock_info);
  Resolve(handle, "nvmlDeviceGetTemperature", &api->temperature);
  Resolve(handle, "nvmlDeviceGetTemperatureThreshold",
          &api->temperature_threshold);
  Resolve(handle, "nvmlDeviceGetCurrentClocksEventReasons",
          &api->clock_event_reasons);
  if (api->clock_event_reasons == nullptr) {
    // The name before driver r535.
    api->clock_event_reasons_name = "nvmlDeviceGetCurrentClocksThrottleReasons";
    Resolve(handle, api->clock_event_reasons_name, &api->clock_event_reasons);
  }
  Resolve(handle, "nvmlDeviceGetEccMode", &api->ecc_mode);
  Resolve(handle, "nvmlDeviceGetTotalEccErrors", &api->total_ecc_errors);
  Resolve(handle, "nvmlDeviceGetMigMode", &api->mig_mode);
  Resolve(handle, "nvmlDeviceGetVirtualizationMode",
          &api->virtualization_mode);
  Resolve(handle, "nvmlDeviceGetPersistenceMode", &api->persistence_mode);
  return absl::OkStatus();
}

// Reads one fact: true when `fn` answered. "Not supported" leaves the fact
// absent quietly; a missing entry point or any other error is also noted in
// facts->unreadable.
template <typename Fn, typename... Args>
bool ReadFact(const Nvml::EntryPoints& api, const char* call, Fn fn,
              v1::GpuFacts* facts, Args... args) {
  if (fn == nullptr) {
    facts->add_unreadable(
        absl::StrCat(call, ": not in this libnvidia-ml (older driver)"));
    return false;
  }
  const nvmlReturn_t rc = fn(args...);
  if (rc == NVML_SUCCESS) return true;
  if (rc != NVML_ERROR_NOT_SUPPORTED) {
    facts->add_unreadable(std::string(NvmlStatus(api, rc, call).message()));
  }
  return false;
}

std::string VirtualizationModeName(nvmlGpuVirtualizationMode_t mode) {
  switch (mode) {
    case NVML_GPU_VIRTUALIZATION_MODE_NONE: return "none";
    case NVML_GPU_VIRTUALIZATION_MODE_PASSTHROUGH: return "passthrough";
    case NVML_GPU_VIRTUALIZATION_MODE_VGPU: return "vgpu";
    case NVML_GPU_VIRTUALIZATION_MODE_HOST_VGPU: return "host_vgpu";
    case NVML_GPU_VIRTUALIZATION_MODE_HOST_VSGA: return "host_vsga";
  }
  return absl::StrCat("unknown(", static_cast<int>(mode), ")");
}

double Watts(unsigned milliwatts) { return milliwatts / 1000.0; }

}  // namespace

NvmlOptions DefaultNvmlOptions() {
  NvmlOptions options;
  if (const char* path = std::getenv("FLEETBENCH_NVML_LIBRARY");
      path != nullptr && *path != '\0') {
    options.library = path;
  }
  return options;
}

absl::StatusOr<std::unique_ptr<Nvml>> Nvml::Open(const NvmlOptions& options) {
  void* handle = dlopen(options.library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return kernels::GpuCallStatus(
        absl::StatusCode::kFailedPrecondition, "dlopen", 0,
        why != nullptr ? why : "unknown dlopen error",
        absl::StrCat("dlopen(", options.library, ")"), "", 0);
  }
  auto api = std::make_unique<EntryPoints>();
  if (absl::Status s = LoadEntryPoints(handle, api.get()); !s.ok()) {
    dlclose(handle);
    return s;
  }
  if (absl::Status s = NvmlStatus(*api, api->init(), "nvmlInit_v2"); !s.ok()) {
    dlclose(handle);
    // Whatever NVML says, a node whose NVML cannot start has no usable GPU
    // facts: that is a precondition, not an internal error.
    return absl::FailedPreconditionError(s.message());
  }
  return std::unique_ptr<Nvml>(new Nvml(handle, std::move(api)));
}

Nvml::Nvml(void* handle, std::unique_ptr<EntryPoints> api)
    : handle_(handle), api_(std::move(api)) {}

Nvml::~Nvml() {
  api_->shutdown();
  dlclose(handle_);
}

absl::StatusOr<unsigned> Nvml::DeviceCount() const {
  unsigned count = 0;
  FLEETBENCH_RETURN_IF_ERROR(
      NvmlStatus(*api_, api_->count(&count), "nvmlDeviceGetCount_v2"));
  return count;
}

absl::StatusOr<nvmlDevice_st*> Nvml::Handle(unsigned index) const {
  nvmlDevice_t device = nullptr;
  FLEETBENCH_RETURN_IF_ERROR(NvmlStatus(*api_,
                                        api_->handle_by_index(index, &device),
                                        "nvmlDeviceGetHandleByIndex_v2"));
  return device;
}

absl::StatusOr<v1::GpuFacts> Nvml::ReadDeviceFacts(unsigned index) const {
  FLEETBENCH_ASSIGN_OR_RETURN(const nvmlDevice_t d, Handle(index));
  const EntryPoints& a = *api_;
  v1::GpuFacts f;
  f.set_index(index);
  v1::GpuReadings& r = *f.mutable_readings();

  char driver[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE] = {};
  if (ReadFact(a, "nvmlSystemGetDriverVersion", a.driver_version, &f, driver,
               static_cast<unsigned>(sizeof(driver)))) {
    f.set_driver_version(driver);
  }
  int cuda_version = 0;
  if (ReadFact(a, "nvmlSystemGetCudaDriverVersion_v2", a.cuda_driver_version,
               &f, &cuda_version)) {
    f.set_cuda_driver_version(FormatCudaVersion(cuda_version));
  }
  char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE] = {};
  if (ReadFact(a, "nvmlDeviceGetName", a.name, &f, d, name,
               static_cast<unsigned>(sizeof(name)))) {
    f.set_name(name);
  }
  char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = {};
  if (ReadFact(a, "nvmlDeviceGetUUID", a.uuid, &f, d, uuid,
               static_cast<unsigned>(sizeof(uuid)))) {
    f.set_uuid(uuid);
  }
  nvmlPciInfo_t pci{};
  if (ReadFact(a, "nvmlDeviceGetPciInfo_v3", a.pci_info, &f, d, &pci)) {
    pci.busId[sizeof(pci.busId) - 1] = '\0';
    f.set_pci_bus_id(pci.busId);
  }
  nvmlMemory_t memory{};
  if (ReadFact(a, "nvmlDeviceGetMemoryInfo", a.memory_info, &f, d, &memory)) {
    f.set_memory_total_bytes(memory.total);
    r.set_memory_used_bytes(memory.used);
  }

  unsigned value = 0;
  if (ReadFact(a, "nvmlDeviceGetMaxPcieLinkGeneration", a.max_pcie_gen, &f, d,
               &value)) {
    f.set_pcie_gen_max(value);
  }
  if (ReadFact(a, "nvmlDeviceGetMaxPcieLinkWidth", a.max_pcie_width, &f, d,
               &value)) {
    f.set_pcie_width_max(value);
  }
  if (ReadFact(a, "nvmlDeviceGetCurrPcieLinkGeneration", a.curr_pcie_gen, &f,
               d, &value)) {
    r.set_pcie_gen_current(value);
  }
  if (ReadFact(a, "nvmlDeviceGetCurrPcieLinkWidth", a.curr_pcie_width, &f, d,
               &value)) {
    r.set_pcie_width_current(value);
  }

  if (ReadFact(a, "nvmlDeviceGetEnforcedPowerLimit", a.enforced_power_limit,
               &f, d, &value)) {
    f.set_power_enforced_limit_w(Watts(value));
  }
  if (ReadFact(a, "nvmlDeviceGetPowerManagementDefaultLimit",
               a.default_power_limit, &f, d, &value)) {
    f.set_power_default_limit_w(Watts(value));
  }
  unsigned min_limit = 0, max_limit = 0;
  if (ReadFact(a, "nvmlDeviceGetPowerManagementLimitConstraints",
               a.power_constraints, &f, d, &min_limit, &max_limit)) {
    f.set_power_min_limit_w(Watts(min_limit));
    f.set_power_max_limit_w(Watts(max_limit));
  }
  if (ReadFact(a, "nvmlDeviceGetPowerUsage", a.power_usage, &f, d, &value)) {
    r.set_power_usage_w(Watts(value));
  }

  if (ReadFact(a, "nvmlDeviceGetClockInfo(SM)", a.clock_info, &f, d,
               NVML_CLOCK_SM, &value)) {
    r.set_sm_clock_mhz(value);
  }
  if (ReadFact(a, "nvmlDeviceGetClockInfo(MEM)", a.clock_info, &f, d,
               NVML_CLOCK_MEM, &value)) {
    r.set_memory_clock_mhz(value);
  }
  if (ReadFact(a, "nvmlDeviceGetMaxClockInfo(SM)", a.max_clock_info, &f, d,
               NVML_CLOCK_SM, &value)) {
    f.set_sm_clock_max_mhz(value);
  }
  if (ReadFact(a, "nvmlDeviceGetMaxClockInfo(MEM)", a.max_clock_info, &f, d,
               NVML_CLOCK_MEM, &value)) {
    f.set_memory_clock_max_mhz(value);
  }

  if (ReadFact(a, "nvmlDeviceGetTemperature", a.temperature, &f, d,
               NVML_TEMPERATURE_GPU, &value)) {
    r.set_temperature_c(value);
  }
  if (ReadFact(a, "nvmlDeviceGetTemperatureThreshold(SLOWDOWN)",
               a.temperature_threshold, &f, d,
               NVML_TEMPERATURE_THRESHOLD_SLOWDOWN, &value)) {
    f.set_temperature_slowdown_c(value);
  }
  if (ReadFact(a, "nvmlDeviceGetTemperatureThreshold(SHUTDOWN)",
               a.temperature_threshold, &f, d,
               NVML_TEMPERATURE_THRESHOLD_SHUTDOWN, &value)) {
    f.set_temperature_shutdown_c(value);
  }

  unsigned long long reasons = 0;
  if (ReadFact(a, a.clock_event_reasons_name, a.clock_event_reasons, &f, d,
               &reasons)) {
    r.set_clock_event_reasons(reasons);
    for (std::string& n : DecodeClockEventReasons(reasons)) {
      r.add_clock_event_reason_names(std::move(n));
    }
  }

  nvmlEnableState_t current{}, pending{};
  if (ReadFact(a, "nvmlDeviceGetEccMode", a.ecc_mode, &f, d, &current,
               &pending)) {
    f.set_ecc_enabled(current == NVML_FEATURE_ENABLED);
    f.set_ecc_pending_enabled(pending == NVML_FEATURE_ENABLED);
  }
  // ECC counters exist only while ECC is on; skip them otherwise rather than
  // collecting four "not supported" answers.
  if (f.has_ecc_enabled() && f.ecc_enabled()) {
    unsigned long long count = 0;
    if (ReadFact(a, "nvmlDeviceGetTotalEccErrors(CORRECTED, VOLATILE)",
                 a.total_ecc_errors, &f, d, NVML_MEMORY_ERROR_TYPE_CORRECTED,
                 NVML_VOLATILE_ECC, &count)) {
      f.set_ecc_corrected_volatile(count);
    }
    if (ReadFact(a, "nvmlDeviceGetTotalEccErrors(UNCORRECTED, VOLATILE)",
                 a.total_ecc_errors, &f, d, NVML_MEMORY_ERROR_TYPE_UNCORRECTED,
                 NVML_VOLATILE_ECC, &count)) {
      f.set_ecc_uncorrected_volatile(count);
    }
    if (ReadFact(a, "nvmlDeviceGetTotalEccErrors(CORRECTED, AGGREGATE)",
                 a.total_ecc_errors, &f, d, NVML_MEMORY_ERROR_TYPE_CORRECTED,
                 NVML_AGGREGATE_ECC, &count)) {
      f.set_ecc_corrected_aggregate(count);
    }
    if (ReadFact(a, "nvmlDeviceGetTotalEccErrors(UNCORRECTED, AGGREGATE)",
                 a.total_ecc_errors, &f, d, NVML_MEMORY_ERROR_TYPE_UNCORRECTED,
                 NVML_AGGREGATE_ECC, &count)) {
      f.set_ecc_uncorrected_aggregate(count);
    }
  }

  unsigned mig_current = 0, mig_pending = 0;
  if (ReadFact(a, "nvmlDeviceGetMigMode", a.mig_mode, &f, d, &mig_current,
               &mig_pending)) {
    f.set_mig_enabled(mig_current == NVML_DEVICE_MIG_ENABLE);
    f.set_mig_pending_enabled(mig_pending == NVML_DEVICE_MIG_ENABLE);
  }
  nvmlGpuVirtualizationMode_t virtualization{};
  if (ReadFact(a, "nvmlDeviceGetVirtualizationMode", a.virtualization_mode, &f,
               d, &virtualization)) {
    f.set_virtualization_mode(VirtualizationModeName(virtualization));
  }
  nvmlEnableState_t persistence{};
  if (ReadFact(a, "nvmlDeviceGetPersistenceMode", a.persistence_mode, &f, d,
               &persistence)) {
    f.set_persistence_mode(persistence == NVML_FEATURE_ENABLED);
  }
  return f;
}

absl::StatusOr<std::vector<v1::GpuFacts>> Nvml::ReadFacts() const {
  FLEETBENCH_ASSIGN_OR_RETURN(unsigned count, DeviceCount());
  std::vector<v1::GpuFacts> all;
  for (unsigned i = 0; i < count; ++i) {
    FLEETBENCH_ASSIGN_OR_RETURN(v1::GpuFacts facts, ReadDeviceFacts(i));
    all.push_back(std::move(facts));
  }
  return all;
}

absl::StatusOr<unsigned> Nvml::IndexOfPciBusId(absl::string_view bus_id) const {
  if (api_->pci_info == nullptr) {
    return absl::UnimplementedError(
        "nvmlDeviceGetPciInfo_v3: not in this libnvidia-ml (older driver)");
  }
  FLEETBENCH_ASSIGN_OR_RETURN(unsigned count, DeviceCount());
  for (unsigned i = 0; i < count; ++i) {
    FLEETBENCH_ASSIGN_OR_RETURN(nvmlDevice_t device, Handle(i));
    nvmlPciInfo_t pci{};
    FLEETBENCH_RETURN_IF_ERROR(NvmlStatus(*api_, api_->pci_info(device, &pci),
                                          "nvmlDeviceGetPciInfo_v3"));
    pci.busId[sizeof(pci.busId) - 1] = '\0';
    if (SamePciAddress(pci.busId, bus_id)) return i;
  }
  return absl::NotFoundError(
      absl::StrCat("no NVML device at PCI address ", bus_id));
}

absl::StatusOr<PcieLinkState> Nvml::ReadPcieLink(unsigned index) const {
  FLEETBENCH_ASSIGN_OR_RETURN(nvmlDevice_t device, Handle(index));
  PcieLinkState link;
  const EntryPoints& a = *api_;
  const struct {
    nvmlDeviceGetUintFn fn;
    const char* call;
    int* out;
  } reads[] = {
      {a.curr_pcie_gen, "nvmlDeviceGetCurrPcieLinkGeneration", &link.gen_current},
      {a.curr_pcie_width, "nvmlDeviceGetCurrPcieLinkWidth", &link.width_current},
      {a.max_pcie_gen, "nvmlDeviceGetMaxPcieLinkGeneration", &link.gen_max},
      {a.max_pcie_width, "nvmlDeviceGetMaxPcieLinkWidth", &link.width_max},
  };
  for (const auto& read : reads) {
    if (read.fn == nullptr) {
      return absl::UnimplementedError(
          absl::StrCat(read.call, ": not in this libnvidia-ml (older driver)"));
    }
    unsigned value = 0;
    FLEETBENCH_RETURN_IF_ERROR(
        NvmlStatus(a, read.fn(device, &value), read.call));
    *read.out = static_cast<int>(value);
  }
  return link;
}

absl::StatusOr<uint64_t> Nvml::ReadClockEventReasons(unsigned index) const {
  if (api_->clock_event_reasons == nullptr) {
    return absl::UnimplementedError(
        "nvmlDeviceGetCurrentClocksEventReasons: not in this libnvidia-ml");
  }
  FLEETBENCH_ASSIGN_OR_RETURN(nvmlDevice_t device, Handle(index));
  unsigned long long reasons = 0;
  FLEETBENCH_RETURN_IF_ERROR(
      NvmlStatus(*api_, api_->clock_event_reasons(device, &reasons),
                 api_->clock_event_reasons_name));
  return static_cast<uint64_t>(reasons);
}

absl::StatusOr<double> Nvml::ReadPowerWatts(unsigned index) const {
  if (api_->power_usage == nullptr) {
    return absl::UnimplementedError(
        "nvmlDeviceGetPowerUsage: not in this libnvidia-ml");
  }
  FLEETBENCH_ASSIGN_OR_RETURN(nvmlDevice_t device, Handle(index));
  unsigned milliwatts = 0;
  FLEETBENCH_RETURN_IF_ERROR(NvmlStatus(*api_,
                                        api_->power_usage(device, &milliwatts),
                                        "nvmlDeviceGetPowerUsage"));
  return Watts(milliwatts);
}

absl::StatusOr<unsigned> Nvml::ReadTemperatureC(unsigned index) const {
  if (api_->temperature == nullptr) {
    return absl::UnimplementedError(
        "nvmlDeviceGetTemperature: not in this libnvidia-ml");
  }
  FLEETBENCH_ASSIGN_OR_RETURN(nvmlDevice_t device, Handle(index));
  unsigned celsius = 0;
  FLEETBENCH_RETURN_IF_ERROR(NvmlStatus(
      *api_, api_->temperature(device, NVML_TEMPERATURE_GPU, &celsius),
      "nvmlDeviceGetTemperature"));
  return celsius;
}

absl::StatusOr<std::vector<v1::GpuFacts>> ReadGpuFacts(
    const NvmlOptions& options) {
  FLEETBENCH_ASSIGN_OR_RETURN(std::unique_ptr<Nvml> nvml, Nvml::Open(options));
  return nvml->ReadFacts();
}

void FillGpuFacts(v1::NodeFacts* facts, const NvmlOptions& options) {
  facts->clear_gpus();
  facts->clear_gpu_unavailable_reason();
  absl::StatusOr<std::vector<v1::GpuFacts>> gpus = ReadGpuFacts(options);
  if (!gpus.ok()) {
    facts->set_gpu_unavailable_reason(std::string(gpus.status().message()));
    return;
  }
  if (gpus->empty()) {
    facts->set_gpu_unavailable_reason("NVML reports no GPUs");
    return;
  }
  for (v1::GpuFacts& gpu : *gpus) *facts->add_gpus() = std::move(gpu);
}

}  // namespace fleetbench::gpu
