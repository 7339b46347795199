#include "cri/cri_proxy_server.h"

#include <fmt/format.h>
#include <unistd.h>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/post.hpp>

#include <future>
#include <optional>
#include <thread>

#include "cri/call_interceptor.h"
#include "cri/cri_backend.h"
#include "cri/cri_relay.h"
#include "koord/app/role_app.h"
#include "koord/app/unix_socket.h"
#include "koord/core/log.h"
#include "koord/h2/unix_listen.h"

namespace koord::roles::runtime_proxy {

namespace asio = boost::asio;

namespace {

std::string socketPathOf(const std::string& endpoint, const char* flag) {
  return unixTarget(endpoint, flag).substr(5);  // "unix:" off
}

}  // namespace

// One thread runs the relay: it reads kubelet's and the runtime's sockets and writes the other
// side, so a forwarded call costs two wake-ups of one thread and crosses no other.
struct CriProxyServer::Impl {
  CriProxyConfig config;
  std::string socket_path;
  // Concurrency hint 1: one thread runs it, so asio takes no locks of its own.
  std::unique_ptr<asio::io_context> io = std::make_unique<asio::io_context>(1);
  RelayShared shared;
  std::optional<asio::local::stream_protocol::acceptor> acceptor;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
  std::thread thread;
  bool running = false;

  Impl(CriProxyConfig c, CallInterceptor* interceptor)
      : config(std::move(c)),
        socket_path(socketPathOf(config.listen_endpoint, "koord-runtimeproxy-endpoint")),
        shared(*io, socketPathOf(config.runtime_endpoint, "remote-runtime-service-endpoint"),
               socketPathOf(
                   config.image_endpoint.empty() ? config.runtime_endpoint : config.image_endpoint,
                   "remote-image-service-endpoint"),
               interceptor) {}

  ~Impl() {
    // Connections still owned by pending handlers go with the io_context, before `shared`.
    acceptor.reset();
    io.reset();
  }

  void accept() {
    acceptor->async_accept(
        [this](const boost::system::error_code& ec, asio::local::stream_protocol::socket socket) {
          if (ec == asio::error::operation_aborted || !acceptor->is_open())
            return;
          if (ec) {
            // Out of descriptors, say: the connections already relayed go on.
            KOORD_LOG_ERROR("runtime-proxy: accepting on {}: {}", socket_path, ec.message());
          } else {
            relayKubeletConnection(shared, socket.release());
          }
          accept();
        });
  }

  // Runs `f` on the relay's thread and waits for it.
  template <typename F>
  void onRelayThread(F&& f) {
    std::promise<void> done;
    asio::post(*io, [&] {
      f();
      done.set_value();
    });
    done.get_future().wait();
  }
};

CriProxyServer::CriProxyServer(CriProxyConfig config, CallInterceptor* interceptor)
    : impl_(std::make_unique<Impl>(std::move(config), interceptor)) {}

CriProxyServer::~CriProxyServer() {
  if (impl_->running)
    shutdown(std::chrono::milliseconds(0));
}

void CriProxyServer::start() {
  app::prepareUnixSocketPath(impl_->socket_path);
  // 0660, as containerd's own socket: root, and the root group's tools (crictl), only.
  std::error_code listen_error;
  const int fd = h2::listenUnixSocket(impl_->socket_path, 0660, listen_error);
  if (fd < 0)
    throw app::ConfigError(
        fmt::format("cannot serve CRI on {}: {}", impl_->socket_path, listen_error.message()));
  boost::system::error_code ec;
  impl_->acceptor.emplace(*impl_->io);
  (void)impl_->acceptor->assign(asio::local::stream_protocol(), fd, ec);
  if (ec) {
    ::close(fd);
    impl_->acceptor.reset();
    throw app::ConfigError(
        fmt::format("cannot serve CRI on {}: {}", impl_->socket_path, ec.message()));
  }
  impl_->accept();
  if (impl_->shared.interceptor)
    impl_->shared.interceptor->attach(impl_->io.get());
  impl_->work.emplace(impl_->io->get_executor());
  impl_->thread = std::thread([impl = impl_.get()] { impl->io->run(); });
  impl_->running = true;
  KOORD_LOG_INFO("runtime-proxy: serving CRI on {}, forwarding to {} (images: {})",
                 impl_->socket_path, impl_->shared.runtime_socket, impl_->shared.image_socket);
}

void CriProxyServer::shutdown(std::chrono::milliseconds grace) {
  if (!impl_->running)
    return;
  impl_->running = false;
  impl_->onRelayThread([&] {
    boost::system::error_code ignored;
    (void)impl_->acceptor->close(ignored);
  });
  ::unlink(impl_->socket_path.c_str());
  // Calls in flight get `grace` to end; kubelet's idle connections are simply closed after.
  const auto give_up = std::chrono::steady_clock::now() + grace;
  while (impl_->shared.active_calls.load(std::memory_order_relaxed) > 0 &&
         std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  if (const auto left = impl_->shared.active_calls.load(std::memory_order_relaxed); left > 0)
    KOORD_LOG_WARNING("runtime-proxy: {} call(s) still in flight after {} ms; cut", left,
                      grace.count());
  impl_->onRelayThread([&] {
    closeRelayConnections(impl_->shared);
    if (impl_->shared.interceptor)
      impl_->shared.interceptor->attach(nullptr);
  });
  impl_->work.reset();
  impl_->thread.join();
  impl_->shared.detachWake();
}

const std::string& CriProxyServer::socketPath() const {
  return impl_->socket_path;
}

}  // namespace koord::roles::runtime_proxy
