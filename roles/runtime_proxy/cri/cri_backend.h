// The runtime and image services the proxy forwards to (containerd's CRI plugin), as generic
// gRPC stubs: requests travel as the bytes kubelet sent unless a hook rewrites them.
#pragma once

#include <grpcpp/generic/generic_stub.h>

#include <memory>
#include <string>

#include "cri/cri_method.h"

namespace koord::roles::runtime_proxy {

/// A CRI endpoint flag's value as a gRPC target: "/run/x.sock", "unix:///run/x.sock" and
/// "unix:/run/x.sock" name the same socket; other schemes throw app::ConfigError (the proxy
/// only speaks to a local runtime).
std::string unixTarget(const std::string& endpoint, const char* flag);

/// kubelet's limit on a CRI message both ways (and containerd's): the proxy refuses nothing
/// that either end would accept.
inline constexpr int kMaxCriMessageBytes = 16 * 1024 * 1024;

class CriBackend {
 public:
  /// Targets as unixTarget gives them; channels connect lazily.
  CriBackend(const std::string& runtime_target, const std::string& image_target);

  grpc::GenericStub& stubFor(CriService service) {
    return service == CriService::kImage ? image_ : runtime_;
  }

 private:
  grpc::GenericStub runtime_;
  grpc::GenericStub image_;
};

}  // namespace koord::roles::runtime_proxy
