#include "cri/cri_proxy_server.h"

#include <fmt/format.h>
#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>
#include <unistd.h>

#include <thread>

#include "cri/cri_backend.h"
#include "cri/cri_method.h"
#include "cri/forwarded_call.h"
#include "koord/app/role_app.h"
#include "koord/app/unix_socket.h"
#include "koord/core/log.h"

namespace koord::roles::runtime_proxy {

struct CriProxyServer::Impl {
  CriProxyConfig config;
  std::string socket_path;
  CriBackend backend;
  CallInterceptor* interceptor;
  grpc::AsyncGenericService service;
  std::unique_ptr<grpc::ServerCompletionQueue> queue;
  std::unique_ptr<ForwardingContext> forwarding;
  std::unique_ptr<grpc::Server> server;
  std::thread poller;

  Impl(CriProxyConfig c, CallInterceptor* i)
      : config(std::move(c)),
        socket_path(unixTarget(config.listen_endpoint, "koord-runtimeproxy-endpoint").substr(5)),
        backend(unixTarget(config.runtime_endpoint, "remote-runtime-service-endpoint"),
                unixTarget(
                    config.image_endpoint.empty() ? config.runtime_endpoint : config.image_endpoint,
                    "remote-image-service-endpoint")),
        interceptor(i) {}

  // One thread drains the queue, and in doing so polls both kubelet's connection and the
  // runtime's: a forwarded call wakes it twice (kubelet's request, the runtime's answer) and
  // crosses no other thread, which is what keeps the added latency low on a small node.
  void drain() {
    void* tag = nullptr;
    bool ok = false;
    while (queue->Next(&tag, &ok))
      static_cast<CompletionTag*>(tag)->complete(ok);
  }
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
  builder.RegisterAsyncGenericService(&impl_->service);
  impl_->queue = builder.AddCompletionQueue();
  impl_->server = builder.BuildAndStart();
  if (!impl_->server) {
    impl_->queue->Shutdown();
    impl_->drain();
    impl_->queue.reset();
    throw app::ConfigError(fmt::format("cannot serve CRI on {}", impl_->socket_path));
  }
  impl_->forwarding = std::make_unique<ForwardingContext>(impl_->service, *impl_->queue,
                                                          impl_->backend, impl_->interceptor);
  acceptNextCall(*impl_->forwarding);
  impl_->poller = std::thread([impl = impl_.get()] { impl->drain(); });
  KOORD_LOG_INFO("runtime-proxy: serving CRI on {}, forwarding to {} (images: {})",
                 impl_->socket_path, impl_->config.runtime_endpoint,
                 impl_->config.image_endpoint.empty() ? impl_->config.runtime_endpoint
                                                      : impl_->config.image_endpoint);
}

void CriProxyServer::shutdown(std::chrono::milliseconds grace) {
  if (!impl_->server)
    return;
  // The queue keeps being drained while the server stops, so that the calls in flight (and
  // the one waiting to be accepted) reach their end; it is closed only once none is left, since
  // a call's next operation on a closed queue would abort the process.
  impl_->server->Shutdown(std::chrono::system_clock::now() + grace);
  impl_->server->Wait();
  const auto give_up = std::chrono::steady_clock::now() + grace + std::chrono::seconds(5);
  while (impl_->forwarding->live.load() > 0 && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  if (impl_->forwarding->live.load() > 0) {
    // A call that will not end (a hook that never answers despite its deadline): leave the
    // queue open and its thread running rather than abort; the process is about to exit.
    KOORD_LOG_ERROR("runtime-proxy: {} call(s) still in flight after shutdown; not waiting",
                    impl_->forwarding->live.load());
    impl_->poller.detach();
    (void)impl_->queue.release();
    (void)impl_->forwarding.release();
    (void)impl_->server.release();
  } else {
    impl_->queue->Shutdown();
    impl_->poller.join();
    impl_->server.reset();
    impl_->queue.reset();
    impl_->forwarding.reset();
  }
  ::unlink(impl_->socket_path.c_str());
}

const std::string& CriProxyServer::socketPath() const {
  return impl_->socket_path;
}

}  // namespace koord::roles::runtime_proxy
