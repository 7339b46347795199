#include "koord/h2/grpc_unary_server.h"

#include <fmt/format.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/post.hpp>

#include <unistd.h>

#include <future>
#include <optional>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "h2/h2_connection.h"
#include "koord/core/log.h"
#include "koord/h2/unix_listen.h"

namespace koord::h2 {

namespace asio = boost::asio;

namespace {

using Methods = std::map<std::string, GrpcUnaryServer::Handler, std::less<>>;

class ServerConnection final : public detail::H2Connection {
 public:
  ServerConnection(detail::UnixSocket socket, const Methods& methods,
                   std::unordered_set<ServerConnection*>& live)
      : H2Connection(std::move(socket), /*client=*/false), methods_(methods), live_(live) {
    live_.insert(this);
  }
  ~ServerConnection() override { live_.erase(this); }

 private:
  struct Call {
    const GrpcUnaryServer::Handler* handler = nullptr;
    std::string body;
  };

  void onHeaders(std::uint32_t id, HeaderList headers, bool end_stream) override {
    if (calls_.contains(id)) {
      // Trailers from the client end the request (gRPC clients send none; accept them).
      if (end_stream)
        dispatch(id);
      return;
    }
    if (id % 2 == 0) {
      close(fmt::format("the client opened stream {}, an even id", id), kProtocolError);
      return;
    }
    if (id <= last_stream_)
      return;  // trailers of a call already answered (refused early): nothing to do

    last_stream_ = id;
    setLastPeerStream(id);
    if (calls_.size() >= kMaxConcurrentStreams) {
      refuseStream(id);
      return;
    }
    const auto method = headerValue(headers, ":method");
    const auto path = headerValue(headers, ":path");
    const auto type = headerValue(headers, "content-type");
    if (method != "POST" || !path) {
      refuse(id, {GrpcCode::kInternal, "not a gRPC request (POST with a :path)"});
    } else if (!type || !type->starts_with("application/grpc")) {
      refuse(id, {GrpcCode::kInternal,
                  fmt::format("content-type \"{}\" is not gRPC", type.value_or(""))});
    } else if (auto m = methods_.find(*path); m == methods_.end()) {
      refuse(id, {GrpcCode::kUnimplemented, fmt::format("unknown method {}", *path)});
    } else {
      calls_[id].handler = &m->second;
    }
    if (end_stream)
      dispatch(id);
  }

  void onData(std::uint32_t id, std::string_view data, bool end_stream) override {
    auto it = calls_.find(id);
    if (it == calls_.end())
      return;  // a stream already answered and forgotten
    Call& call = it->second;
    if (call.body.size() + data.size() > kMaxGrpcMessage + 5) {
      refuse(id, {GrpcCode::kResourceExhausted,
                  fmt::format("the request is over {} bytes", kMaxGrpcMessage)});
      return;
    }
    call.body.append(data);
    if (end_stream)
      dispatch(id);
  }

  void onReset(std::uint32_t id, std::uint32_t) override { calls_.erase(id); }

  void onGoaway(std::uint32_t) override {
    going_away_ = true;
    if (calls_.empty())
      close("the client sent GOAWAY");
  }

  void onClosed(const std::string& why) override {
    if (!calls_.empty())
      KOORD_LOG_WARNING("grpc server: a connection closed with {} call(s) unanswered: {}",
                        calls_.size(), why);
    calls_.clear();
  }

  // Answers at once with an error (trailers only), then asks the client to stop sending
  // (RST_STREAM NO_ERROR, RFC 9113 8.1): what still comes for the stream is dropped.
  void refuse(std::uint32_t id, const GrpcStatus& status) {
    calls_.erase(id);
    sendHeaders(id, trailersOnly(status.code, status.message), /*end_stream=*/true);
    sendReset(id, kNoError);
  }

  void dispatch(std::uint32_t id) {
    auto node = calls_.extract(id);
    if (node.empty())
      return finishCall();  // refused already
    Call& call = node.mapped();
    GrpcStatus status;
    std::string response;
    if (!call.body.empty() && call.body[0] != 0)
      status = {GrpcCode::kUnimplemented, "compressed requests are not accepted"};
    else if (const auto message = singleGrpcMessage(call.body))
      status = (*call.handler)(*message, response);
    else
      status = {GrpcCode::kInternal, "the request is not one gRPC message"};
    if (!status.ok()) {
      sendHeaders(id, trailersOnly(status.code, status.message), /*end_stream=*/true);
      forgetStream(id);
    } else {
      sendHeaders(id, {{":status", "200"}, {"content-type", "application/grpc"}},
                  /*end_stream=*/false);
      std::string body;
      appendGrpcMessage(body, response);
      sendData(id, std::move(body), /*end_stream=*/true, HeaderList{{"grpc-status", "0"}});
    }
    finishCall();
  }

  void finishCall() {
    if (going_away_ && calls_.empty())
      close("the client sent GOAWAY");
  }

  const Methods& methods_;
  std::unordered_set<ServerConnection*>& live_;
  std::unordered_map<std::uint32_t, Call> calls_;
  std::uint32_t last_stream_ = 0;
  bool going_away_ = false;
};

}  // namespace

struct GrpcUnaryServer::Impl {
  Methods methods;
  std::optional<asio::io_context> io;
  std::optional<asio::local::stream_protocol::acceptor> acceptor;
  std::unordered_set<ServerConnection*> live;
  std::thread thread;

  void accept() {
    acceptor->async_accept(
        [this](const boost::system::error_code& ec, asio::local::stream_protocol::socket socket) {
          if (ec == asio::error::operation_aborted || !acceptor->is_open())
            return;
          if (ec)
            KOORD_LOG_ERROR("grpc server: accepting: {}", ec.message());
          else
            std::make_shared<ServerConnection>(std::move(socket), methods, live)->start();
          accept();
        });
  }
};

GrpcUnaryServer::GrpcUnaryServer() : impl_(std::make_unique<Impl>()) {}

GrpcUnaryServer::~GrpcUnaryServer() {
  stop();
}

void GrpcUnaryServer::addMethod(std::string path, Handler handler) {
  impl_->methods[std::move(path)] = std::move(handler);
}

void GrpcUnaryServer::start(const std::string& socket_path, unsigned mode) {
  std::error_code listen_error;
  const int fd = listenUnixSocket(socket_path, mode, listen_error);
  if (fd < 0)
    throw std::system_error(listen_error, fmt::format("listening on {}", socket_path));
  impl_->io.emplace(1);
  impl_->acceptor.emplace(*impl_->io);
  boost::system::error_code ec;
  (void)impl_->acceptor->assign(asio::local::stream_protocol(), fd, ec);
  if (ec) {
    ::close(fd);
    impl_->acceptor.reset();
    impl_->io.reset();
    throw std::system_error(ec, fmt::format("listening on {}", socket_path));
  }
  impl_->accept();
  impl_->thread = std::thread([impl = impl_.get()] { impl->io->run(); });
}

void GrpcUnaryServer::stop() {
  if (!impl_->thread.joinable())
    return;
  asio::post(*impl_->io, [impl = impl_.get()] {
    boost::system::error_code ignored;
    (void)impl->acceptor->close(ignored);
    // close() may drop the last reference to a connection, which then leaves `live`.
    std::vector<std::shared_ptr<detail::H2Connection>> open;
    for (ServerConnection* c : impl->live)
      open.push_back(c->shared_from_this());
    for (auto& c : open)
      c->close("the server is stopping");
  });
  impl_->thread.join();
  impl_->acceptor.reset();
  impl_->io.reset();
}

}  // namespace koord::h2
