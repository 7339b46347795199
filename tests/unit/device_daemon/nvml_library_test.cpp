#include "nvml_library.h"

#include <dlfcn.h>

#include <catch2/catch.hpp>

#include <cstdlib>

#include "catch_expected.h"
#include "log_lines.h"

using namespace koord::roles::device_daemon;
using koord::testing::LogLines;

namespace {

// The fake library's own counters, read through a second dlopen of the same file (the loader
// hands back the instance koord loaded).
struct FakeNvmlCounters {
  void* handle = ::dlopen(KOORD_FAKE_NVML, RTLD_NOW | RTLD_LOCAL);
  ~FakeNvmlCounters() {
    if (handle != nullptr)
      ::dlclose(handle);
  }
  int read(const char* name) const { return *static_cast<int*>(::dlsym(handle, name)); }
};

}  // namespace

TEST_CASE("NVML by dlopen: every GPU with its bus ID, name, UUID, memory and minor",
          "[devicedaemon][nvml]") {
  LogLines log;
  auto nvml = loadNvml(KOORD_FAKE_NVML);
  REQUIRE(nvml != nullptr);
  CHECK(log.count("loaded") == 1);
  FakeNvmlCounters counters;
  REQUIRE(counters.handle != nullptr);
  int inits = counters.read("koordFakeNvmlInits");

  auto gpus = nvml->listGpus();
  REQUIRE(gpus);
  REQUIRE(gpus->size() == 2);
  const GpuDetails& a = (*gpus)[0];
  CHECK(a.bus_id == "0000:3b:00.0");  // from "00000000:3B:00.0"
  CHECK(a.name == "NVIDIA H100 80GB HBM3");
  CHECK(a.uuid == "GPU-11111111-2222-3333-4444-555555555555");
  CHECK(a.memory_total_bytes == 81559ULL << 20);
  CHECK(a.minor == 1);
  CHECK(a.error.empty());
  CHECK(a.nvlink_peers == std::vector<int>{0});  // the fake's two GPUs share NVLink

  // The fake's second GPU is lost when asked for its memory: the rest is still read.
  const GpuDetails& b = (*gpus)[1];
  CHECK(b.bus_id == "0000:86:00.0");
  CHECK(b.uuid == "GPU-66666666-7777-8888-9999-000000000000");
  CHECK(b.minor == 0);
  CHECK(b.memory_total_bytes == 0);
  CHECK(b.error == "nvmlDeviceGetMemoryInfo: GPU is lost (NVML error 15)");
  CHECK(b.nvlink_peers == std::vector<int>{1});

  // Each round initializes NVML and shuts it down again.
  CHECK(counters.read("koordFakeNvmlInits") == inits + 1);
  CHECK(counters.read("koordFakeNvmlShutdowns") == counters.read("koordFakeNvmlInits"));
}

TEST_CASE("NVML by dlopen: a driver that will not initialize is an error naming the call",
          "[devicedaemon][nvml]") {
  auto nvml = loadNvml(KOORD_FAKE_NVML);
  REQUIRE(nvml != nullptr);
  ::setenv("KOORD_FAKE_NVML_INIT_ERROR", "9", 1);
  auto gpus = nvml->listGpus();
  ::unsetenv("KOORD_FAKE_NVML_INIT_ERROR");
  REQUIRE_FALSE(gpus);
  CHECK(gpus.error().message == "nvmlInit_v2: Driver Not Loaded (NVML error 9)");
  CHECK(nvml->listGpus());  // and the next round, with the driver back, works
}

TEST_CASE("NVML by dlopen: no library is an info line, not an error; a wrong one a warning",
          "[devicedaemon][nvml]") {
  LogLines log;
  CHECK(loadNvml("libkoord-no-such-nvml.so.1") == nullptr);
  REQUIRE(log.lines.size() == 1);
  CHECK(log.lines[0][0] == 'I');
  CHECK(log.count("libkoord-no-such-nvml.so.1 not loaded") == 1);

  // A real library that is not NVML: the missing functions are named.
  log.lines.clear();
  CHECK(loadNvml("libm.so.6") == nullptr);
  REQUIRE(log.lines.size() == 1);
  CHECK(log.lines[0][0] == 'W');
  CHECK(log.count("lacks nvmlInit_v2, nvmlShutdown") == 1);
}
