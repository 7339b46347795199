#include "cri/cri_proxy_server.h"

#include <fmt/format.h>
#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "cri/cri_backend.h"
#include "cri/cri_method.h"
#include "cri/forward_reactor.h"
#include "koord/app/role_app.h"
#include "koord/core/log.h"

namespace koord::roles::runtime_proxy {

namespace {

class CriProxyService final : public grpc::CallbackGenericService {
 public:
  CriProxyService(CriBackend& backend, CallInterceptor* interceptor)
      : backend_(backend), interceptor_(interceptor) {}

  grpc::ServerGenericBidiReactor* CreateReactor(
      grpc::GenericCallbackServerContext* context) override {
    return newForwardReactor(context, classifyCriMethod(context->method()), backend_, interceptor_);
  }

 private:
  CriBackend& backend_;
  CallInterceptor* interceptor_;
};

// Whether a process accepts connections on the unix socket at `path`.
bool someoneListens(const std::string& path) {
  sockaddr_un addr{};
  if (path.size() >= sizeof(addr.sun_path))
    return false;
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return false;
  const bool connected = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return connected;
}

// A socket left by a proxy that died is replaced; a live one is not taken over, and a file
// that is not a socket is not deleted.
void prepareSocketPath(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  if (ec)
    throw app::ConfigError(fmt::format("creating the directory of {}: {}", path, ec.message()));
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT)
      return;
    throw app::ConfigError(fmt::format("{}: {}", path, std::strerror(errno)));
  }
  if (!S_ISSOCK(st.st_mode))
    throw app::ConfigError(fmt::format("{} exists and is not a socket", path));
  if (someoneListens(path))
    throw app::ConfigError(fmt::format("{}: another process is serving this socket", path));
  if (::unlink(path.c_str()) != 0 && errno != ENOENT)
    throw app::ConfigError(fmt::format("removing stale socket {}: {}", path, std::strerror(errno)));
  KOORD_LOG_INFO("runtime-proxy: replaced the stale socket {}", path);
}

}  // namespace

struct CriProxyServer::Impl {
  CriProxyConfig config;
  std::string socket_path;
  CriBackend backend;
  CriProxyService service;
  std::unique_ptr<grpc::Server> server;

  Impl(CriProxyConfig c, CallInterceptor* interceptor)
      : config(std::move(c)),
        socket_path(unixTarget(config.listen_endpoint, "koord-runtimeproxy-endpoint").substr(5)),
        backend(unixTarget(config.runtime_endpoint, "remote-runtime-service-endpoint"),
                unixTarget(
                    config.image_endpoint.empty() ? config.runtime_endpoint : config.image_endpoint,
                    "remote-image-service-endpoint")),
        service(backend, interceptor) {}
};

CriProxyServer::CriProxyServer(CriProxyConfig config, CallInterceptor* interceptor)
    : impl_(std::make_unique<Impl>(std::move(config), interceptor)) {}

CriProxyServer::~CriProxyServer() {
  if (impl_->server)
    shutdown(std::chrono::milliseconds(0));
}

void CriProxyServer::start() {
  prepareSocketPath(impl_->socket_path);
  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix:" + impl_->socket_path, grpc::InsecureServerCredentials());
  builder.SetMaxReceiveMessageSize(kMaxCriMessageBytes);
  builder.SetMaxSendMessageSize(kMaxCriMessageBytes);
  builder.RegisterCallbackGenericService(&impl_->service);
  impl_->server = builder.BuildAndStart();
  if (!impl_->server)
    throw app::ConfigError(fmt::format("cannot serve CRI on {}", impl_->socket_path));
  KOORD_LOG_INFO("runtime-proxy: serving CRI on {}, forwarding to {} (images: {})",
                 impl_->socket_path, impl_->config.runtime_endpoint,
                 impl_->config.image_endpoint.empty() ? impl_->config.runtime_endpoint
                                                      : impl_->config.image_endpoint);
}

void CriProxyServer::shutdown(std::chrono::milliseconds grace) {
  if (!impl_->server)
    return;
  impl_->server->Shutdown(std::chrono::system_clock::now() + grace);
  impl_->server->Wait();
  impl_->server.reset();
  ::unlink(impl_->socket_path.c_str());
}

const std::string& CriProxyServer::socketPath() const {
  return impl_->socket_path;
}

}  // namespace koord::roles::runtime_proxy
