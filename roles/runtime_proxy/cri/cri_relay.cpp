#include "cri/cri_relay.h"

#include <fmt/format.h>
#include <grpcpp/support/status.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>

#include <sys/socket.h>

#include <algorithm>
#include <any>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <deque>
#include <mutex>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "cri/call_interceptor.h"
#include "cri/cri_backend.h"
#include "cri/cri_method.h"
#include "koord/core/log.h"
#include "koord/core/metrics.h"
#include "koord/h2/frame.h"
#include "koord/h2/grpc_wire.h"
#include "koord/h2/hpack.h"
#include "koord/h2/limits.h"

namespace koord::roles::runtime_proxy {

namespace asio = boost::asio;
using Socket = asio::local::stream_protocol::socket;

struct HookWake {
  std::mutex mu;
  asio::io_context* io = nullptr;

  template <typename F>
  void post(F&& f) {
    std::lock_guard lock(mu);
    if (io != nullptr)
      asio::post(*io, std::forward<F>(f));
  }
};

RelayShared::RelayShared(asio::io_context& i, std::string runtime, std::string image,
                         CallInterceptor* hooks)
    : io(i),
      runtime_socket(std::move(runtime)),
      image_socket(std::move(image)),
      interceptor(hooks),
      wake(std::make_shared<HookWake>()) {
  wake->io = &io;
}

RelayShared::~RelayShared() {
  detachWake();
}

void RelayShared::detachWake() {
  std::lock_guard lock(wake->mu);
  wake->io = nullptr;
}

namespace {

constexpr std::size_t kReadChunk = 64 * 1024;
// Calls in flight over all of kubelet's connections (each also bounded by
// h2::kMaxConcurrentStreams): beyond it a new call is refused (REFUSED_STREAM, which kubelet's
// gRPC retries) rather than the proxy holding an unbounded number of requests.
constexpr std::size_t kMaxRelayCalls = 4 * h2::kMaxConcurrentStreams;
// kubelet's (and containerd's) limit on a CRI message, with its 5-byte prefix.
constexpr std::size_t kMaxHookedBody = kMaxCriMessageBytes + 5;
// A hooked call's answer is held until its trailers so that the bookkeeping runs before
// kubelet has it; CRI answers to hooked calls are ids, so this is never reached in practice.
constexpr std::size_t kMaxHeldAnswer = 1024 * 1024;
// Streams the proxy answered itself, remembered so that late frames for them are dropped.
constexpr std::size_t kAnsweredMemory = 4096;

// What the pre hooks add to a hooked call: from kubelet's whole request to the hook servers'
// answer. Fine buckets below 2 ms, where a local hook server's round trip falls (the target is
// under 1 ms, which latency benches on a noisy VM cannot see beside runc's own spread), coarse
// ones up to the hook deadline's range.
metrics::HistogramFamily& hookSeconds() {
  static auto& family = metrics::Registry::global().histogram(
      "koord_runtime_proxy_hook_duration_seconds",
      "Time a hooked CRI call is held for its pre hooks, by call and result (ok, failed).",
      {"call", "result"},
      {50e-6, 100e-6, 150e-6, 200e-6, 300e-6, 400e-6, 500e-6, 600e-6, 800e-6, 1e-3, 1.5e-3,
       2e-3,  3e-3,   5e-3,   10e-3,  20e-3,  50e-3,  100e-3, 200e-3, 400e-3, 1.0,  2.0});
  return family;
}

// Bytes read from one socket and not yet made into frames.
class ReadBuffer {
 public:
  // Room for at least `min_free` more bytes.
  asio::mutable_buffer prepare(std::size_t min_free) {
    if (cap_ - end_ < min_free && begin_ > 0) {
      std::memmove(data_.get(), data_.get() + begin_, end_ - begin_);
      end_ -= begin_;
      begin_ = 0;
    }
    if (cap_ - end_ < min_free) {
      const std::size_t cap = std::max(cap_ * 2, end_ + min_free);
      auto bigger = std::make_unique<char[]>(cap);
      if (end_ > begin_)
        std::memcpy(bigger.get(), data_.get() + begin_, end_ - begin_);
      end_ -= begin_;
      begin_ = 0;
      data_ = std::move(bigger);
      cap_ = cap;
    }
    return asio::buffer(data_.get() + end_, cap_ - end_);
  }
  void commit(std::size_t n) { end_ += n; }
  std::string_view view() const { return {data_.get() + begin_, end_ - begin_}; }
  void consume(std::size_t n) {
    begin_ += n;
    if (begin_ == end_)
      begin_ = end_ = 0;
  }

 private:
  std::unique_ptr<char[]> data_;
  std::size_t cap_ = 0;
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
};

struct Side {
  explicit Side(Socket s) : socket(std::move(s)) {}
  Socket socket;
  ReadBuffer in;
  // Frames for this side not yet written, and those being written.
  std::string out;
  std::string writing;
  bool write_busy = false;
  // What a frame still being read needs in all, so that the next read makes room for it.
  std::size_t need = 0;
  // Frames in `out` the relay made itself because of what the peer sent (acknowledgements,
  // resets), counted against h2::kMaxQueuedControlFrames.
  std::size_t owed_control = 0;
};

// A header block being read: HEADERS, then CONTINUATION frames until END_HEADERS.
struct PendingHeaders {
  bool active = false;
  std::uint32_t stream = 0;
  bool end_stream = false;
  std::string block;
};

// A hooked unary call: kubelet's request is held until the pre hooks answered, and the
// runtime's answer until its trailers, so that the post bookkeeping runs before kubelet has it.
// The proxy takes kubelet's request as a receiver would (kubelet gets its window back at once:
// a request longer than a stream's window could not arrive otherwise) and sends the runtime a
// body of its own. Shared with the hook's callback, which may outlive the connection.
struct HeldCall {
  enum class Phase { kReadingRequest, kInHooks, kForwarded };
  CriMethod method;
  std::uint32_t stream = 0;
  Phase phase = Phase::kReadingRequest;
  bool cancelled = false;
  // kubelet's body: the gRPC-framed message.
  std::string body;
  // The message the hooks were given and may have replaced; what was forwarded.
  std::string request;
  bool hooks_ran = false;
  std::chrono::steady_clock::time_point hooks_started;
  std::any state;
  // The runtime's stream window for this stream, and the body being sent.
  std::int64_t window = 0;
  std::string pending;
  std::size_t pending_sent = 0;
  bool end_sent = false;
  // The runtime's frames for kubelet, held until the call's trailers.
  bool holding_answer = true;
  std::string answer_frames;
  std::uint64_t answer_data = 0;
  std::string answer_body;
};

struct StreamState {
  bool kubelet_done = false;
  bool runtime_done = false;
  std::shared_ptr<HeldCall> hooked;
};

}  // namespace

// One kubelet connection and the runtime connection it is relayed to. Everything runs on the
// relay's one thread; `shared_from_this` keeps it alive while a socket operation is pending.
class RelayConnection : public std::enable_shared_from_this<RelayConnection> {
 public:
  RelayConnection(RelayShared& shared, Socket kubelet)
      : shared_(shared), kubelet_(std::move(kubelet)), runtime_(Socket(shared.io)) {
    shared_.connections.insert(this);
  }
  ~RelayConnection() { shared_.connections.erase(this); }
  RelayConnection(const RelayConnection&) = delete;
  RelayConnection& operator=(const RelayConnection&) = delete;

  void start() {
    // The server's preface, so that kubelet's connection is ready before the runtime is
    // dialled: the relay's own limits, every other setting the default (the runtime's SETTINGS
    // follow through the relay). kubelet's first SETTINGS ACK is for it and stops here.
    h2::appendSettings(kubelet_.out, {{h2::kMaxConcurrentStreamsSetting, h2::kMaxConcurrentStreams},
                                      {h2::kMaxHeaderListSizeSetting, h2::kMaxHeaderListSize}});
    flush(kubelet_);
    readKubelet();
  }

  void close() {
    if (closed_)
      return;
    closed_ = true;
    boost::system::error_code ignored;
    kubelet_.socket.close(ignored);
    runtime_.socket.close(ignored);
    for (auto& [id, stream] : streams_)
      if (stream.hooked)
        stream.hooked->cancelled = true;
    shared_.active_calls.fetch_sub(streams_.size(), std::memory_order_relaxed);
    streams_.clear();
  }

  // A hook's answer, back on the relay's thread.
  void hooksDone(HeldCall& call, const grpc::Status& status) {
    const std::chrono::duration<double> held =
        std::chrono::steady_clock::now() - call.hooks_started;
    hookSeconds()
        .with({std::string(hookedCallName(call.method.hooked)), status.ok() ? "ok" : "failed"})
        .observe(held.count());
    if (closed_ || call.cancelled)
      return;
    if (!status.ok()) {
      // Fail policy: the runtime never sees the request; kubelet gets the hook's error.
      std::string rst;
      h2::appendRstStream(rst, call.stream, h2::kCancel);
      toRuntime(rst, 0);
      answerKubelet(call.stream, static_cast<h2::GrpcCode>(status.error_code()),
                    status.error_message());
      flushBoth();
      return;
    }
    std::string body;
    h2::appendGrpcMessage(body, call.request);
    forwardBody(call, std::move(body));
    flushBoth();
  }

 private:
  enum class RuntimeState { kIdle, kConnecting, kConnected };

  // -- sockets -------------------------------------------------------------------------------

  void readKubelet() {
    auto buffer = kubelet_.in.prepare(std::max(kReadChunk, kubelet_.need));
    kubelet_.socket.async_read_some(
        buffer, [self = shared_from_this()](const boost::system::error_code& ec, std::size_t n) {
          self->onKubeletRead(ec, n);
        });
  }

  void onKubeletRead(const boost::system::error_code& ec, std::size_t n) {
    if (closed_ || closing_)
      return;
    if (ec) {
      // kubelet hung up (or the connection broke): the runtime's side goes with it, which
      // cancels the calls kubelet can no longer receive answers for.
      if (ec != asio::error::eof && ec != asio::error::connection_reset)
        KOORD_LOG_WARNING("runtime-proxy: reading kubelet's connection: {}", ec.message());
      close();
      return;
    }
    kubelet_.in.commit(n);
    if (!readKubeletFrames() || !withinLimits())
      return;
    flushBoth();
    readKubelet();
  }

  void readRuntime() {
    auto buffer = runtime_.in.prepare(std::max(kReadChunk, runtime_.need));
    runtime_.socket.async_read_some(
        buffer, [self = shared_from_this()](const boost::system::error_code& ec, std::size_t n) {
          self->onRuntimeRead(ec, n);
        });
  }

  void onRuntimeRead(const boost::system::error_code& ec, std::size_t n) {
    if (closed_)
      return;
    if (ec) {
      // The runtime went away (a restart): kubelet gets what the runtime said last (a GOAWAY)
      // and then loses this connection; it reconnects, and its next call dials the runtime again.
      if (ec != asio::error::eof && ec != asio::error::connection_reset)
        KOORD_LOG_WARNING("runtime-proxy: reading {}: {}", runtime_path_, ec.message());
      closeAfterKubeletFlush();
      return;
    }
    runtime_.in.commit(n);
    if (!readRuntimeFrames() || !withinLimits())
      return;
    flushBoth();
    readRuntime();
  }

  void flushBoth() {
    flush(kubelet_);
    if (runtime_state_ == RuntimeState::kConnected)
      flush(runtime_);
  }

  void flush(Side& side) {
    if (closed_ || side.write_busy || side.out.empty())
      return;
    side.writing.swap(side.out);
    side.out.clear();
    side.write_busy = true;
    side.owed_control = 0;
    asio::async_write(
        side.socket, asio::buffer(side.writing),
        [self = shared_from_this(), &side](const boost::system::error_code& ec, std::size_t) {
          self->onWritten(side, ec);
        });
  }

  void onWritten(Side& side, const boost::system::error_code& ec) {
    side.write_busy = false;
    side.writing.clear();
    if (closed_)
      return;
    if (ec) {
      close();
      return;
    }
    flush(side);
    if (closing_ && !kubelet_.write_busy)
      close();
  }

  void closeAfterKubeletFlush() {
    closing_ = true;
    boost::system::error_code ignored;
    runtime_.socket.close(ignored);
    runtime_state_ = RuntimeState::kIdle;
    flush(kubelet_);
    if (!kubelet_.write_busy)
      close();
  }

  bool fail(std::string_view why) {
    KOORD_LOG_ERROR("runtime-proxy: closing a kubelet connection: {}", why);
    close();
    return false;
  }

  // A connection error of `peer`'s (RFC 9113 5.4.1): it is told why with a GOAWAY, best effort
  // and only between writes (not to cut a frame in half), and both connections end.
  bool failPeer(Side& peer, std::string_view why, std::uint32_t code) {
    KOORD_LOG_ERROR("runtime-proxy: closing a kubelet connection: {} (GOAWAY {:#x} to {})", why,
                    code, &peer == &kubelet_ ? "kubelet" : "the runtime");
    if (!peer.write_busy && peer.socket.is_open()) {
      std::string goaway;
      h2::appendGoaway(goaway, &peer == &kubelet_ ? last_kubelet_stream_ : 0, code);
      (void)::send(peer.socket.native_handle(), goaway.data(), goaway.size(),
                   MSG_NOSIGNAL | MSG_DONTWAIT);
    }
    close();
    return false;
  }

  // What a peer that sends without reading makes the relay hold: frames the relay itself owes
  // it (acknowledgements, resets), and bytes waiting for it (h2/limits.h). Checked once a read.
  bool withinLimits() {
    for (Side* side : {&kubelet_, &runtime_}) {
      std::size_t waiting = side->out.size();
      if (side == &runtime_)
        waiting += up_blocked_.size() + pre_connect_.size();
      if (side->owed_control > h2::kMaxQueuedControlFrames)
        return failPeer(*side,
                        fmt::format("the peer does not read while it makes the relay queue over "
                                    "{} acknowledgements and resets",
                                    h2::kMaxQueuedControlFrames),
                        h2::kEnhanceYourCalm);
      if (waiting > h2::kMaxUnwrittenBytes)
        return failPeer(*side,
                        fmt::format("the peer does not read while over {} bytes wait for it",
                                    h2::kMaxUnwrittenBytes),
                        h2::kEnhanceYourCalm);
    }
    return true;
  }

  // -- the runtime's connection --------------------------------------------------------------

  const std::string& socketFor(CriService service) const {
    return service == CriService::kImage ? shared_.image_socket : shared_.runtime_socket;
  }

  void connectRuntime(const std::string& path) {
    runtime_state_ = RuntimeState::kConnecting;
    runtime_path_ = path;
    runtime_.socket.async_connect(asio::local::stream_protocol::endpoint(path),
                                  [self = shared_from_this()](const boost::system::error_code& ec) {
                                    self->onRuntimeConnected(ec);
                                  });
  }

  void onRuntimeConnected(const boost::system::error_code& ec) {
    if (closed_ || closing_)
      return;
    if (ec) {
      // kubelet keeps its connection to the proxy: the calls made meanwhile fail as they would
      // against a runtime that is down, and the next call dials again.
      KOORD_LOG_WARNING("runtime-proxy: cannot reach the runtime at {}: {}", runtime_path_,
                        ec.message());
      boost::system::error_code ignored;
      runtime_.socket.close(ignored);
      runtime_state_ = RuntimeState::kIdle;
      const std::string why =
          "koord runtime-proxy: cannot reach the runtime at " + runtime_path_ + ": " + ec.message();
      std::vector<std::uint32_t> ids;
      for (const auto& [id, stream] : streams_)
        ids.push_back(id);
      for (const auto id : ids)
        answerKubelet(id, h2::GrpcCode::kUnavailable, why);
      creditKubelet(pre_connect_kubelet_data_);
      pre_connect_kubelet_data_ = 0;
      pre_connect_.clear();
      up_blocked_.clear();
      runtime_window_ = h2::kDefaultWindow;
      runtime_initial_window_ = h2::kDefaultWindow;
      debt_ = 0;
      flushBoth();
      return;
    }
    runtime_state_ = RuntimeState::kConnected;
    runtime_.out = std::move(prologue_);
    runtime_.out += pre_connect_;
    prologue_.clear();
    pre_connect_.clear();
    pre_connect_kubelet_data_ = 0;
    readRuntime();
    flushBoth();
  }

  // Frames for the runtime in the order kubelet sent them. A DATA frame the runtime's window
  // cannot take yet (only possible after a hook made a request longer) waits, and everything
  // after it with it.
  void toRuntime(std::string_view frame, std::uint32_t data_length) {
    if (!up_blocked_.empty() || static_cast<std::int64_t>(data_length) > runtime_window_) {
      up_blocked_.append(frame);
      return;
    }
    runtime_window_ -= data_length;
    writeRuntime(frame);
  }

  void writeRuntime(std::string_view bytes) {
    if (runtime_state_ == RuntimeState::kConnected)
      runtime_.out.append(bytes);
    else
      pre_connect_.append(bytes);
  }

  // Connection-level frames kubelet sends before there is a runtime connection are kept to
  // begin that connection with.
  void toRuntimeConnection(std::string_view frame) {
    if (runtime_state_ == RuntimeState::kConnected)
      toRuntime(frame, 0);
    else
      prologue_.append(frame);
  }

  void flushBlocked() {
    std::string_view rest = up_blocked_;
    std::size_t done = 0;
    while (rest.size() >= h2::kFrameHeaderSize) {
      const auto h = h2::parseFrameHeader(rest.data());
      const std::size_t size = h2::kFrameHeaderSize + h.length;
      const std::uint32_t data = h.type == h2::kData ? h.length : 0;
      if (static_cast<std::int64_t>(data) > runtime_window_)
        break;
      runtime_window_ -= data;
      writeRuntime(rest.substr(0, size));
      rest.remove_prefix(size);
      done += size;
    }
    up_blocked_.erase(0, done);
  }

  // A hooked call's body is the proxy's own, sent where kubelet's was taken: the runtime counts
  // it against the connection's window, kubelet does not, so as much is kept back from the
  // runtime's next window updates (debt_) and kubelet never believes in more window than the
  // runtime has. Until then toRuntime() holds back what kubelet sends beyond it.
  void forwardBody(HeldCall& call, std::string body) {
    call.phase = HeldCall::Phase::kForwarded;
    debt_ += body.size();
    call.pending = std::move(body);
    call.pending_sent = 0;
    sendPending(call);
  }

  // As much of the body as the stream's window takes; toRuntime() keeps the connection's.
  void sendPending(HeldCall& call) {
    while (!call.end_sent) {
      const std::size_t left = call.pending.size() - call.pending_sent;
      const std::size_t n =
          std::min<std::size_t>({left, h2::kDefaultMaxFrameSize,
                                 static_cast<std::size_t>(std::max<std::int64_t>(0, call.window))});
      if (n == 0 && left > 0) {
        if (std::find(waiting_window_.begin(), waiting_window_.end(), call.stream) ==
            waiting_window_.end())
          waiting_window_.push_back(call.stream);
        return;
      }
      const bool last = n == left;
      std::string frame;
      h2::appendFrameHeader(frame, static_cast<std::uint32_t>(n), h2::kData,
                            last ? h2::kEndStream : 0, call.stream);
      frame.append(call.pending, call.pending_sent, n);
      call.window -= static_cast<std::int64_t>(n);
      call.pending_sent += n;
      call.end_sent = last;
      toRuntime(frame, static_cast<std::uint32_t>(n));
    }
    call.pending.clear();
    call.pending_sent = 0;
  }

  void retryWaitingCalls() {
    auto waiting = std::move(waiting_window_);
    waiting_window_.clear();
    for (const auto id : waiting)
      if (auto it = streams_.find(id); it != streams_.end() && it->second.hooked)
        sendPending(*it->second.hooked);
  }

  // The part of a body that will not be sent after all is not owed either.
  void abandonPending(HeldCall& call) {
    std::uint64_t unsent = call.pending.size() - call.pending_sent;
    const std::uint64_t kept = std::min(debt_, unsent);
    debt_ -= kept;
    unsent -= kept;
    creditKubelet(unsent);
    call.pending.clear();
    call.pending_sent = 0;
  }

  void creditKubelet(std::uint64_t n) {
    if (n > 0)
      h2::appendWindowUpdate(kubelet_.out, 0, static_cast<std::uint32_t>(n));
  }

  void creditRuntime(std::uint64_t n) {
    if (n > 0 && runtime_state_ == RuntimeState::kConnected)
      h2::appendWindowUpdate(runtime_.out, 0, static_cast<std::uint32_t>(n));
  }

  // -- streams -------------------------------------------------------------------------------

  bool answered(std::uint32_t id) const { return answered_.contains(id); }

  void eraseStream(std::unordered_map<std::uint32_t, StreamState>::iterator it) {
    if (it->second.hooked)
      it->second.hooked->cancelled = true;
    streams_.erase(it);
    shared_.active_calls.fetch_sub(1, std::memory_order_relaxed);
  }

  void endIfDone(std::unordered_map<std::uint32_t, StreamState>::iterator it) {
    if (it->second.kubelet_done && it->second.runtime_done)
      eraseStream(it);
  }

  // The proxy answers the call itself (a trailers-only response) and forgets it; kubelet's
  // later frames for it are dropped.
  void answerKubelet(std::uint32_t id, h2::GrpcCode code, std::string_view message) {
    std::string block;
    h2::hpackEncode(h2::trailersOnly(code, message), block);
    h2::appendHeaderBlock(kubelet_.out, id, block, true);
    bool kubelet_done = true;
    if (auto it = streams_.find(id); it != streams_.end()) {
      kubelet_done = it->second.kubelet_done;
      eraseStream(it);
    }
    // The rest of a request is not wanted (RFC 9113 8.1).
    if (!kubelet_done)
      h2::appendRstStream(kubelet_.out, id, h2::kNoError);
    rememberAnswered(id);
  }

  void rememberAnswered(std::uint32_t id) {
    answered_.insert(id);
    answered_order_.push_back(id);
    if (answered_order_.size() > kAnsweredMemory) {
      answered_.erase(answered_order_.front());
      answered_order_.pop_front();
    }
  }

  // The runtime's SETTINGS go to kubelet as they came, but for limits above the relay's own
  // (kubelet would otherwise open streams or send headers the relay then refuses).
  void appendClampedSettings(std::string_view frame) {
    const std::size_t at = kubelet_.out.size();
    kubelet_.out.append(frame);
    char* entries = kubelet_.out.data() + at + h2::kFrameHeaderSize;
    for (std::size_t i = 0; i + 6 <= frame.size() - h2::kFrameHeaderSize; i += 6) {
      const auto id = static_cast<std::uint16_t>((static_cast<std::uint8_t>(entries[i]) << 8) |
                                                 static_cast<std::uint8_t>(entries[i + 1]));
      std::uint32_t limit = 0;
      if (id == h2::kMaxConcurrentStreamsSetting)
        limit = h2::kMaxConcurrentStreams;
      else if (id == h2::kMaxHeaderListSizeSetting)
        limit = static_cast<std::uint32_t>(h2::kMaxHeaderListSize);
      else
        continue;
      if (h2::readUint32(entries + i + 2) <= limit)
        continue;
      for (int b = 0; b < 4; ++b)
        entries[i + 2 + b] = static_cast<char>(limit >> (8 * (3 - b)));
    }
  }

  // A call past the relay's bounds on calls in flight: refused before the runtime sees it
  // (RST_STREAM REFUSED_STREAM: the request was not processed, and gRPC retries it), and its
  // later frames are dropped as an answered call's.
  void refuseCall(std::uint32_t id) {
    if (!refused_logged_) {
      refused_logged_ = true;
      KOORD_LOG_WARNING(
          "runtime-proxy: kubelet opened more calls than the relay takes at once ({} on a "
          "connection, {} in all); refusing the excess (REFUSED_STREAM, logged once per "
          "connection)",
          h2::kMaxConcurrentStreams, kMaxRelayCalls);
    }
    h2::appendRstStream(kubelet_.out, id, h2::kRefusedStream);
    ++kubelet_.owed_control;
    rememberAnswered(id);
  }

  // -- kubelet to the runtime ----------------------------------------------------------------

  // Whole frames out of what was read; false once the connection is closed.
  template <typename OnFrame>
  bool readFrames(Side& side, OnFrame&& on_frame) {
    side.need = 0;
    while (!closed_) {
      const std::string_view view = side.in.view();
      if (view.size() < h2::kFrameHeaderSize)
        return true;
      const auto h = h2::parseFrameHeader(view.data());
      if (h.length > h2::kMaxFrameSize)
        return fail("a frame longer than HTTP/2 allows");
      // Refused from its frame header, before its payload is buffered.
      if (h.length > h2::kMaxHeaderListSize &&
          (h.type == h2::kHeaders || h.type == h2::kContinuation))
        return failPeer(side, "a header block fragment past the header list limit",
                        h2::kEnhanceYourCalm);
      const std::size_t size = h2::kFrameHeaderSize + h.length;
      if (view.size() < size) {
        side.need = size - view.size();
        return true;
      }
      if (!on_frame(h, view.substr(h2::kFrameHeaderSize, h.length), view.substr(0, size)))
        return false;
      side.in.consume(size);
    }
    return false;
  }

  bool readKubeletFrames() {
    if (!preface_seen_) {
      const std::string_view view = kubelet_.in.view();
      const std::size_t n = std::min(view.size(), h2::kClientPreface.size());
      if (view.substr(0, n) != h2::kClientPreface.substr(0, n))
        return fail("not an HTTP/2 client (no connection preface)");
      if (n < h2::kClientPreface.size())
        return true;
      prologue_.append(h2::kClientPreface);
      kubelet_.in.consume(n);
      preface_seen_ = true;
    }
    return readFrames(kubelet_,
                      [this](const h2::FrameHeader& h, std::string_view payload,
                             std::string_view frame) { return kubeletFrame(h, payload, frame); });
  }

  bool kubeletFrame(const h2::FrameHeader& h, std::string_view payload, std::string_view frame) {
    if (up_headers_.active && h.type != h2::kContinuation)
      return fail("kubelet interrupted a header block");
    switch (h.type) {
      case h2::kHeaders:
      case h2::kContinuation:
        return kubeletHeaders(h, payload);
      case h2::kData:
        return kubeletData(h, payload, frame);
      case h2::kRstStream:
        kubeletReset(h, frame);
        return true;
      case h2::kSettings:
        if (h.flags & h2::kAck) {
          if (!our_settings_acked_)
            our_settings_acked_ = true;  // for the proxy's own preface
          else
            toRuntime(frame, 0);
          return true;
        }
        h2::forEachSetting(payload, [&](std::uint16_t id, std::uint32_t value) {
          if (id == h2::kHeaderTableSize)
            raiseTableSizeLimit(down_decoder_, down_table_limit_, value);
        });
        toRuntimeConnection(frame);
        return true;
      case h2::kPing:
        if (runtime_state_ != RuntimeState::kConnected) {
          if (!(h.flags & h2::kAck)) {
            h2::appendFrameHeader(kubelet_.out, h.length, h2::kPing, h2::kAck, 0);
            kubelet_.out.append(payload);
            ++kubelet_.owed_control;
          }
          return true;
        }
        toRuntime(frame, 0);
        return true;
      case h2::kWindowUpdate:
        if (h.stream == 0)
          toRuntimeConnection(frame);
        else if (!answered(h.stream))
          toRuntime(frame, 0);
        return true;
      case h2::kPushPromise:
        return fail("kubelet sent PUSH_PROMISE");
      default:
        if (h.stream == 0 || !answered(h.stream))
          toRuntime(frame, 0);
        return true;
    }
  }

  // A table size a peer announced becomes the decoder's limit as soon as the SETTINGS frame
  // passes; only a larger one, since a smaller one binds the encoder only once it has seen the
  // SETTINGS, and the encoder then opens its next block with a size update anyway.
  static void raiseTableSizeLimit(h2::HpackDecoder& decoder, std::uint32_t& limit,
                                  std::uint32_t value) {
    if (value > limit) {
      limit = value;
      decoder.setTableSizeLimit(value);
    }
  }

  // The decoders stop at h2::kMaxHeaderListSize while decoding: a small block can name big
  // table entries many times over, and its list must not be built before it is refused.
  bool decodeHeaders(h2::HpackDecoder& decoder, Side& from, const std::string& block,
                     h2::HeaderList& out) {
    std::string error;
    if (!decoder.decodeReplacing(block, out, error))
      return failPeer(from, "a header block: " + error,
                      decoder.overLimit() ? h2::kEnhanceYourCalm : h2::kCompressionError);
    return true;
  }

  // Collects a header block; `complete` once END_HEADERS came. false when the connection failed.
  bool collectHeaders(PendingHeaders& pending, Side& from, const h2::FrameHeader& h,
                      std::string_view payload, bool& complete) {
    complete = false;
    if (h.type == h2::kHeaders) {
      const auto fragment = h2::framePayload(h, payload);
      if (!fragment)
        return fail("a HEADERS frame with bad padding");
      pending.active = true;
      pending.stream = h.stream;
      pending.end_stream = (h.flags & h2::kEndStream) != 0;
      pending.block.assign(*fragment);
    } else {
      if (!pending.active || h.stream != pending.stream)
        return fail("a CONTINUATION frame outside a header block");
      // Checked before the fragment is kept: a peer that never ends a block holds one limit.
      if (pending.block.size() + payload.size() > h2::kMaxHeaderListSize)
        return failPeer(from, "CONTINUATION frames past the header list limit",
                        h2::kEnhanceYourCalm);
      pending.block.append(payload);
    }
    if (h.flags & h2::kEndHeaders) {
      pending.active = false;
      complete = true;
    }
    return true;
  }

  bool kubeletHeaders(const h2::FrameHeader& h, std::string_view payload) {
    bool complete = false;
    if (!collectHeaders(up_headers_, kubelet_, h, payload, complete))
      return false;
    if (!complete)
      return true;
    h2::HeaderList& headers = up_fields_;
    if (!decodeHeaders(up_decoder_, kubelet_, up_headers_.block, headers))
      return false;
    const std::uint32_t id = up_headers_.stream;
    const bool end = up_headers_.end_stream;
    if (id > last_kubelet_stream_) {
      last_kubelet_stream_ = id;
      return kubeletCall(id, headers, end);
    }
    // Trailers of a call kubelet streams to (none of CRI's calls do today).
    if (answered(id))
      return true;
    forwardHeaders(id, headers, end);
    if (auto it = streams_.find(id); it != streams_.end() && end) {
      it->second.kubelet_done = true;
      endIfDone(it);
    }
    return true;
  }

  void forwardHeaders(std::uint32_t id, const h2::HeaderList& headers, bool end_stream) {
    block_scratch_.clear();
    h2::hpackEncode(headers, block_scratch_);
    frames_scratch_.clear();
    h2::appendHeaderBlock(frames_scratch_, id, block_scratch_, end_stream);
    toRuntime(frames_scratch_, 0);
  }

  bool kubeletCall(std::uint32_t id, const h2::HeaderList& headers, bool end_stream) {
    if (streams_.size() >= h2::kMaxConcurrentStreams ||
        shared_.active_calls.load(std::memory_order_relaxed) >= kMaxRelayCalls) {
      refuseCall(id);
      return true;
    }
    const CriMethod method = classifyCriMethod(h2::headerValue(headers, ":path").value_or(""));
    auto& stream = streams_[id];
    shared_.active_calls.fetch_add(1, std::memory_order_relaxed);
    stream.kubelet_done = end_stream;
    const std::string& socket = socketFor(method.service);
    if (runtime_state_ == RuntimeState::kIdle) {
      connectRuntime(socket);
    } else if (socket != runtime_path_) {
      // A connection's frames go to one socket; kubelet dials the image service separately.
      answerKubelet(id, h2::GrpcCode::kUnimplemented,
                    "koord runtime-proxy: this connection carries calls for " + runtime_path_ +
                        "; calls for " + socket + " need a connection of their own");
      return true;
    }
    forwardHeaders(id, headers, end_stream);
    if (shared_.interceptor != nullptr && method.hooked != HookedCall::kNone && method.unary &&
        !end_stream) {
      auto call = std::make_shared<HeldCall>();
      call->method = method;
      call->stream = id;
      call->window = runtime_initial_window_;
      stream.hooked = std::move(call);
    }
    return true;
  }

  bool kubeletData(const h2::FrameHeader& h, std::string_view payload, std::string_view frame) {
    if (answered(h.stream)) {
      creditKubelet(h.length);
      return true;
    }
    auto it = streams_.find(h.stream);
    const bool end = (h.flags & h2::kEndStream) != 0;
    if (it != streams_.end() && it->second.hooked &&
        it->second.hooked->phase == HeldCall::Phase::kReadingRequest) {
      HeldCall& call = *it->second.hooked;
      const auto data = h2::framePayload(h, payload);
      if (!data)
        return fail("a DATA frame with bad padding");
      call.body.append(*data);
      creditKubelet(h.length);
      if (!end && h.length > 0)
        h2::appendWindowUpdate(kubelet_.out, h.stream, h.length);
      if (call.body.size() > kMaxHookedBody) {
        std::string rst;
        h2::appendRstStream(rst, h.stream, h2::kCancel);
        toRuntime(rst, 0);
        answerKubelet(h.stream, h2::GrpcCode::kResourceExhausted,
                      "koord runtime-proxy: a request larger than 16 MiB");
        return true;
      }
      if (end) {
        it->second.kubelet_done = true;
        startHooks(it->second.hooked);
      }
      return true;
    }
    if (runtime_state_ != RuntimeState::kConnected)
      pre_connect_kubelet_data_ += h.length;
    toRuntime(frame, h.length);
    if (it != streams_.end() && end) {
      it->second.kubelet_done = true;
      endIfDone(it);
    }
    return true;
  }

  void startHooks(const std::shared_ptr<HeldCall>& call) {
    call->phase = HeldCall::Phase::kInHooks;
    const auto message = h2::singleGrpcMessage(call->body);
    if (!message) {
      // Compressed, or not one message: not something a hook could read. It goes on as is.
      KOORD_LOG_WARNING("runtime-proxy: {}: the request is not one plain message; no hooks",
                        hookedCallName(call->method.hooked));
      forwardBody(*call, std::move(call->body));
      return;
    }
    call->request.assign(*message);
    call->body.clear();
    call->hooks_ran = true;
    call->hooks_started = std::chrono::steady_clock::now();
    std::weak_ptr<RelayConnection> self = weak_from_this();
    shared_.interceptor->before(call->method, call->request, call->state,
                                [self, call, wake = shared_.wake](const grpc::Status& status) {
                                  wake->post([self, call, status] {
                                    if (auto connection = self.lock())
                                      connection->hooksDone(*call, status);
                                  });
                                });
  }

  void kubeletReset(const h2::FrameHeader& h, std::string_view frame) {
    if (answered(h.stream))
      return;
    forgetResetStream(h.stream);
    toRuntime(frame, 0);
  }

  // A stream either side reset: nothing the proxy holds for it goes anywhere now, so neither
  // side is left owing window for it.
  void forgetResetStream(std::uint32_t id) {
    auto it = streams_.find(id);
    if (it == streams_.end())
      return;
    if (const auto& call = it->second.hooked) {
      abandonPending(*call);
      creditRuntime(call->answer_data);
      call->answer_frames.clear();
      call->answer_data = 0;
    }
    eraseStream(it);
  }

  // -- the runtime to kubelet ----------------------------------------------------------------

  bool readRuntimeFrames() {
    return readFrames(runtime_,
                      [this](const h2::FrameHeader& h, std::string_view payload,
                             std::string_view frame) { return runtimeFrame(h, payload, frame); });
  }

  bool runtimeFrame(const h2::FrameHeader& h, std::string_view payload, std::string_view frame) {
    if (down_headers_.active && h.type != h2::kContinuation)
      return fail("the runtime interrupted a header block");
    switch (h.type) {
      case h2::kHeaders:
      case h2::kContinuation:
        return runtimeHeaders(h, payload);
      case h2::kData:
        return runtimeData(h, payload, frame);
      case h2::kRstStream:
        runtimeReset(h, frame);
        return true;
      case h2::kSettings:
        if (!(h.flags & h2::kAck)) {
          bool window_grew = false;
          h2::forEachSetting(payload, [&](std::uint16_t id, std::uint32_t value) {
            if (id == h2::kHeaderTableSize)
              raiseTableSizeLimit(up_decoder_, up_table_limit_, value);
            if (id == h2::kInitialWindowSize) {
              const std::int64_t delta = std::int64_t{value} - runtime_initial_window_;
              runtime_initial_window_ = value;
              window_grew = window_grew || delta > 0;
              for (auto& [sid, stream] : streams_)
                if (stream.hooked)
                  stream.hooked->window += delta;
            }
          });
          appendClampedSettings(frame);
          if (window_grew)
            retryWaitingCalls();
          return true;
        }
        kubelet_.out.append(frame);
        return true;
      case h2::kWindowUpdate:
        return runtimeWindowUpdate(h, payload, frame);
      case h2::kPushPromise:
        return fail("the runtime sent PUSH_PROMISE");
      default:
        if (h.stream == 0 || !answered(h.stream))
          kubelet_.out.append(frame);
        return true;
    }
  }

  bool runtimeWindowUpdate(const h2::FrameHeader& h, std::string_view payload,
                           std::string_view frame) {
    if (payload.size() != 4)
      return fail("a WINDOW_UPDATE frame of the wrong size");
    std::uint32_t increment = h2::readUint32(payload.data()) & 0x7fffffffu;
    if (h.stream == 0) {
      runtime_window_ += increment;
      const auto kept = static_cast<std::uint32_t>(std::min<std::uint64_t>(debt_, increment));
      debt_ -= kept;
      increment -= kept;
      if (increment > 0)
        h2::appendWindowUpdate(kubelet_.out, 0, increment);
      flushBlocked();
      retryWaitingCalls();
      return true;
    }
    if (answered(h.stream))
      return true;
    if (auto it = streams_.find(h.stream); it != streams_.end() && it->second.hooked) {
      it->second.hooked->window += increment;
      retryWaitingCalls();
    }
    kubelet_.out.append(frame);
    return true;
  }

  bool runtimeData(const h2::FrameHeader& h, std::string_view payload, std::string_view frame) {
    if (answered(h.stream)) {
      creditRuntime(h.length);
      return true;
    }
    auto it = streams_.find(h.stream);
    if (it != streams_.end() && it->second.hooked && it->second.hooked->holding_answer) {
      HeldCall& call = *it->second.hooked;
      const auto data = h2::framePayload(h, payload);
      if (!data)
        return fail("a DATA frame with bad padding");
      call.answer_frames.append(frame);
      call.answer_data += h.length;
      call.answer_body.append(*data);
      if (call.answer_frames.size() > kMaxHeldAnswer || (h.flags & h2::kEndStream)) {
        KOORD_LOG_WARNING("runtime-proxy: {}: an answer the proxy cannot follow; no bookkeeping",
                          hookedCallName(call.method.hooked));
        releaseAnswer(call);
      }
    } else {
      kubelet_.out.append(frame);
    }
    if (it != streams_.end() && (h.flags & h2::kEndStream)) {
      it->second.runtime_done = true;
      endIfDone(it);
    }
    return true;
  }

  void releaseAnswer(HeldCall& call) {
    kubelet_.out.append(call.answer_frames);
    call.answer_frames.clear();
    call.answer_body.clear();
    call.answer_data = 0;
    call.holding_answer = false;
  }

  bool runtimeHeaders(const h2::FrameHeader& h, std::string_view payload) {
    bool complete = false;
    if (!collectHeaders(down_headers_, runtime_, h, payload, complete))
      return false;
    if (!complete)
      return true;
    // Decoded even for a call the proxy answered: the runtime's encoder counts on it.
    h2::HeaderList& headers = down_fields_;
    if (!decodeHeaders(down_decoder_, runtime_, down_headers_.block, headers))
      return false;
    const std::uint32_t id = down_headers_.stream;
    const bool end = down_headers_.end_stream;
    if (answered(id))
      return true;
    std::string& block = block_scratch_;
    block.clear();
    h2::hpackEncode(headers, block);
    auto it = streams_.find(id);
    HeldCall* call = it != streams_.end() ? it->second.hooked.get() : nullptr;
    if (call != nullptr && call->holding_answer) {
      h2::appendHeaderBlock(call->answer_frames, id, block, end);
      if (end) {
        // The call's status: on OK the bookkeeping and post hooks run before kubelet has it.
        const auto status = h2::headerValue(headers, "grpc-status");
        if (status == "0" && call->hooks_ran && call->phase == HeldCall::Phase::kForwarded) {
          if (const auto message = h2::singleGrpcMessage(call->answer_body))
            shared_.interceptor->after(call->method, call->request, std::string(*message),
                                       call->state);
        }
        releaseAnswer(*call);
      }
    } else {
      h2::appendHeaderBlock(kubelet_.out, id, block, end);
    }
    if (it != streams_.end() && end) {
      it->second.runtime_done = true;
      endIfDone(it);
    }
    return true;
  }

  void runtimeReset(const h2::FrameHeader& h, std::string_view frame) {
    if (answered(h.stream))
      return;
    forgetResetStream(h.stream);
    kubelet_.out.append(frame);
  }

  RelayShared& shared_;
  Side kubelet_;
  Side runtime_;
  bool closed_ = false;
  bool closing_ = false;

  RuntimeState runtime_state_ = RuntimeState::kIdle;
  std::string runtime_path_;
  // What the runtime connection starts with (kubelet's preface, SETTINGS and window updates
  // it sent before any call), and the calls' frames sent while it is being dialled.
  std::string prologue_;
  std::string pre_connect_;
  std::uint64_t pre_connect_kubelet_data_ = 0;
  bool preface_seen_ = false;
  bool our_settings_acked_ = false;

  h2::HpackDecoder up_decoder_;
  h2::HpackDecoder down_decoder_;
  std::uint32_t up_table_limit_ = 4096;
  std::uint32_t down_table_limit_ = 4096;
  PendingHeaders up_headers_;
  PendingHeaders down_headers_;
  // The last decoded header list of each direction, and the block and frames re-encoded from
  // one: kept across calls so that their storage is reused and a relayed call's headers cost
  // no allocation once the connection has seen its longest ones.
  h2::HeaderList up_fields_;
  h2::HeaderList down_fields_;
  std::string block_scratch_;
  std::string frames_scratch_;

  std::unordered_map<std::uint32_t, StreamState> streams_;
  std::uint32_t last_kubelet_stream_ = 0;
  bool refused_logged_ = false;
  std::unordered_set<std::uint32_t> answered_;
  std::deque<std::uint32_t> answered_order_;

  // Flow control toward the runtime (see hooksDone): its connection window as the proxy
  // counts it, its streams' initial window, what kubelet was told beyond it, and the frames
  // waiting for window.
  std::int64_t runtime_window_ = h2::kDefaultWindow;
  std::int64_t runtime_initial_window_ = h2::kDefaultWindow;
  std::uint64_t debt_ = 0;
  std::string up_blocked_;
  std::vector<std::uint32_t> waiting_window_;
};

void relayKubeletConnection(RelayShared& shared, int fd) {
  Socket socket(shared.io);
  boost::system::error_code ec;
  socket.assign(asio::local::stream_protocol(), fd, ec);
  if (ec) {
    KOORD_LOG_ERROR("runtime-proxy: taking kubelet's connection: {}", ec.message());
    return;
  }
  std::make_shared<RelayConnection>(shared, std::move(socket))->start();
}

void closeRelayConnections(RelayShared& shared) {
  const auto connections = shared.connections;
  for (auto* c : connections)
    c->close();
}

}  // namespace koord::roles::runtime_proxy
