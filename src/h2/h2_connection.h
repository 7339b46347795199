// One HTTP/2 connection over a unix socket, either end, for the gRPC unary client and server:
// framing, SETTINGS/PING/WINDOW_UPDATE, flow control both ways; streams are the subclass's.
#pragma once

#include <boost/asio/local/stream_protocol.hpp>

#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "koord/h2/frame.h"
#include "koord/h2/hpack.h"
#include "koord/h2/limits.h"

namespace koord::h2::detail {

namespace asio = boost::asio;
using UnixSocket = asio::local::stream_protocol::socket;

/// The window this end gives the peer, per stream and for the connection: far above any message
/// either side accepts (4 MiB), so a stream never waits for a WINDOW_UPDATE from us.
inline constexpr std::uint32_t kLocalWindow = 16u << 20;

/// Everything runs on the socket's io_context thread; `shared_from_this` keeps a connection alive
/// while a read or write is pending.
class H2Connection : public std::enable_shared_from_this<H2Connection> {
 public:
  H2Connection(UnixSocket socket, bool client);
  virtual ~H2Connection();
  H2Connection(const H2Connection&) = delete;
  H2Connection& operator=(const H2Connection&) = delete;

  /// The socket is connected: the client writes its preface, both sides their SETTINGS and the
  /// connection window, and reading begins. What was sent before goes out after them.
  void start();
  /// Ends the connection (GOAWAY with `error` when it is a protocol error of the peer's), closes
  /// the socket and calls onClosed once. Safe to call again.
  void close(const std::string& why, std::uint32_t error = kNoError);
  bool closed() const { return closed_; }

 protected:
  UnixSocket& socket() { return socket_; }

  virtual void onHeaders(std::uint32_t stream, HeaderList headers, bool end_stream) = 0;
  virtual void onData(std::uint32_t stream, std::string_view data, bool end_stream) = 0;
  virtual void onReset(std::uint32_t stream, std::uint32_t error) = 0;
  virtual void onGoaway(std::uint32_t last_stream) = 0;
  virtual void onClosed(const std::string& why) = 0;

  // The send* calls only frame: flush() hands what they made to the socket in one write (done
  // by itself after each read, for what the handlers of that read sent).
  void sendHeaders(std::uint32_t stream, const HeaderList& headers, bool end_stream);
  /// `data` as DATA frames as the peer's windows allow, then `trailers` (ending the stream) if
  /// any, else END_STREAM on the last DATA frame when `end_stream`.
  void sendData(std::uint32_t stream, std::string data, bool end_stream,
                std::optional<HeaderList> trailers = std::nullopt);
  /// RST_STREAM, and whatever of the stream's data had not gone out is dropped.
  void sendReset(std::uint32_t stream, std::uint32_t error);
  /// The stream is over for this end: data still waiting for window is dropped.
  void forgetStream(std::uint32_t stream);
  void flush();
  /// The highest stream id the peer opened (for GOAWAY).
  void setLastPeerStream(std::uint32_t id) { last_peer_stream_ = id; }
  /// A stream the peer opened beyond kMaxConcurrentStreams (which the server advertises):
  /// RST_STREAM REFUSED_STREAM, logged once per connection.
  void refuseStream(std::uint32_t stream);

 private:
  struct Outgoing {
    std::string data;
    std::size_t offset = 0;
    bool end_stream = false;
    std::optional<HeaderList> trailers;
  };

  void read();
  void onRead(const boost::system::error_code& ec, std::size_t n);
  /// Handles every whole frame in the buffer; false once the connection is closed.
  bool processFrames();
  bool processFrame(const FrameHeader& h, std::string_view payload);
  bool headerBlockDone(std::uint32_t stream, bool end_stream);
  bool applySettings(std::string_view payload);
  bool windowUpdate(const FrameHeader& h, std::string_view payload);
  /// false (and the connection closed) once the peer made us queue more than the limits allow.
  bool withinLimits();
  void pushData();
  void onWritten(const boost::system::error_code& ec);

  UnixSocket socket_;
  const bool client_;
  bool started_ = false;
  bool closed_ = false;
  bool in_read_ = false;

  std::array<char, 32 * 1024> chunk_;
  std::string in_;
  std::size_t preface_left_;
  HpackDecoder decoder_;
  // A header block waiting for its CONTINUATION frames.
  std::uint32_t header_stream_ = 0;
  bool header_end_stream_ = false;
  std::string header_block_;

  std::string pending_;  // frames not yet handed to the socket
  std::string writing_;  // frames the socket is writing
  // Acknowledgements and resets in `pending_` (limits.h: kMaxQueuedControlFrames).
  std::size_t queued_control_ = 0;
  bool refused_logged_ = false;

  std::int64_t send_window_ = kDefaultWindow;
  std::int64_t peer_initial_window_ = kDefaultWindow;
  std::unordered_map<std::uint32_t, std::int64_t> stream_windows_;
  std::deque<std::pair<std::uint32_t, Outgoing>> outgoing_;
  std::int64_t receive_window_ = kLocalWindow;
  std::uint32_t last_peer_stream_ = 0;
};

}  // namespace koord::h2::detail
