#include "h2/h2_connection.h"

#include <fmt/format.h>

#include <boost/asio/write.hpp>
#include "koord/core/log.h"

#include <sys/socket.h>

#include <algorithm>

namespace koord::h2::detail {

namespace {

constexpr std::int64_t kMaxWindow = 0x7fffffff;

}  // namespace

H2Connection::H2Connection(UnixSocket socket, bool client)
    : socket_(std::move(socket)),
      client_(client),
      preface_left_(client ? 0 : kClientPreface.size()) {}

H2Connection::~H2Connection() = default;

void H2Connection::start() {
  if (closed_)
    return;
  std::string hello;
  if (client_) {
    hello.append(kClientPreface);
    appendSettings(hello, {{kEnablePush, 0},
                           {kInitialWindowSize, kLocalWindow},
                           {kMaxHeaderListSizeSetting, kMaxHeaderListSize}});
  } else {
    appendSettings(hello, {{kMaxConcurrentStreamsSetting, kMaxConcurrentStreams},
                           {kInitialWindowSize, kLocalWindow},
                           {kMaxHeaderListSizeSetting, kMaxHeaderListSize}});
  }
  appendWindowUpdate(hello, 0, kLocalWindow - kDefaultWindow);
  pending_.insert(0, hello);
  started_ = true;
  read();
  flush();
}

void H2Connection::close(const std::string& why, std::uint32_t error) {
  if (closed_)
    return;
  closed_ = true;
  boost::system::error_code ignored;
  // A connection error of the peer's (a broken or abusive peer): logged here, once.
  if (error != kNoError)
    KOORD_LOG_WARNING("grpc {}: closing a connection: {} (GOAWAY {:#x})",
                      client_ ? "client" : "server", why, error);
  if (started_ && error != kNoError && writing_.empty()) {
    // Best effort, without waiting: the peer learns why before the socket goes. Not while a
    // write is under way, whose frame it could cut in half.
    std::string goaway;
    appendGoaway(goaway, last_peer_stream_, error);
    (void)socket_.non_blocking(true, ignored);
    (void)::send(socket_.native_handle(), goaway.data(), goaway.size(), MSG_NOSIGNAL);
  }
  (void)socket_.close(ignored);
  outgoing_.clear();
  onClosed(why);
}

void H2Connection::read() {
  socket_.async_read_some(asio::buffer(chunk_),
                          [self = shared_from_this()](const boost::system::error_code& ec,
                                                      std::size_t n) { self->onRead(ec, n); });
}

void H2Connection::onRead(const boost::system::error_code& ec, std::size_t n) {
  if (closed_)
    return;
  if (ec) {
    close(ec == asio::error::eof ? std::string("the peer closed the connection")
                                 : fmt::format("reading: {}", ec.message()));
    return;
  }
  in_.append(chunk_.data(), n);
  in_read_ = true;
  const bool open = processFrames();
  in_read_ = false;
  if (!open)
    return;
  flush();
  read();
}

bool H2Connection::processFrames() {
  std::size_t at = 0;
  if (preface_left_ > 0) {
    const std::size_t have = std::min(preface_left_, in_.size());
    const std::size_t from = kClientPreface.size() - preface_left_;
    if (std::string_view(in_).substr(0, have) != kClientPreface.substr(from, have)) {
      close("the peer did not open with the HTTP/2 client preface", kProtocolError);
      return false;
    }
    preface_left_ -= have;
    at = have;
  }
  while (in_.size() - at >= kFrameHeaderSize) {
    const FrameHeader h = parseFrameHeader(in_.data() + at);
    if (h.length > kDefaultMaxFrameSize) {
      close(fmt::format("a frame of {} bytes (the limit is {})", h.length, kDefaultMaxFrameSize),
            kFrameSizeError);
      return false;
    }
    if (in_.size() - at - kFrameHeaderSize < h.length)
      break;
    const std::string_view payload(in_.data() + at + kFrameHeaderSize, h.length);
    at += kFrameHeaderSize + h.length;
    if (!processFrame(h, payload) || closed_ || !withinLimits())
      return false;
  }
  in_.erase(0, at);
  return true;
}

bool H2Connection::processFrame(const FrameHeader& h, std::string_view payload) {
  auto fail = [&](std::string why, std::uint32_t error = kProtocolError) {
    close(std::move(why), error);
    return false;
  };
  if (header_stream_ != 0 && (h.type != kContinuation || h.stream != header_stream_))
    return fail("a header block was interrupted by another frame");
  switch (h.type) {
    case kData: {
      if (h.stream == 0)
        return fail("DATA on stream 0");
      receive_window_ -= h.length;
      if (receive_window_ < 0)
        return fail("the peer sent more than its window", kFlowControlError);
      if (receive_window_ <= kLocalWindow / 2) {
        appendWindowUpdate(pending_, 0, static_cast<std::uint32_t>(kLocalWindow - receive_window_));
        receive_window_ = kLocalWindow;
      }
      const auto data = framePayload(h, payload);
      if (!data)
        return fail("a DATA frame's padding is longer than the frame");
      onData(h.stream, *data, h.flags & kEndStream);
      return true;
    }
    case kHeaders: {
      if (h.stream == 0)
        return fail("HEADERS on stream 0");
      const auto block = framePayload(h, payload);
      if (!block)
        return fail("a HEADERS frame's padding is longer than the frame");
      if (block->size() > kMaxHeaderListSize)
        return fail("a header block past the header list limit", kEnhanceYourCalm);
      header_block_.assign(*block);
      header_stream_ = h.stream;
      header_end_stream_ = h.flags & kEndStream;
      if (h.flags & kEndHeaders)
        return headerBlockDone(h.stream, header_end_stream_);
      return true;
    }
    case kContinuation:
      if (header_stream_ == 0)
        return fail("CONTINUATION without HEADERS");
      // Checked before the fragment is kept: a peer that never ends a block holds one limit.
      if (header_block_.size() + payload.size() > kMaxHeaderListSize)
        return fail(
            fmt::format("CONTINUATION frames past {} bytes of header block", kMaxHeaderListSize),
            kEnhanceYourCalm);
      header_block_.append(payload);
      if (h.flags & kEndHeaders)
        return headerBlockDone(h.stream, header_end_stream_);
      return true;
    case kRstStream:
      if (h.stream == 0 || payload.size() != 4)
        return fail("a malformed RST_STREAM");
      forgetStream(h.stream);
      onReset(h.stream, readUint32(payload.data()));
      return true;
    case kSettings:
      if (h.stream != 0)
        return fail("SETTINGS on a stream");
      if (h.flags & kAck)
        return payload.empty() || fail("a SETTINGS ACK with a payload", kFrameSizeError);
      if (payload.size() % 6 != 0)
        return fail("a SETTINGS frame of a length not a multiple of 6", kFrameSizeError);
      if (!applySettings(payload))
        return false;
      appendFrameHeader(pending_, 0, kSettings, kAck, 0);
      ++queued_control_;
      return true;
    case kPushPromise:
      return fail("PUSH_PROMISE (push is off)");
    case kPing:
      if (h.stream != 0 || payload.size() != 8)
        return fail("a malformed PING", kFrameSizeError);
      if (!(h.flags & kAck)) {
        appendFrameHeader(pending_, 8, kPing, kAck, 0);
        pending_.append(payload);
        ++queued_control_;
      }
      return true;
    case kGoaway:
      if (h.stream != 0 || payload.size() < 8)
        return fail("a malformed GOAWAY");
      onGoaway(readUint32(payload.data()) & 0x7fffffffu);
      return true;
    case kWindowUpdate:
      return windowUpdate(h, payload);
    default:
      return true;  // PRIORITY and unknown types carry nothing for us
  }
}

bool H2Connection::headerBlockDone(std::uint32_t stream, bool end_stream) {
  header_stream_ = 0;
  HeaderList headers;
  std::string error;
  if (!decoder_.decode(header_block_, headers, error)) {
    close("a header block does not decode: " + error,
          decoder_.overLimit() ? kEnhanceYourCalm : kCompressionError);
    return false;
  }
  header_block_.clear();
  onHeaders(stream, std::move(headers), end_stream);
  return true;
}

bool H2Connection::applySettings(std::string_view payload) {
  bool ok = true;
  forEachSetting(payload, [&](std::uint16_t id, std::uint32_t value) {
    if (!ok)
      return;
    if (id == kInitialWindowSize) {
      if (value > kMaxWindow) {
        close("SETTINGS_INITIAL_WINDOW_SIZE above 2^31-1", kFlowControlError);
        ok = false;
        return;
      }
      // RFC 9113 6.9.2: the change applies to every open stream's window.
      const std::int64_t delta = std::int64_t{value} - peer_initial_window_;
      peer_initial_window_ = value;
      for (auto& [stream, window] : stream_windows_)
        window += delta;
    } else if (id == kMaxFrameSizeSetting &&
               (value < kDefaultMaxFrameSize || value > kMaxFrameSize)) {
      close("SETTINGS_MAX_FRAME_SIZE out of range", kProtocolError);
      ok = false;
    }
    // Our frames are never over 16 KiB and our header blocks never index: the others do not
    // change what we send.
  });
  if (ok)
    pushData();
  return ok;
}

bool H2Connection::windowUpdate(const FrameHeader& h, std::string_view payload) {
  if (payload.size() != 4) {
    close("a malformed WINDOW_UPDATE", kFrameSizeError);
    return false;
  }
  const std::int64_t increment = readUint32(payload.data()) & 0x7fffffffu;
  if (increment == 0) {
    close("a WINDOW_UPDATE of 0");
    return false;
  }
  std::int64_t* window = &send_window_;
  if (h.stream != 0) {
    auto it = stream_windows_.find(h.stream);
    if (it == stream_windows_.end())
      return true;  // a stream that is over for us
    window = &it->second;
  }
  *window += increment;
  if (*window > kMaxWindow) {
    close("a window above 2^31-1", kFlowControlError);
    return false;
  }
  pushData();
  return true;
}

void H2Connection::sendHeaders(std::uint32_t stream, const HeaderList& headers, bool end_stream) {
  stream_windows_.try_emplace(stream, peer_initial_window_);
  std::string block;
  hpackEncode(headers, block);
  appendHeaderBlock(pending_, stream, block, end_stream);
}

void H2Connection::sendData(std::uint32_t stream, std::string data, bool end_stream,
                            std::optional<HeaderList> trailers) {
  stream_windows_.try_emplace(stream, peer_initial_window_);
  outgoing_.emplace_back(stream, Outgoing{std::move(data), 0, end_stream, std::move(trailers)});
  pushData();
}

void H2Connection::sendReset(std::uint32_t stream, std::uint32_t error) {
  forgetStream(stream);
  appendRstStream(pending_, stream, error);
  ++queued_control_;
}

void H2Connection::refuseStream(std::uint32_t stream) {
  if (!refused_logged_) {
    refused_logged_ = true;
    KOORD_LOG_WARNING(
        "grpc {}: the peer opened more than {} streams at once; refusing the excess "
        "(REFUSED_STREAM, logged once per connection)",
        client_ ? "client" : "server", kMaxConcurrentStreams);
  }
  sendReset(stream, kRefusedStream);
}

// A peer that keeps sending while it does not read would otherwise have us queue without end:
// acknowledgements and resets it causes, and answers it does not take.
bool H2Connection::withinLimits() {
  if (queued_control_ > kMaxQueuedControlFrames) {
    close(fmt::format("the peer does not read while it makes us queue over {} acknowledgements "
                      "and resets",
                      kMaxQueuedControlFrames),
          kEnhanceYourCalm);
    return false;
  }
  if (!writing_.empty() && pending_.size() > kMaxUnwrittenBytes) {
    close(fmt::format("the peer does not read while over {} bytes wait for it", kMaxUnwrittenBytes),
          kEnhanceYourCalm);
    return false;
  }
  return true;
}

void H2Connection::forgetStream(std::uint32_t stream) {
  stream_windows_.erase(stream);
  std::erase_if(outgoing_, [&](const auto& o) { return o.first == stream; });
}

// Frames as much of each stream's data as both windows allow, in the order it was given.
void H2Connection::pushData() {
  for (auto it = outgoing_.begin(); it != outgoing_.end();) {
    auto& [stream, out] = *it;
    auto window = stream_windows_.find(stream);
    if (window == stream_windows_.end()) {
      it = outgoing_.erase(it);
      continue;
    }
    while (out.offset < out.data.size()) {
      const std::int64_t allowed =
          std::min({send_window_, window->second, std::int64_t{kDefaultMaxFrameSize}});
      if (allowed <= 0)
        break;
      const auto n = static_cast<std::uint32_t>(
          std::min<std::int64_t>(allowed, static_cast<std::int64_t>(out.data.size() - out.offset)));
      const bool last = out.offset + n == out.data.size();
      appendFrameHeader(pending_, n, kData,
                        last && out.end_stream && !out.trailers ? kEndStream : 0, stream);
      pending_.append(out.data, out.offset, n);
      out.offset += n;
      send_window_ -= n;
      window->second -= n;
    }
    if (out.offset < out.data.size()) {
      ++it;
      continue;
    }
    if (out.data.empty() && out.end_stream && !out.trailers)
      appendFrameHeader(pending_, 0, kData, kEndStream, stream);
    if (out.trailers) {
      std::string block;
      hpackEncode(*out.trailers, block);
      appendHeaderBlock(pending_, stream, block, /*end_stream=*/true);
    }
    // This end sends nothing more on the stream: its window would otherwise stay for the
    // connection's life, one entry per call.
    if (out.end_stream || out.trailers)
      stream_windows_.erase(window);
    it = outgoing_.erase(it);
  }
}

void H2Connection::flush() {
  // Frames made while reading go out together once the whole read is handled: one write.
  if (!started_ || closed_ || in_read_ || !writing_.empty() || pending_.empty())
    return;
  writing_.swap(pending_);
  queued_control_ = 0;
  asio::async_write(socket_, asio::buffer(writing_),
                    [self = shared_from_this()](const boost::system::error_code& ec, std::size_t) {
                      self->onWritten(ec);
                    });
}

void H2Connection::onWritten(const boost::system::error_code& ec) {
  writing_.clear();
  if (closed_)
    return;
  if (ec) {
    close(fmt::format("writing: {}", ec.message()));
    return;
  }
  flush();
}

}  // namespace koord::h2::detail
