// A stand-in for libnvidia-ml.so.1 with two H100s, built as a shared library of that name so
// that koord-device-daemon's dlopen path runs in tests on machines without NVIDIA's driver.
// GPU 0 (bus 00000000:3B:00.0) answers everything; GPU 1 (00000000:86:00.0) is "lost" when
// asked for its memory. KOORD_FAKE_NVML_INIT_ERROR=<n> makes nvmlInit_v2 return n. The two are
// joined by NVLink.
#include <cstdlib>
#include <cstring>

namespace {

constexpr int kSuccess = 0;
constexpr int kInvalidArgument = 2;
constexpr int kUninitialized = 1;
constexpr int kGpuIsLost = 15;

struct FakeGpu {
  const char* bus_id;
  const char* name;
  const char* uuid;
  unsigned long long memory_total;  // 81559 MiB; 0: "lost" when asked
  unsigned int minor;
};

// Minors deliberately not in bus order: the report must take NVML's, not count.
const FakeGpu kGpus[] = {
    {"00000000:3B:00.0", "NVIDIA H100 80GB HBM3", "GPU-11111111-2222-3333-4444-555555555555",
     85520809984ULL, 1},
    {"00000000:86:00.0", "NVIDIA H100 80GB HBM3", "GPU-66666666-7777-8888-9999-000000000000", 0, 0},
};

int g_initialized = 0;

const FakeGpu* gpu(void* handle) {
  for (const auto& g : kGpus) {
    if (handle == &g)
      return &g;
  }
  return nullptr;
}

int copyString(const char* value, char* out, unsigned int length) {
  if (out == nullptr || std::strlen(value) + 1 > length)
    return kInvalidArgument;
  std::strcpy(out, value);
  return kSuccess;
}

}  // namespace

extern "C" {

struct FakeMemory {
  unsigned long long total, free, used;
};
struct FakePciInfo {
  char busIdLegacy[16];
  unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
};

// How often NVML was initialized and shut down, for tests that check the two balance.
int koordFakeNvmlInits = 0;
int koordFakeNvmlShutdowns = 0;

int nvmlInit_v2() {
  if (const char* forced = std::getenv("KOORD_FAKE_NVML_INIT_ERROR"))
    return std::atoi(forced);
  ++koordFakeNvmlInits;
  ++g_initialized;
  return kSuccess;
}

int nvmlShutdown() {
  if (g_initialized == 0)
    return kUninitialized;
  ++koordFakeNvmlShutdowns;
  --g_initialized;
  return kSuccess;
}

const char* nvmlErrorString(int rc) {
  switch (rc) {
    case kGpuIsLost:
      return "GPU is lost";
    case 9:
      return "Driver Not Loaded";
    default:
      return "Unknown Error";
  }
}

int nvmlDeviceGetCount_v2(unsigned int* count) {
  if (g_initialized == 0)
    return kUninitialized;
  *count = sizeof kGpus / sizeof kGpus[0];
  return kSuccess;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned int index, void** handle) {
  if (g_initialized == 0)
    return kUninitialized;
  if (index >= sizeof kGpus / sizeof kGpus[0])
    return kInvalidArgument;
  *handle = const_cast<FakeGpu*>(&kGpus[index]);
  return kSuccess;
}

int nvmlDeviceGetName(void* handle, char* name, unsigned int length) {
  const FakeGpu* g = gpu(handle);
  return g == nullptr ? kInvalidArgument : copyString(g->name, name, length);
}

int nvmlDeviceGetUUID(void* handle, char* uuid, unsigned int length) {
  const FakeGpu* g = gpu(handle);
  return g == nullptr ? kInvalidArgument : copyString(g->uuid, uuid, length);
}

int nvmlDeviceGetMemoryInfo(void* handle, FakeMemory* memory) {
  const FakeGpu* g = gpu(handle);
  if (g == nullptr)
    return kInvalidArgument;
  if (g->memory_total == 0)
    return kGpuIsLost;
  memory->total = g->memory_total;
  memory->used = 512ULL << 20;
  memory->free = g->memory_total - memory->used;
  return kSuccess;
}

int nvmlDeviceGetMinorNumber(void* handle, unsigned int* minor) {
  const FakeGpu* g = gpu(handle);
  if (g == nullptr)
    return kInvalidArgument;
  *minor = g->minor;
  return kSuccess;
}

int nvmlDeviceGetPciInfo_v3(void* handle, FakePciInfo* pci) {
  const FakeGpu* g = gpu(handle);
  if (g == nullptr)
    return kInvalidArgument;
  std::memset(pci, 0, sizeof *pci);
  std::strcpy(pci->busId, g->bus_id);
  // The legacy field holds the short form ("0000:3B:00.0"); koord must read busId.
  std::strcpy(pci->busIdLegacy, g->bus_id + 4);
  pci->pciDeviceId = 0x233010de;
  return kSuccess;
}

int nvmlDeviceGetP2PStatus(void* a, void* b, int caps_index, int* status) {
  if (gpu(a) == nullptr || gpu(b) == nullptr || status == nullptr)
    return kInvalidArgument;
  constexpr int kNvlink = 2, kOk = 0, kNotSupported = 4;
  *status = caps_index == kNvlink && a != b ? kOk : kNotSupported;
  return kSuccess;
}

}  // extern "C"
