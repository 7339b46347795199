#include "cri/cri_backend.h"

#include <fmt/format.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/channel_arguments.h>

#include "koord/app/role_app.h"

namespace koord::roles::runtime_proxy {

std::shared_ptr<grpc::Channel> criChannel(const std::string& target) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kMaxCriMessageBytes);
  args.SetMaxSendMessageSize(kMaxCriMessageBytes);
  // A runtime restart must not leave kubelet's calls waiting out a long reconnect backoff.
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  return grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args);
}

std::string unixTarget(const std::string& endpoint, const char* flag) {
  std::string path = endpoint;
  if (path.starts_with("unix://"))
    path = path.substr(7);
  else if (path.starts_with("unix:"))
    path = path.substr(5);
  else if (path.find("://") != std::string::npos)
    throw app::ConfigError(
        fmt::format("--{}={:?}: only unix sockets are supported", flag, endpoint));
  if (path.empty() || path.front() != '/')
    throw app::ConfigError(
        fmt::format("--{}={:?}: want an absolute unix socket path", flag, endpoint));
  return "unix:" + path;
}

}  // namespace koord::roles::runtime_proxy
