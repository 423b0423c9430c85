// agent/facts/nvml_api.h — the part of NVML's C API that fleetbench calls,
// declared here because nodes (and this build machine) have no nvml.h: only
// the driver's libnvidia-ml.so.1, loaded with dlopen (gpu_facts.h in this
// folder). Types, values and signatures are copied from NVML's public API
// reference (docs.nvidia.com/deploy/nvml-api); only what is used is
// declared. tests/fake_nvml implements the same entry points and checks its
// definitions against these typedefs at compile time.
//
// Plain C declarations at global scope, as nvml.h would make them; include
// this only from gpu_facts.cc and the fake, never from a public header.
#ifndef FLEETBENCH_AGENT_FACTS_NVML_API_H_
#define FLEETBENCH_AGENT_FACTS_NVML_API_H_

extern "C" {

typedef struct nvmlDevice_st* nvmlDevice_t;

typedef enum nvmlReturn_enum {
  NVML_SUCCESS = 0,
  NVML_ERROR_UNINITIALIZED = 1,
  NVML_ERROR_INVALID_ARGUMENT = 2,
  NVML_ERROR_NOT_SUPPORTED = 3,
  NVML_ERROR_NO_PERMISSION = 4,
  NVML_ERROR_ALREADY_INITIALIZED = 5,
  NVML_ERROR_NOT_FOUND = 6,
  NVML_ERROR_INSUFFICIENT_SIZE = 7,
  NVML_ERROR_INSUFFICIENT_POWER = 8,
  NVML_ERROR_DRIVER_NOT_LOADED = 9,
  NVML_ERROR_TIMEOUT = 10,
  NVML_ERROR_IRQ_ISSUE = 11,
  NVML_ERROR_LIBRARY_NOT_FOUND = 12,
  NVML_ERROR_FUNCTION_NOT_FOUND = 13,
  NVML_ERROR_CORRUPTED_INFOROM = 14,
  NVML_ERROR_GPU_IS_LOST = 15,
  NVML_ERROR_RESET_REQUIRED = 16,
  NVML_ERROR_OPERATING_SYSTEM = 17,
  NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
  NVML_ERROR_IN_USE = 19,
  NVML_ERROR_MEMORY = 20,
  NVML_ERROR_NO_DATA = 21,
  NVML_ERROR_UNKNOWN = 999
} nvmlReturn_t;

typedef enum nvmlEnableState_enum {
  NVML_FEATURE_DISABLED = 0,
  NVML_FEATURE_ENABLED = 1
} nvmlEnableState_t;

typedef enum nvmlClockType_enum {
  NVML_CLOCK_GRAPHICS = 0,
  NVML_CLOCK_SM = 1,
  NVML_CLOCK_MEM = 2,
  NVML_CLOCK_VIDEO = 3
} nvmlClockType_t;

typedef enum nvmlTemperatureSensors_enum {
  NVML_TEMPERATURE_GPU = 0
} nvmlTemperatureSensors_t;

typedef enum nvmlTemperatureThresholds_enum {
  NVML_TEMPERATURE_THRESHOLD_SHUTDOWN = 0,
  NVML_TEMPERATURE_THRESHOLD_SLOWDOWN = 1,
  NVML_TEMPERATURE_THRESHOLD_MEM_MAX = 2,
  NVML_TEMPERATURE_THRESHOLD_GPU_MAX = 3
} nvmlTemperatureThresholds_t;

typedef enum nvmlMemoryErrorType_enum {
  NVML_MEMORY_ERROR_TYPE_CORRECTED = 0,
  NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1
} nvmlMemoryErrorType_t;

typedef enum nvmlEccCounterType_enum {
  NVML_VOLATILE_ECC = 0,
  NVML_AGGREGATE_ECC = 1
} nvmlEccCounterType_t;

typedef enum nvmlGpuVirtualizationMode {
  NVML_GPU_VIRTUALIZATION_MODE_NONE = 0,
  NVML_GPU_VIRTUALIZATION_MODE_PASSTHROUGH = 1,
  NVML_GPU_VIRTUALIZATION_MODE_VGPU = 2,
  NVML_GPU_VIRTUALIZATION_MODE_HOST_VGPU = 3,
  NVML_GPU_VIRTUALIZATION_MODE_HOST_VSGA = 4
} nvmlGpuVirtualizationMode_t;

#define NVML_DEVICE_MIG_DISABLE 0x0
#define NVML_DEVICE_MIG_ENABLE 0x1

#define NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE 80
#define NVML_DEVICE_NAME_V2_BUFFER_SIZE 96
#define NVML_DEVICE_UUID_V2_BUFFER_SIZE 96
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE 32
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE 16

typedef struct nvmlPciInfo_st {
  char busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;     // combined 16-bit device id, 16-bit vendor id
  unsigned int pciSubSystemId;
  char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];  // "00000000:3B:00.0"
} nvmlPciInfo_t;

typedef struct nvmlMemory_st {
  unsigned long long total;  // bytes
  unsigned long long free;
  unsigned long long used;
} nvmlMemory_t;

// Signatures of the entry points used. Power is in milliwatts, clocks in
// MHz, temperatures in degrees C.
typedef nvmlReturn_t (*nvmlInit_v2_fn)(void);
typedef nvmlReturn_t (*nvmlShutdown_fn)(void);
typedef const char* (*nvmlErrorString_fn)(nvmlReturn_t result);
typedef nvmlReturn_t (*nvmlSystemGetDriverVersion_fn)(char* version,
                                                      unsigned int length);
typedef nvmlReturn_t (*nvmlSystemGetCudaDriverVersion_v2_fn)(
    int* cudaDriverVersion);
typedef nvmlReturn_t (*nvmlDeviceGetCount_v2_fn)(unsigned int* deviceCount);
typedef nvmlReturn_t (*nvmlDeviceGetHandleByIndex_v2_fn)(unsigned int index,
                                                         nvmlDevice_t* device);
typedef nvmlReturn_t (*nvmlDeviceGetName_fn)(nvmlDevice_t device, char* name,
                                             unsigned int length);
typedef nvmlReturn_t (*nvmlDeviceGetUUID_fn)(nvmlDevice_t device, char* uuid,
                                             unsigned int length);
typedef nvmlReturn_t (*nvmlDeviceGetPciInfo_v3_fn)(nvmlDevice_t device,
                                                   nvmlPciInfo_t* pci);
typedef nvmlReturn_t (*nvmlDeviceGetMemoryInfo_fn)(nvmlDevice_t device,
                                                   nvmlMemory_t* memory);
typedef nvmlReturn_t (*nvmlDeviceGetUintFn)(nvmlDevice_t device,
                                            unsigned int* value);
// nvmlDeviceGetCurrPcieLinkGeneration, nvmlDeviceGetMaxPcieLinkGeneration,
// nvmlDeviceGetCurrPcieLinkWidth, nvmlDeviceGetMaxPcieLinkWidth,
// nvmlDeviceGetEnforcedPowerLimit, nvmlDeviceGetPowerManagementDefaultLimit,
// nvmlDeviceGetPowerUsage all have the nvmlDeviceGetUintFn shape.
typedef nvmlReturn_t (*nvmlDeviceGetPowerManagementLimitConstraints_fn)(
    nvmlDevice_t device, unsigned int* minLimit, unsigned int* maxLimit);
typedef nvmlReturn_t (*nvmlDeviceGetClockInfo_fn)(nvmlDevice_t device,
                                                  nvmlClockType_t type,
                                                  unsigned int* clock);
// nvmlDeviceGetMaxClockInfo has the same shape as nvmlDeviceGetClockInfo.
typedef nvmlReturn_t (*nvmlDeviceGetTemperature_fn)(
    nvmlDevice_t device, nvmlTemperatureSensors_t sensorType,
    unsigned int* temp);
typedef nvmlReturn_t (*nvmlDeviceGetTemperatureThreshold_fn)(
    nvmlDevice_t device, nvmlTemperatureThresholds_t thresholdType,
    unsigned int* temp);
// nvmlDeviceGetCurrentClocksEventReasons (driver r535+) and its older name
// nvmlDeviceGetCurrentClocksThrottleReasons.
typedef nvmlReturn_t (*nvmlDeviceGetReasonsFn)(nvmlDevice_t device,
                                               unsigned long long* reasons);
typedef nvmlReturn_t (*nvmlDeviceGetEccMode_fn)(nvmlDevice_t device,
                                                nvmlEnableState_t* current,
                                                nvmlEnableState_t* pending);
typedef nvmlReturn_t (*nvmlDeviceGetTotalEccErrors_fn)(
    nvmlDevice_t device, nvmlMemoryErrorType_t errorType,
    nvmlEccCounterType_t counterType, unsigned long long* eccCounts);
typedef nvmlReturn_t (*nvmlDeviceGetMigMode_fn)(nvmlDevice_t device,
                                                unsigned int* currentMode,
                                                unsigned int* pendingMode);
typedef nvmlReturn_t (*nvmlDeviceGetVirtualizationMode_fn)(
    nvmlDevice_t device, nvmlGpuVirtualizationMode_t* pVirtualMode);
typedef nvmlReturn_t (*nvmlDeviceGetPersistenceMode_fn)(
    nvmlDevice_t device, nvmlEnableState_t* mode);

}  // extern "C"

#endif  // FLEETBENCH_AGENT_FACTS_NVML_API_H_
