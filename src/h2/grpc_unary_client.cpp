#include "koord/h2/grpc_unary_client.h"

#include <fmt/format.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <charconv>
#include <unordered_map>

#include "h2/h2_connection.h"

namespace koord::h2 {

namespace asio = boost::asio;

namespace {

// How an HTTP status other than 200 reads as a gRPC status (gRPC's http-grpc-status-mapping).
GrpcCode fromHttpStatus(std::string_view status) {
  if (status == "400")
    return GrpcCode::kInternal;
  if (status == "401")
    return GrpcCode::kUnauthenticated;
  if (status == "403")
    return GrpcCode::kPermissionDenied;
  if (status == "404")
    return GrpcCode::kUnimplemented;
  if (status == "429" || status == "502" || status == "503" || status == "504")
    return GrpcCode::kUnavailable;
  return GrpcCode::kUnknown;
}

}  // namespace

class GrpcUnaryClient::Connection final : public detail::H2Connection {
 public:
  Connection(asio::io_context& io, std::string path)
      : H2Connection(detail::UnixSocket(io), /*client=*/true), path_(std::move(path)) {}

  void connect() {
    socket().async_connect(
        asio::local::stream_protocol::endpoint(path_),
        [self = std::static_pointer_cast<Connection>(shared_from_this())](
            const boost::system::error_code& ec) {
          if (self->closed())
            return;
          if (ec) {
            self->close(fmt::format("connecting to {}: {}", self->path_, ec.message()));
            return;
          }
          self->start();
        });
  }

  /// No new stream may start here: the server is going away, or the ids ran out.
  bool draining() const { return draining_ || closed(); }

  void call(std::string_view method_path, std::string_view request,
            std::chrono::milliseconds timeout, Done done) {
    const std::uint32_t id = next_stream_;
    next_stream_ += 2;
    if (next_stream_ > 0x7fffffffu)
      draining_ = true;
    Stream& s = streams_[id];
    s.done = std::move(done);
    s.timer = std::make_unique<asio::steady_timer>(socket().get_executor(), timeout);
    s.timer->async_wait([weak = std::weak_ptr<H2Connection>(shared_from_this()), id,
                         timeout](const boost::system::error_code& ec) {
      auto self = std::static_pointer_cast<Connection>(weak.lock());
      if (ec || !self || !self->streams_.contains(id))
        return;
      self->sendReset(id, kCancel);
      self->flush();
      self->finish(id, {GrpcCode::kDeadlineExceeded,
                        fmt::format("deadline exceeded after {} ms", timeout.count())});
    });
    sendHeaders(id,
                {{":method", "POST"},
                 {":scheme", "http"},
                 {":path", std::string(method_path)},
                 {":authority", "localhost"},
                 {"content-type", "application/grpc"},
                 {"te", "trailers"},
                 {"grpc-timeout", fmt::format("{}m", std::max<long>(timeout.count(), 1))}},
                /*end_stream=*/false);
    std::string body;
    appendGrpcMessage(body, request);
    sendData(id, std::move(body), /*end_stream=*/true);
    flush();
  }

 private:
  struct Stream {
    Done done;
    std::unique_ptr<asio::steady_timer> timer;
    bool got_headers = false;
    std::string body;
  };

  void onHeaders(std::uint32_t id, HeaderList headers, bool end_stream) override {
    auto it = streams_.find(id);
    if (it == streams_.end())
      return;  // reset by us (deadline) a moment ago
    Stream& s = it->second;
    if (!s.got_headers) {
      s.got_headers = true;
      const auto status = headerValue(headers, ":status");
      if (status != "200") {
        fail(id, {status ? fromHttpStatus(*status) : GrpcCode::kInternal,
                  fmt::format("the server answered HTTP status {}", status.value_or("none"))});
        return;
      }
      if (!end_stream)
        return;
      // Trailers-only: the status came with the headers.
    } else if (!end_stream) {
      fail(id, {GrpcCode::kInternal, "a header block in the middle of a response"});
      return;
    }
    trailers(id, headers);
  }

  void trailers(std::uint32_t id, const HeaderList& headers) {
    const auto code_text = headerValue(headers, "grpc-status");
    int code = -1;
    if (code_text) {
      const auto [end, ec] =
          std::from_chars(code_text->data(), code_text->data() + code_text->size(), code);
      if (ec != std::errc() || end != code_text->data() + code_text->size())
        code = -1;
    }
    if (code < 0) {
      finish(id, {GrpcCode::kInternal, "the response has no valid grpc-status"});
      return;
    }
    if (code != 0) {
      const auto message = headerValue(headers, "grpc-message");
      finish(id, {static_cast<GrpcCode>(code), message ? percentDecode(*message) : std::string()});
      return;
    }
    const auto message = singleGrpcMessage(streams_.at(id).body);
    if (!message) {
      finish(id, {GrpcCode::kInternal, "the response is not one uncompressed gRPC message"});
      return;
    }
    finish(id, {}, std::string(*message));
  }

  void onData(std::uint32_t id, std::string_view data, bool end_stream) override {
    auto it = streams_.find(id);
    if (it == streams_.end())
      return;
    Stream& s = it->second;
    if (!s.got_headers) {
      fail(id, {GrpcCode::kInternal, "DATA before the response headers"});
      return;
    }
    if (s.body.size() + data.size() > kMaxGrpcMessage + 5) {
      fail(id, {GrpcCode::kResourceExhausted,
                fmt::format("the response is over {} bytes", kMaxGrpcMessage)});
      return;
    }
    s.body.append(data);
    if (end_stream)
      finish(id, {GrpcCode::kInternal, "the response ended without trailers"});
  }

  void onReset(std::uint32_t id, std::uint32_t error) override {
    if (!streams_.contains(id))
      return;
    finish(id, {error == kRefusedStream ? GrpcCode::kUnavailable
                : error == kCancel      ? GrpcCode::kCancelled
                                        : GrpcCode::kInternal,
                fmt::format("the server reset the stream (HTTP/2 error {})", error)});
  }

  void onGoaway(std::uint32_t last_stream) override {
    draining_ = true;
    std::vector<std::uint32_t> refused;
    for (const auto& [id, s] : streams_) {
      if (id > last_stream)
        refused.push_back(id);
    }
    for (const std::uint32_t id : refused)
      finish(id, {GrpcCode::kUnavailable, "the server is going away (GOAWAY)"});
    if (streams_.empty())
      close("the server sent GOAWAY");
  }

  void onClosed(const std::string& why) override {
    auto streams = std::move(streams_);
    streams_.clear();
    for (auto& [id, s] : streams) {
      s.timer->cancel();
      s.done({GrpcCode::kUnavailable, why}, {});
    }
  }

  // The stream's answer is wrong in itself: the server learns it is abandoned.
  void fail(std::uint32_t id, GrpcStatus status) {
    sendReset(id, kCancel);
    flush();
    finish(id, std::move(status));
  }

  void finish(std::uint32_t id, GrpcStatus status, std::string response = {}) {
    auto it = streams_.find(id);
    if (it == streams_.end())
      return;
    Stream s = std::move(it->second);
    streams_.erase(it);
    forgetStream(id);
    s.timer->cancel();
    s.done(status, std::move(response));
    if (draining_ && streams_.empty() && !closed())
      close("drained");
  }

  std::string path_;
  std::uint32_t next_stream_ = 1;
  bool draining_ = false;
  std::unordered_map<std::uint32_t, Stream> streams_;
};

GrpcUnaryClient::GrpcUnaryClient(boost::asio::io_context& io, std::string socket_path)
    : io_(io), socket_path_(std::move(socket_path)) {}

GrpcUnaryClient::~GrpcUnaryClient() {
  close();
}

void GrpcUnaryClient::call(std::string_view method_path, std::string_view request,
                           std::chrono::milliseconds timeout, Done done) {
  if (!connection_ || connection_->draining()) {
    connection_ = std::make_shared<Connection>(io_, socket_path_);
    connection_->connect();
  }
  connection_->call(method_path, request, timeout, std::move(done));
}

void GrpcUnaryClient::close() {
  if (connection_)
    connection_->close("the client was closed");
  connection_.reset();
}

}  // namespace koord::h2
