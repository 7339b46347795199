// A hook's devices and mounts (koord's own response fields, for RDMADeviceInject and
// GPUEnvInject's HAMi-core library) reach the CRI CreateContainer request of either version.
#include <catch2/catch.hpp>

#include "cri/runtime/v1/api.pb.h"
#include "cri/runtime/v1alpha2/api.pb.h"
#include "hooks/cri_hook_translation.h"

using namespace koord::roles::runtime_proxy;

namespace {

hookapi::ContainerResourceHookResponse answer() {
  hookapi::ContainerResourceHookResponse a;
  (*a.mutable_container_envs())["NVIDIA_VISIBLE_DEVICES"] = "0,1";
  for (const char* path : {"/dev/infiniband/rdma_cm", "/dev/infiniband/uverbs2", "/dev/fuse"}) {
    auto* d = a.add_container_devices();
    d->set_container_path(path);
    d->set_host_path(path);
    d->set_permissions("rwm");
  }
  auto* m = a.add_container_mounts();
  m->set_container_path("/usr/local/vgpu/libvgpu.so");
  m->set_host_path("/usr/local/vgpu/libvgpu.so");
  return a;
}

template <typename Request>
void check() {
  Request create;
  auto* config = create.mutable_config();
  auto* kubelet_device = config->add_devices();  // the kubelet's own at the same path wins
  kubelet_device->set_container_path("/dev/fuse");
  kubelet_device->set_host_path("/dev/fuse-host");
  auto* kubelet_mount = config->add_mounts();
  kubelet_mount->set_container_path("/data");
  kubelet_mount->set_host_path("/var/lib/data");

  mergeContainerHookResponse(answer(), create);

  REQUIRE(config->devices_size() == 3);
  CHECK(config->devices(0).host_path() == "/dev/fuse-host");
  CHECK(config->devices(1).container_path() == "/dev/infiniband/rdma_cm");
  CHECK(config->devices(1).host_path() == "/dev/infiniband/rdma_cm");
  CHECK(config->devices(1).permissions() == "rwm");
  CHECK(config->devices(2).container_path() == "/dev/infiniband/uverbs2");
  REQUIRE(config->mounts_size() == 2);
  CHECK(config->mounts(0).container_path() == "/data");
  CHECK(config->mounts(1).container_path() == "/usr/local/vgpu/libvgpu.so");
  CHECK(config->mounts(1).host_path() == "/usr/local/vgpu/libvgpu.so");
  CHECK_FALSE(config->mounts(1).readonly());
  REQUIRE(config->envs_size() == 1);
  CHECK(config->envs(0).key() == "NVIDIA_VISIBLE_DEVICES");
  CHECK(config->envs(0).value() == "0,1");
}

}  // namespace

TEST_CASE("runtime-proxy hooks: a hook's devices and mounts join the container's",
          "[runtime-proxy]") {
  SECTION("CRI v1") {
    check<::runtime::v1::CreateContainerRequest>();
  }
  SECTION("CRI v1alpha2") {
    check<::runtime::v1alpha2::CreateContainerRequest>();
  }
}
