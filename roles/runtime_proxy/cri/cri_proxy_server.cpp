#include "cri/cri_proxy_server.h"

#include <fmt/format.h>
#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>
#include <unistd.h>

#include "cri/cri_backend.h"
#include "cri/cri_method.h"
#include "cri/forward_reactor.h"
#include "koord/app/role_app.h"
#include "koord/app/unix_socket.h"
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
  app::prepareUnixSocketPath(impl_->socket_path);
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
