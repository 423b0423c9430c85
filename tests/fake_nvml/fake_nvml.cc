// tests/fake_nvml/fake_nvml.cc — a scripted stand-in for the driver's
// libnvidia-ml.so.1, so the real dlopen path of agent/facts/gpu_facts.cc
// runs in tests on machines without a GPU.
//
// nvmlInit_v2 reads the file named by $FAKE_NVML_SCRIPT: `key=value` lines,
// `#` comments. Without the variable, init fails with
// NVML_ERROR_DRIVER_NOT_LOADED, like a node without a driver. Keys (values
// in NVML's units: mW, MHz, C, bytes; integers may be 0x-hex):
//   init_error, device_count, driver_version, cuda_driver_version,
//   name, uuid, pci_bus_id, memory_total, memory_used,
//   pcie_gen_current, pcie_gen_max, pcie_width_current, pcie_width_max,
//   power_enforced_mw, power_default_mw, power_min_mw, power_max_mw,
//   power_usage_mw, sm_clock, mem_clock, sm_clock_max, mem_clock_max,
//   temperature, temp_slowdown, temp_shutdown, clock_event_reasons,
//   ecc_current, ecc_pending, ecc_corrected_volatile,
//   ecc_uncorrected_volatile, ecc_corrected_aggregate,
//   ecc_uncorrected_aggregate, mig_current, mig_pending,
//   virtualization_mode, persistence_mode.
// A key may be given per device as gpu<N>.<key>, which wins over <key>.
// <key>_series=v1,v2,... (also per device) makes successive reads of <key>
// answer v1, v2, ... and then keep answering the last value: a scripted
// time series for the samplers.
// An absent key makes its getter answer NVML_ERROR_NOT_SUPPORTED;
// <key>.error=<nvmlReturn_t> makes it answer that code instead.
//
// Built twice: libnvidia-ml.so.1 (current entry points) and, with
// FAKE_NVML_OLD_DRIVER, an "old driver" copy that lacks
// nvmlDeviceGetCurrentClocksEventReasons (only the older Throttle name) and
// the optional nvmlDeviceGetPersistenceMode.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <type_traits>

#include "agent/facts/nvml_api.h"

namespace {

std::map<std::string, std::string>& Script() {
  static std::map<std::string, std::string> script;
  return script;
}
int active_inits = 0;

std::string Trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  const size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

// Reads so far of each "<device>.<key>" that has a _series.
std::map<std::string, size_t>& SeriesReads() {
  static std::map<std::string, size_t> reads;
  return reads;
}

bool LoadScript() {
  Script().clear();
  SeriesReads().clear();
  const char* path = std::getenv("FAKE_NVML_SCRIPT");
  if (path == nullptr) return false;
  std::ifstream in(path);
  if (!in) return false;
  std::string line;
  while (std::getline(in, line)) {
    line = Trim(line);
    if (line.empty() || line[0] == '#') continue;
    const size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    Script()[Trim(line.substr(0, eq))] = Trim(line.substr(eq + 1));
  }
  return true;
}

unsigned Index(nvmlDevice_t device) {
  return static_cast<unsigned>(reinterpret_cast<uintptr_t>(device) - 1);
}

// The scripted text for `key` on `device` (-1: system-wide).
const std::string* Find(int device, const std::string& key) {
  if (device >= 0) {
    auto it = Script().find("gpu" + std::to_string(device) + "." + key);
    if (it != Script().end()) return &it->second;
  }
  auto it = Script().find(key);
  return it == Script().end() ? nullptr : &it->second;
}

// NVML_SUCCESS with the value, the scripted error, or NOT_SUPPORTED.
nvmlReturn_t Lookup(int device, const std::string& key, std::string* value) {
  if (active_inits == 0) return NVML_ERROR_UNINITIALIZED;
  if (const std::string* error = Find(device, key + ".error")) {
    return static_cast<nvmlReturn_t>(std::strtol(error->c_str(), nullptr, 0));
  }
  if (const std::string* series = Find(device, key + "_series")) {
    size_t& next = SeriesReads()[std::to_string(device) + "." + key];
    size_t begin = 0;
    for (size_t i = 0; i < next; ++i) {
      const size_t comma = series->find(',', begin);
      if (comma == std::string::npos) break;
      begin = comma + 1;
    }
    const size_t comma = series->find(',', begin);
    *value = series->substr(begin, comma == std::string::npos
                                       ? std::string::npos
                                       : comma - begin);
    if (comma != std::string::npos) ++next;
    return NVML_SUCCESS;
  }
  const std::string* text = Find(device, key);
  if (text == nullptr) return NVML_ERROR_NOT_SUPPORTED;
  *value = *text;
  return NVML_SUCCESS;
}

template <typename T>
nvmlReturn_t Number(int device, const std::string& key, T* out) {
  std::string text;
  const nvmlReturn_t rc = Lookup(device, key, &text);
  if (rc == NVML_SUCCESS) *out = static_cast<T>(std::strtoull(text.c_str(), nullptr, 0));
  return rc;
}

nvmlReturn_t Text(int device, const std::string& key, char* out,
                  unsigned length) {
  std::string text;
  const nvmlReturn_t rc = Lookup(device, key, &text);
  if (rc != NVML_SUCCESS) return rc;
  if (text.size() + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::memcpy(out, text.c_str(), text.size() + 1);
  return NVML_SUCCESS;
}

nvmlReturn_t CheckDevice(nvmlDevice_t device) {
  if (active_inits == 0) return NVML_ERROR_UNINITIALIZED;
  unsigned count = 0;
  if (Number(-1, "device_count", &count) != NVML_SUCCESS) count = 0;
  return Index(device) < count ? NVML_SUCCESS : NVML_ERROR_INVALID_ARGUMENT;
}

#define FAKE_DEVICE_CHECK(device)                         \
  do {                                                    \
    if (nvmlReturn_t rc = CheckDevice(device); rc != 0) { \
      return rc;                                          \
    }                                                     \
  } while (0)

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int fake_nvml_active_inits(void) {
  return active_inits;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlInit_v2(void) {
  if (!LoadScript()) return NVML_ERROR_DRIVER_NOT_LOADED;
  int init_error = 0;
  if (const std::string* e = Find(-1, "init_error")) {
    init_error = static_cast<int>(std::strtol(e->c_str(), nullptr, 0));
  }
  if (init_error != 0) return static_cast<nvmlReturn_t>(init_error);
  ++active_inits;
  return NVML_SUCCESS;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlShutdown(void) {
  if (active_inits == 0) return NVML_ERROR_UNINITIALIZED;
  --active_inits;
  return NVML_SUCCESS;
}

__attribute__((visibility("default"))) const char* nvmlErrorString(
    nvmlReturn_t result) {
  switch (result) {
    case NVML_SUCCESS: return "Success";
    case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
    case NVML_ERROR_NO_PERMISSION: return "Insufficient Permissions";
    case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
    case NVML_ERROR_GPU_IS_LOST: return "GPU is lost";
    default: return "Unknown Error";
  }
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlSystemGetDriverVersion(
    char* version, unsigned int length) {
  return Text(-1, "driver_version", version, length);
}

__attribute__((visibility("default"))) nvmlReturn_t
nvmlSystemGetCudaDriverVersion_v2(int* cudaDriverVersion) {
  return Number(-1, "cuda_driver_version", cudaDriverVersion);
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetCount_v2(
    unsigned int* deviceCount) {
  return Number(-1, "device_count", deviceCount);
}

__attribute__((visibility("default"))) nvmlReturn_t
nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
  nvmlDevice_t handle = reinterpret_cast<nvmlDevice_t>(uintptr_t{index} + 1);
  FAKE_DEVICE_CHECK(handle);
  *device = handle;
  return NVML_SUCCESS;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetName(
    nvmlDevice_t device, char* name, unsigned int length) {
  FAKE_DEVICE_CHECK(device);
  return Text(Index(device), "name", name, length);
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetUUID(
    nvmlDevice_t device, char* uuid, unsigned int length) {
  FAKE_DEVICE_CHECK(device);
  return Text(Index(device), "uuid", uuid, length);
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetPciInfo_v3(
    nvmlDevice_t device, nvmlPciInfo_t* pci) {
  FAKE_DEVICE_CHECK(device);
  *pci = nvmlPciInfo_t{};
  return Text(Index(device), "pci_bus_id", pci->busId, sizeof(pci->busId));
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetMemoryInfo(
    nvmlDevice_t device, nvmlMemory_t* memory) {
  FAKE_DEVICE_CHECK(device);
  *memory = nvmlMemory_t{};
  if (nvmlReturn_t rc = Number(Index(device), "memory_total", &memory->total);
      rc != NVML_SUCCESS) {
    return rc;
  }
  Number(Index(device), "memory_used", &memory->used);
  memory->free = memory->total - memory->used;
  return NVML_SUCCESS;
}

#define FAKE_UINT_GETTER(function, key)                                  \
  __attribute__((visibility("default"))) nvmlReturn_t function(          \
      nvmlDevice_t device, unsigned int* value) {                        \
    FAKE_DEVICE_CHECK(device);                                           \
    return Number(Index(device), key, value);                            \
  }                                                                      \
  static_assert(std::is_same_v<decltype(&function), nvmlDeviceGetUintFn>)

FAKE_UINT_GETTER(nvmlDeviceGetCurrPcieLinkGeneration, "pcie_gen_current");
FAKE_UINT_GETTER(nvmlDeviceGetMaxPcieLinkGeneration, "pcie_gen_max");
FAKE_UINT_GETTER(nvmlDeviceGetCurrPcieLinkWidth, "pcie_width_current");
FAKE_UINT_GETTER(nvmlDeviceGetMaxPcieLinkWidth, "pcie_width_max");
FAKE_UINT_GETTER(nvmlDeviceGetEnforcedPowerLimit, "power_enforced_mw");
FAKE_UINT_GETTER(nvmlDeviceGetPowerManagementDefaultLimit, "power_default_mw");
FAKE_UINT_GETTER(nvmlDeviceGetPowerUsage, "power_usage_mw");

__attribute__((visibility("default"))) nvmlReturn_t
nvmlDeviceGetPowerManagementLimitConstraints(nvmlDevice_t device,
                                             unsigned int* minLimit,
                                             unsigned int* maxLimit) {
  FAKE_DEVICE_CHECK(device);
  if (nvmlReturn_t rc = Number(Index(device), "power_min_mw", minLimit);
      rc != NVML_SUCCESS) {
    return rc;
  }
  return Number(Index(device), "power_max_mw", maxLimit);
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetClockInfo(
    nvmlDevice_t device, nvmlClockType_t type, unsigned int* clock) {
  FAKE_DEVICE_CHECK(device);
  if (type == NVML_CLOCK_SM) return Number(Index(device), "sm_clock", clock);
  if (type == NVML_CLOCK_MEM) return Number(Index(device), "mem_clock", clock);
  return NVML_ERROR_NOT_SUPPORTED;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetMaxClockInfo(
    nvmlDevice_t device, nvmlClockType_t type, unsigned int* clock) {
  FAKE_DEVICE_CHECK(device);
  if (type == NVML_CLOCK_SM) return Number(Index(device), "sm_clock_max", clock);
  if (type == NVML_CLOCK_MEM) {
    return Number(Index(device), "mem_clock_max", clock);
  }
  return NVML_ERROR_NOT_SUPPORTED;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetTemperature(
    nvmlDevice_t device, nvmlTemperatureSensors_t sensorType,
    unsigned int* temp) {
  FAKE_DEVICE_CHECK(device);
  if (sensorType != NVML_TEMPERATURE_GPU) return NVML_ERROR_INVALID_ARGUMENT;
  return Number(Index(device), "temperature", temp);
}

__attribute__((visibility("default"))) nvmlReturn_t
nvmlDeviceGetTemperatureThreshold(nvmlDevice_t device,
                                  nvmlTemperatureThresholds_t thresholdType,
                                  unsigned int* temp) {
  FAKE_DEVICE_CHECK(device);
  if (thresholdType == NVML_TEMPERATURE_THRESHOLD_SLOWDOWN) {
    return Number(Index(device), "temp_slowdown", temp);
  }
  if (thresholdType == NVML_TEMPERATURE_THRESHOLD_SHUTDOWN) {
    return Number(Index(device), "temp_shutdown", temp);
  }
  return NVML_ERROR_NOT_SUPPORTED;
}

#ifndef FAKE_NVML_OLD_DRIVER
__attribute__((visibility("default"))) nvmlReturn_t
nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device,
                                       unsigned long long* reasons) {
  FAKE_DEVICE_CHECK(device);
  return Number(Index(device), "clock_event_reasons", reasons);
}
#endif

__attribute__((visibility("default"))) nvmlReturn_t
nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t device,
                                          unsigned long long* reasons) {
  FAKE_DEVICE_CHECK(device);
  return Number(Index(device), "clock_event_reasons", reasons);
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetEccMode(
    nvmlDevice_t device, nvmlEnableState_t* current,
    nvmlEnableState_t* pending) {
  FAKE_DEVICE_CHECK(device);
  if (nvmlReturn_t rc = Number(Index(device), "ecc_current", current);
      rc != NVML_SUCCESS) {
    return rc;
  }
  if (Number(Index(device), "ecc_pending", pending) != NVML_SUCCESS) {
    *pending = *current;
  }
  return NVML_SUCCESS;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetTotalEccErrors(
    nvmlDevice_t device, nvmlMemoryErrorType_t errorType,
    nvmlEccCounterType_t counterType, unsigned long long* eccCounts) {
  FAKE_DEVICE_CHECK(device);
  const std::string key =
      std::string("ecc_") +
      (errorType == NVML_MEMORY_ERROR_TYPE_CORRECTED ? "corrected"
                                                     : "uncorrected") +
      (counterType == NVML_VOLATILE_ECC ? "_volatile" : "_aggregate");
  return Number(Index(device), key, eccCounts);
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetMigMode(
    nvmlDevice_t device, unsigned int* currentMode, unsigned int* pendingMode) {
  FAKE_DEVICE_CHECK(device);
  if (nvmlReturn_t rc = Number(Index(device), "mig_current", currentMode);
      rc != NVML_SUCCESS) {
    return rc;
  }
  if (Number(Index(device), "mig_pending", pendingMode) != NVML_SUCCESS) {
    *pendingMode = *currentMode;
  }
  return NVML_SUCCESS;
}

__attribute__((visibility("default"))) nvmlReturn_t
nvmlDeviceGetVirtualizationMode(nvmlDevice_t device,
                                nvmlGpuVirtualizationMode_t* pVirtualMode) {
  FAKE_DEVICE_CHECK(device);
  return Number(Index(device), "virtualization_mode", pVirtualMode);
}

#ifndef FAKE_NVML_OLD_DRIVER
__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetPersistenceMode(
    nvmlDevice_t device, nvmlEnableState_t* mode) {
  FAKE_DEVICE_CHECK(device);
  return Number(Index(device), "persistence_mode", mode);
}
#endif

}  // extern "C"

// Each definition has the signature gpu_facts.cc calls it through.
static_assert(std::is_same_v<decltype(&nvmlInit_v2), nvmlInit_v2_fn>);
static_assert(std::is_same_v<decltype(&nvmlShutdown), nvmlShutdown_fn>);
static_assert(std::is_same_v<decltype(&nvmlErrorString), nvmlErrorString_fn>);
static_assert(std::is_same_v<decltype(&nvmlSystemGetDriverVersion),
                             nvmlSystemGetDriverVersion_fn>);
static_assert(std::is_same_v<decltype(&nvmlSystemGetCudaDriverVersion_v2),
                             nvmlSystemGetCudaDriverVersion_v2_fn>);
static_assert(std::is_same_v<decltype(&nvmlDeviceGetCount_v2),
                             nvmlDeviceGetCount_v2_fn>);
static_assert(std::is_same_v<decltype(&nvmlDeviceGetHandleByIndex_v2),
                             nvmlDeviceGetHandleByIndex_v2_fn>);
static_assert(std::is_same_v<decltype(&nvmlDeviceGetName), nvmlDeviceGetName_fn>);
static_assert(std::is_same_v<decltype(&nvmlDeviceGetUUID), nvmlDeviceGetUUID_fn>);
static_assert(std::is_same_v<decltype(&nvmlDeviceGetPciInfo_v3),
                             nvmlDeviceGetPciInfo_v3_fn>);
static_assert(std::is_same_v<decltype(&nvmlDeviceGetMemoryInfo),
                             nvmlDeviceGetMemoryInfo_fn>);
static_assert(
    std::is_same_v<decltype(&nvmlDeviceGetPowerManagementLimitConstraints),
                   nvmlDeviceGetPowerManagementLimitConstraints_fn>);
static_assert(std::is_same_v<decltype(&nvmlDeviceGetClockInfo),
                             nvmlDeviceGetClockInfo_fn>);
static_assert(std::is_same_v<decltype(&nvmlDeviceGetMaxClockInfo),
                             nvmlDeviceGetClockInfo_fn>);
static_assert(std::is_same_v<decltype(&nvmlDeviceGetTemperature),
                             nvmlDeviceGetTemperature_fn>);
static_assert(std::is_same_v<decltype(&nvmlDeviceGetTemperatureThreshold),
                             nvmlDeviceGetTemperatureThreshold_fn>);
static_assert(std::is_same_v<decltype(&nvmlDeviceGetCurrentClocksThrottleReasons),
                             nvmlDeviceGetReasonsFn>);
static_assert(std::is_same_v<decltype(&nvmlDeviceGetEccMode),
                             nvmlDeviceGetEccMode_fn>);
static_assert(std::is_same_v<decltype(&nvmlDeviceGetTotalEccErrors),
                             nvmlDeviceGetTotalEccErrors_fn>);
static_assert(std::is_same_v<decltype(&nvmlDeviceGetMigMode),
                             nvmlDeviceGetMigMode_fn>);
static_assert(std::is_same_v<decltype(&nvmlDeviceGetVirtualizationMode),
                             nvmlDeviceGetVirtualizationMode_fn>);
