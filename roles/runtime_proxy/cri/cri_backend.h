// The runtime's CRI endpoints as the proxy's flags name them, and the gRPC channel the proxy
// itself calls the runtime through (the rebuild after a restart; forwarding is cri_relay's).
#pragma once

#include <grpcpp/channel.h>

#include <memory>
#include <string>

namespace koord::roles::runtime_proxy {

/// A CRI endpoint flag's value as a gRPC target: "/run/x.sock", "unix:///run/x.sock" and
/// "unix:/run/x.sock" name the same socket; other schemes throw app::ConfigError (the proxy
/// only speaks to a local runtime).
std::string unixTarget(const std::string& endpoint, const char* flag);

/// kubelet's limit on a CRI message both ways (and containerd's): the proxy's own calls accept
/// anything the runtime would send kubelet.
inline constexpr int kMaxCriMessageBytes = 16 * 1024 * 1024;

/// A channel to a CRI endpoint with the proxy's limits and reconnect backoff.
std::shared_ptr<grpc::Channel> criChannel(const std::string& target);

}  // namespace koord::roles::runtime_proxy
