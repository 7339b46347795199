#include "nvml_library.h"

#include <dlfcn.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "koord/core/log.h"
#include "pci_address.h"

namespace koord::roles::device_daemon {

namespace {

// The few NVML types and signatures koord calls, as NVML's public API reference documents them
// (nvml.h is not a Debian package koord may build against).
using nvmlReturn_t = int;  // an enum of int size; 0 is NVML_SUCCESS
struct nvmlDevice_st;
using nvmlDevice_t = nvmlDevice_st*;

constexpr nvmlReturn_t kNvmlSuccess = 0;
constexpr nvmlReturn_t kNvmlErrorNotSupported = 3;
constexpr unsigned kNvmlNameBufferSize = 96;  // NVML_DEVICE_NAME_V2_BUFFER_SIZE
constexpr unsigned kNvmlUuidBufferSize = 96;  // NVML_DEVICE_UUID_V2_BUFFER_SIZE

struct nvmlMemory_t {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

struct nvmlPciInfo_t {   // the layout nvmlDeviceGetPciInfo_v3 fills
  char busIdLegacy[16];  // NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;
  unsigned int pciSubSystemId;
  char busId[32];  // NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE: "00000000:3B:00.0"
};

using InitFn = nvmlReturn_t (*)();
using ShutdownFn = nvmlReturn_t (*)();
using ErrorStringFn = const char* (*)(nvmlReturn_t);
using GetCountFn = nvmlReturn_t (*)(unsigned int*);
using GetHandleByIndexFn = nvmlReturn_t (*)(unsigned int, nvmlDevice_t*);
using GetStringFn = nvmlReturn_t (*)(nvmlDevice_t, char*, unsigned int);
using GetMemoryInfoFn = nvmlReturn_t (*)(nvmlDevice_t, nvmlMemory_t*);
using GetMinorNumberFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*);
using GetPciInfoFn = nvmlReturn_t (*)(nvmlDevice_t, nvmlPciInfo_t*);
// nvmlGpuP2PCapsIndex_t and nvmlGpuP2PStatus_t are int-sized enums.
using GetP2PStatusFn = nvmlReturn_t (*)(nvmlDevice_t, nvmlDevice_t, int, int*);
constexpr int kNvmlP2PCapsIndexNvlink = 2;  // NVML_P2P_CAPS_INDEX_NVLINK
constexpr int kNvmlP2PStatusOk = 0;         // NVML_P2P_STATUS_OK

struct NvmlFunctions {
  InitFn init = nullptr;
  ShutdownFn shutdown = nullptr;
  ErrorStringFn error_string = nullptr;  // optional: only makes messages readable
  GetCountFn get_count = nullptr;
  GetHandleByIndexFn get_handle_by_index = nullptr;
  GetStringFn get_name = nullptr;
  GetStringFn get_uuid = nullptr;
  GetMemoryInfoFn get_memory_info = nullptr;
  GetMinorNumberFn get_minor_number = nullptr;
  GetPciInfoFn get_pci_info = nullptr;
  GetP2PStatusFn get_p2p_status = nullptr;  // optional: without it no NVLink peers are reported
};

// A string NVML wrote into `buffer`, cut at the buffer's end if it forgot the terminator.
std::string bufferString(const char* buffer, std::size_t size) {
  return std::string(buffer, ::strnlen(buffer, size));
}

class NvmlLibrary final : public GpuInfoSource {
 public:
  NvmlLibrary(void* handle, NvmlFunctions fns) : handle_(handle), fns_(fns) {}
  ~NvmlLibrary() override { ::dlclose(handle_); }
  NvmlLibrary(const NvmlLibrary&) = delete;
  NvmlLibrary& operator=(const NvmlLibrary&) = delete;

  kube::Expected<std::vector<GpuDetails>> listGpus() override {
    nvmlReturn_t rc = fns_.init();
    if (rc != kNvmlSuccess)
      return kube::makeKubeError(fmt::format("nvmlInit_v2: {}", errorString(rc)));
    // Each round initializes afresh: a driver reloaded between rounds is picked up.
    struct ShutdownGuard {
      const NvmlLibrary* lib;
      ~ShutdownGuard() {
        if (nvmlReturn_t r = lib->fns_.shutdown(); r != kNvmlSuccess)
          KOORD_LOG_WARNING("device-daemon: nvmlShutdown: {}", lib->errorString(r));
      }
    } guard{this};

    unsigned int count = 0;
    rc = fns_.get_count(&count);
    if (rc != kNvmlSuccess)
      return kube::makeKubeError(fmt::format("nvmlDeviceGetCount_v2: {}", errorString(rc)));
    std::vector<GpuDetails> gpus;
    std::vector<nvmlDevice_t> handles;
    gpus.reserve(count);
    for (unsigned int i = 0; i < count; ++i) {
      nvmlDevice_t device = nullptr;
      gpus.push_back(describe(i, device));
      handles.push_back(device);
    }
    addNvlinkPeers(gpus, handles);
    return gpus;
  }

 private:
  // Koordinator's p2pLinks: each pair of GPUs NVML says can talk over NVLink. A pair it cannot
  // answer for is left out (no link claimed), not a fault of either GPU.
  void addNvlinkPeers(std::vector<GpuDetails>& gpus,
                      const std::vector<nvmlDevice_t>& handles) const {
    if (fns_.get_p2p_status == nullptr)
      return;
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      for (std::size_t j = i + 1; j < gpus.size(); ++j) {
        if (handles[i] == nullptr || handles[j] == nullptr || gpus[i].minor < 0 ||
            gpus[j].minor < 0)
          continue;
        int status = -1;
        nvmlReturn_t rc =
            fns_.get_p2p_status(handles[i], handles[j], kNvmlP2PCapsIndexNvlink, &status);
        if (rc != kNvmlSuccess || status != kNvmlP2PStatusOk)
          continue;
        gpus[i].nvlink_peers.push_back(gpus[j].minor);
        gpus[j].nvlink_peers.push_back(gpus[i].minor);
      }
    }
    for (auto& g : gpus)
      std::sort(g.nvlink_peers.begin(), g.nvlink_peers.end());
  }

  GpuDetails describe(unsigned int index, nvmlDevice_t& device) const {
    GpuDetails g;
    auto fail = [&](std::string_view call, nvmlReturn_t rc) {
      if (!g.error.empty())
        g.error += "; ";
      g.error += fmt::format("{}: {}", call, errorString(rc));
    };
    if (nvmlReturn_t rc = fns_.get_handle_by_index(index, &device); rc != kNvmlSuccess) {
      device = nullptr;
      fail(fmt::format("nvmlDeviceGetHandleByIndex_v2({})", index), rc);
      return g;
    }
    nvmlPciInfo_t pci{};
    if (nvmlReturn_t rc = fns_.get_pci_info(device, &pci); rc == kNvmlSuccess) {
      std::string bus = bufferString(pci.busId, sizeof pci.busId);
      if (auto normalized = normalizePciAddress(bus))
        g.bus_id = *normalized;
      else
        g.error = fmt::format("nvmlDeviceGetPciInfo_v3: unexpected bus id \"{}\"", bus);
    } else {
      fail("nvmlDeviceGetPciInfo_v3", rc);
    }
    char name[kNvmlNameBufferSize] = {};
    if (nvmlReturn_t rc = fns_.get_name(device, name, sizeof name); rc == kNvmlSuccess)
      g.name = bufferString(name, sizeof name);
    else
      fail("nvmlDeviceGetName", rc);
    char uuid[kNvmlUuidBufferSize] = {};
    if (nvmlReturn_t rc = fns_.get_uuid(device, uuid, sizeof uuid); rc == kNvmlSuccess)
      g.uuid = bufferString(uuid, sizeof uuid);
    else
      fail("nvmlDeviceGetUUID", rc);
    nvmlMemory_t memory{};
    if (nvmlReturn_t rc = fns_.get_memory_info(device, &memory); rc == kNvmlSuccess)
      g.memory_total_bytes = memory.total;
    else
      fail("nvmlDeviceGetMemoryInfo", rc);
    unsigned int minor = 0;
    nvmlReturn_t rc = fns_.get_minor_number(device, &minor);
    if (rc == kNvmlSuccess)
      g.minor = static_cast<int>(minor);
    else if (rc != kNvmlErrorNotSupported)  // a platform without device nodes: unknown, not sick
      fail("nvmlDeviceGetMinorNumber", rc);
    return g;
  }

  std::string errorString(nvmlReturn_t rc) const {
    const char* text = fns_.error_string != nullptr ? fns_.error_string(rc) : nullptr;
    return text != nullptr ? fmt::format("{} (NVML error {})", text, rc)
                           : fmt::format("NVML error {}", rc);
  }

  void* handle_;
  NvmlFunctions fns_;
};

template <typename Fn>
bool bind(void* handle, const char* symbol, Fn& target, std::string& missing) {
  void* address = ::dlsym(handle, symbol);
  if (address == nullptr) {
    if (!missing.empty())
      missing += ", ";
    missing += symbol;
    return false;
  }
  // POSIX guarantees a data pointer from dlsym converts to the function's pointer type.
  target = reinterpret_cast<Fn>(address);
  return true;
}

}  // namespace

std::unique_ptr<GpuInfoSource> loadNvml(const std::string& library) {
  void* handle = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    KOORD_LOG_INFO("device-daemon: {} not loaded ({}); NVIDIA GPUs are reported from sysfs only",
                   library, why != nullptr ? why : "unknown reason");
    return nullptr;
  }
  NvmlFunctions fns;
  std::string missing;
  bind(handle, "nvmlInit_v2", fns.init, missing);
  bind(handle, "nvmlShutdown", fns.shutdown, missing);
  bind(handle, "nvmlDeviceGetCount_v2", fns.get_count, missing);
  bind(handle, "nvmlDeviceGetHandleByIndex_v2", fns.get_handle_by_index, missing);
  bind(handle, "nvmlDeviceGetName", fns.get_name, missing);
  bind(handle, "nvmlDeviceGetUUID", fns.get_uuid, missing);
  bind(handle, "nvmlDeviceGetMemoryInfo", fns.get_memory_info, missing);
  bind(handle, "nvmlDeviceGetMinorNumber", fns.get_minor_number, missing);
  bind(handle, "nvmlDeviceGetPciInfo_v3", fns.get_pci_info, missing);
  if (!missing.empty()) {
    KOORD_LOG_WARNING(
        "device-daemon: {} lacks {} (a driver too old?); NVIDIA GPUs are reported from sysfs only",
        library, missing);
    ::dlclose(handle);
    return nullptr;
  }
  std::string unused;
  bind(handle, "nvmlErrorString", fns.error_string, unused);
  bind(handle, "nvmlDeviceGetP2PStatus", fns.get_p2p_status, unused);
  KOORD_LOG_INFO("device-daemon: loaded {}", library);
  return std::make_unique<NvmlLibrary>(handle, fns);
}

}  // namespace koord::roles::device_daemon
