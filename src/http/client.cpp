#include "koord/http/client.h"

#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/url/parse.hpp>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <deque>
#include <future>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <unordered_map>
#include <variant>

#include "koord/core/log.h"

namespace koord::http {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
namespace ssl = net::ssl;
using tcp = net::ip::tcp;
using Clock = std::chrono::steady_clock;

namespace {

// Go's default; Kubernetes responses carry Warning and Audit-Id headers that can add up.
constexpr std::size_t kResponseHeaderLimit = 1 << 20;

bool isToken(std::string_view s) {
  static constexpr std::string_view kSpecials = "!#$%&'*+-.^_`|~";
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || kSpecials.find(c) != kSpecials.npos;
  });
}

bool isIpAddress(const std::string& host) {
  beast::error_code ec;
  net::ip::make_address(host, ec);
  return !ec;
}

struct Target {
  bool tls = false;
  std::string host;  // without brackets, for resolving and certificate checks
  std::uint16_t port = 0;
  std::string host_header;  // as the URL spells it
  std::string target;       // origin-form "/path?query"
  std::string key;          // pool key: scheme://host:port
};

std::optional<Target> parseUrl(std::string_view url) {
  auto parsed = boost::urls::parse_uri(url);
  if (!parsed)
    return std::nullopt;
  const auto& u = *parsed;
  Target t;
  if (u.scheme_id() == boost::urls::scheme::https) {
    t.tls = true;
  } else if (u.scheme_id() != boost::urls::scheme::http) {
    return std::nullopt;
  }
  if (!u.has_authority() || u.encoded_host().empty() || u.has_userinfo())
    return std::nullopt;
  t.host = u.host_address();
  if (u.has_port()) {
    if (u.port_number() == 0)
      return std::nullopt;
    t.port = u.port_number();
  } else {
    t.port = t.tls ? 443 : 80;
  }
  t.host_header = std::string(u.encoded_host_and_port());
  t.target = std::string(u.encoded_target());
  if (t.target.empty() || t.target.front() != '/')
    t.target.insert(0, "/");
  t.key = fmt::format("{}://{}:{}", t.tls ? "https" : "http", t.host, t.port);
  return t;
}

bool isHttpParseError(const beast::error_code& ec) {
  return ec.category() == bhttp::make_error_code(bhttp::error::bad_target).category();
}

// The errors a connection the server has already closed produces on first use.
bool isConnectionLoss(const beast::error_code& ec) {
  return ec == net::error::eof || ec == bhttp::error::end_of_stream ||
         ec == bhttp::error::partial_message || ec == net::error::connection_reset ||
         ec == net::error::broken_pipe || ec == net::error::connection_aborted ||
         ec == ssl::error::stream_truncated;
}

boost::system::error_code mapError(const beast::error_code& ec) {
  if (ec == beast::error::timeout)
    return makeError(Errc::kTimeout);
  if (ec == bhttp::error::body_limit)
    return makeError(Errc::kBodyTooLarge);
  if (ec == bhttp::error::header_limit || isHttpParseError(ec)) {
    return makeError(Errc::kBadResponse);
  }
  return ec;
}

}  // namespace

namespace detail {

class Conn;

// The pooled connections to one host under ClientOptions::max_conns_per_host (Go's
// MaxConnsPerHost): how many are open, in use or idle, and the requests waiting for one. Without
// the cap a burst of N requests opens N connections, and all but max_idle_per_host of them close
// again afterwards: each a TLS handshake on both ends, which under load cost more CPU than the
// requests themselves.
struct HostSlots {
  /// Called with a connection handed over, or with null when a slot was freed for the waiter to
  /// open a connection of its own (the slot already counted for it).
  using Waiter = std::function<void(std::shared_ptr<Conn>)>;

  std::mutex mu;
  std::size_t open = 0;
  std::deque<Waiter> waiters;

  /// A slot for a new connection, or false once the waiter is queued.
  bool openOrWait(std::size_t cap, Waiter waiter) {
    std::lock_guard lock(mu);
    if (open < cap) {
      ++open;
      return true;
    }
    waiters.push_back(std::move(waiter));
    return false;
  }

  /// The oldest waiter, if any, takes `conn` (still open and counted); false when none waits.
  bool handOver(const std::shared_ptr<Conn>& conn, const net::any_io_executor& ex) {
    Waiter w = takeWaiter(false);
    if (!w)
      return false;
    net::post(ex, [w = std::move(w), conn] { w(conn); });
    return true;
  }

  /// A connection closed: its slot goes to the oldest waiter, or back to the count.
  void freed(const net::any_io_executor& ex) {
    if (Waiter w = takeWaiter(true))
      net::post(ex, [w = std::move(w)] { w(nullptr); });
  }

 private:
  // The oldest waiter, or empty when none waits (then, with `release_slot`, one slot fewer open).
  Waiter takeWaiter(bool release_slot) {
    std::lock_guard lock(mu);
    if (waiters.empty()) {
      if (release_slot)
        --open;
      return {};
    }
    Waiter w = std::move(waiters.front());
    waiters.pop_front();
    return w;
  }
};

class Conn {
 public:
  using PlainStream = beast::tcp_stream;
  using TlsStream = beast::ssl_stream<beast::tcp_stream>;

  Conn(net::any_io_executor ex, ssl::context* tls_ctx, std::string pool_key,
       std::shared_ptr<HostSlots> slots = nullptr)
      : executor(ex),
        key(std::move(pool_key)),
        stream_(makeStream(ex, tls_ctx)),
        slots_(std::move(slots)) {}
  ~Conn() {
    if (slots_)
      slots_->freed(executor);
  }
  Conn(const Conn&) = delete;
  Conn& operator=(const Conn&) = delete;

  HostSlots* slots() const { return slots_.get(); }

  // Calls f with the concrete stream, so one code path serves http and https.
  template <typename F>
  void visit(F&& f) {
    std::visit(std::forward<F>(f), stream_);
  }
  TlsStream* tls() { return std::get_if<TlsStream>(&stream_); }

  beast::tcp_stream& lowest() {
    return std::visit([](auto& s) -> beast::tcp_stream& { return beast::get_lowest_layer(s); },
                      stream_);
  }

  // A pooled connection must be silent: readable means the server closed it (FIN, or a TLS
  // close_notify) or broke protocol. Checked without blocking before each reuse.
  bool looksAlive() {
    auto& socket = lowest().socket();
    if (!socket.is_open() || buffer.size() > 0)
      return false;
    char byte;
    ssize_t n = ::recv(socket.native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
  }

  void close() {
    beast::error_code ec;
    lowest().socket().shutdown(tcp::socket::shutdown_both, ec);
    lowest().close();
  }

  const net::any_io_executor executor;  // the connection's strand
  const std::string key;
  beast::flat_buffer buffer;  // bytes past one response stay for the next
  Clock::time_point idle_since;

 private:
  static std::variant<PlainStream, TlsStream> makeStream(net::any_io_executor ex,
                                                         ssl::context* tls_ctx) {
    if (tls_ctx)
      return std::variant<PlainStream, TlsStream>(std::in_place_type<TlsStream>, ex, *tls_ctx);
    return std::variant<PlainStream, TlsStream>(std::in_place_type<PlainStream>, ex);
  }

  std::variant<PlainStream, TlsStream> stream_;
  std::shared_ptr<HostSlots> slots_;  // null for streams and without a cap
};

struct ClientState : std::enable_shared_from_this<ClientState> {
  ClientState(net::io_context& io_context, ClientOptions opts)
      : io(io_context), options(std::move(opts)), sweep_timer(io_context) {
    buildTlsContext();
  }

  void buildTlsContext();

  std::shared_ptr<Conn> takeIdle(const std::string& key) {
    std::lock_guard lock(mu);
    auto it = idle.find(key);
    if (it == idle.end())
      return nullptr;
    auto& conns = it->second;
    auto now = Clock::now();
    while (!conns.empty()) {
      auto conn = std::move(conns.back());
      conns.pop_back();
      if (now - conn->idle_since < options.idle_timeout && conn->looksAlive())
        return conn;
      KOORD_VLOG(3, "http client: dropping stale pooled connection to {}", key);
      conn->close();
    }
    return nullptr;
  }

  /// Null without a cap (max_conns_per_host 0).
  std::shared_ptr<HostSlots> slotsFor(const std::string& key) {
    if (options.max_conns_per_host == 0)
      return nullptr;
    std::lock_guard lock(mu);
    auto& slots = host_slots[key];
    if (!slots)
      slots = std::make_shared<HostSlots>();
    return slots;
  }

  void release(std::shared_ptr<Conn> conn) {
    // A request waiting for a connection gets this one before the pool does.
    if (conn->slots() != nullptr && conn->slots()->handOver(conn, conn->executor))
      return;
    std::lock_guard lock(mu);
    auto& conns = idle[conn->key];
    if (closed || conns.size() >= options.max_idle_per_host) {
      conn->close();
      return;
    }
    conn->idle_since = Clock::now();
    conns.push_back(std::move(conn));
    scheduleSweepLocked();
  }

  // Closes expired idle connections even for hosts no longer called, so their sockets do not
  // linger until the server's own timeout.
  void scheduleSweepLocked() {
    if (sweep_scheduled || closed)
      return;
    sweep_scheduled = true;
    sweep_timer.expires_after(options.idle_timeout);
    sweep_timer.async_wait([weak = weak_from_this()](beast::error_code ec) {
      if (ec)
        return;
      if (auto self = weak.lock())
        self->sweep();
    });
  }

  void sweep() {
    std::lock_guard lock(mu);
    sweep_scheduled = false;
    if (closed)
      return;
    auto now = Clock::now();
    bool any = false;
    for (auto it = idle.begin(); it != idle.end();) {
      auto& conns = it->second;
      std::erase_if(conns, [&](const std::shared_ptr<Conn>& conn) {
        if (now - conn->idle_since < options.idle_timeout)
          return false;
        conn->close();
        return true;
      });
      any = any || !conns.empty();
      it = conns.empty() ? idle.erase(it) : std::next(it);
    }
    if (any)
      scheduleSweepLocked();
  }

  void shutdown() {
    std::unordered_map<std::string, std::vector<std::shared_ptr<Conn>>> conns;
    {
      std::lock_guard lock(mu);
      closed = true;
      conns.swap(idle);
      sweep_timer.cancel();
    }
    for (auto& [key, list] : conns) {
      for (auto& conn : list)
        conn->close();
    }
  }

  net::io_context& io;
  const ClientOptions options;
  std::unique_ptr<ssl::context> tls_ctx;
  mutable std::mutex mu;
  std::unordered_map<std::string, std::vector<std::shared_ptr<Conn>>> idle;
  std::unordered_map<std::string, std::shared_ptr<HostSlots>> host_slots;
  bool closed = false;
  bool sweep_scheduled = false;
  net::steady_timer sweep_timer;  // touched only under mu
  std::atomic<std::size_t> opened{0};
};

void ClientState::buildTlsContext() {
  tls_ctx = std::make_unique<ssl::context>(ssl::context::tls_client);
  SSL_CTX_set_min_proto_version(tls_ctx->native_handle(), TLS1_2_VERSION);
  beast::error_code ec;
  auto check = [&](std::string_view what) {
    if (ec)
      throw std::runtime_error(fmt::format("http client: {}: {}", what, ec.message()));
  };
  if (!options.ca_pem.empty()) {
    tls_ctx->add_certificate_authority(net::buffer(options.ca_pem), ec);
    check("loading ca_pem");
  }
  if (!options.ca_file.empty()) {
    tls_ctx->load_verify_file(options.ca_file, ec);
    check(fmt::format("loading CA file {}", options.ca_file));
  }
  if (options.ca_pem.empty() && options.ca_file.empty()) {
    tls_ctx->set_default_verify_paths(ec);
    check("loading the system CA store");
  }
  bool has_cert = !options.client_cert_pem.empty() || !options.client_cert_file.empty();
  bool has_key = !options.client_key_pem.empty() || !options.client_key_file.empty();
  if (has_cert != has_key) {
    throw std::runtime_error("http client: a client certificate needs both cert and key");
  }
  if (!has_cert)
    return;
  if (!options.client_cert_pem.empty()) {
    tls_ctx->use_certificate_chain(net::buffer(options.client_cert_pem), ec);
    check("loading client_cert_pem");
  } else {
    tls_ctx->use_certificate_chain_file(options.client_cert_file, ec);
    check(fmt::format("loading client certificate {}", options.client_cert_file));
  }
  if (!options.client_key_pem.empty()) {
    tls_ctx->use_private_key(net::buffer(options.client_key_pem), ssl::context::pem, ec);
    check("loading client_key_pem");
  } else {
    tls_ctx->use_private_key_file(options.client_key_file, ssl::context::pem, ec);
    check(fmt::format("loading client key {}", options.client_key_file));
  }
  if (SSL_CTX_check_private_key(tls_ctx->native_handle()) != 1) {
    throw std::runtime_error("http client: client key does not match client certificate");
  }
}

// Shared by a StreamHandle and its Op: cancel() may come from any thread, while the connection
// is only touched on its strand, so cancelling posts the close there.
struct StreamControl {
  std::atomic<bool> cancelled{false};
  std::mutex mu;
  std::function<void()> close;  // set once the connection exists; runs under mu

  void cancel() {
    cancelled = true;
    std::lock_guard lock(mu);
    if (close)
      close();
  }
};

struct StreamCallbacks {
  std::function<bool(int, const Headers&)> on_headers;
  std::function<bool(std::string_view)> on_data;
  std::chrono::milliseconds idle_timeout{0};
  std::shared_ptr<StreamControl> control;
};

namespace {

// One request from URL to callback. Phases (acquire, connect, write, read header, read body)
// are separate steps so that a streaming call can reuse all but the last.
class Op : public std::enable_shared_from_this<Op> {
 public:
  Op(std::shared_ptr<ClientState> client, ClientRequest request,
     std::function<void(Result<Response>)> done)
      : client_(std::move(client)), req_(std::move(request)), done_(std::move(done)) {}

  // Streaming mode: a dedicated connection, the body handed over piece by piece; `done` gets an
  // empty Response on a clean end.
  Op(std::shared_ptr<ClientState> client, ClientRequest request, StreamCallbacks stream,
     std::function<void(Result<Response>)> done)
      : client_(std::move(client)),
        req_(std::move(request)),
        done_(std::move(done)),
        stream_(std::move(stream)) {}

  void start() {
    auto target = parseUrl(req_.url);
    if (!target) {
      KOORD_VLOG(1, "http client: invalid URL '{}'", req_.url);
      return failEarly();
    }
    target_ = std::move(*target);
    if (!buildMessage())
      return failEarly();
    auto timeout = req_.timeout.count() > 0 ? req_.timeout : client_->options.request_timeout;
    deadline_ = Clock::now() + timeout;
    acquire();
  }

 private:
  bool buildMessage() {
    auto verb = bhttp::string_to_verb(req_.method);
    if (verb != bhttp::verb::unknown) {
      msg_.method(verb);
    } else if (isToken(req_.method)) {
      msg_.method_string(req_.method);
    } else {
      KOORD_VLOG(1, "http client: invalid method '{}'", req_.method);
      return false;
    }
    msg_.version(11);
    msg_.target(target_.target);
    msg_.set(bhttp::field::host, target_.host_header);
    msg_.set(bhttp::field::user_agent, client_->options.user_agent);
    for (const auto& [key, value] : req_.headers) {
      if (!isToken(key) || value.find_first_of("\r\n") != std::string::npos) {
        KOORD_VLOG(1, "http client: invalid header '{}' for {}", key, req_.url);
        return false;
      }
      if (equalsIgnoreCase(key, "Content-Length") || equalsIgnoreCase(key, "Transfer-Encoding"))
        continue;
      if (equalsIgnoreCase(key, "Host") || equalsIgnoreCase(key, "User-Agent")) {
        msg_.set(key, value);
      } else {
        msg_.insert(key, value);
      }
    }
    msg_.body() = std::move(req_.body);
    try {
      msg_.prepare_payload();
    } catch (const std::exception& e) {
      KOORD_VLOG(1, "http client: cannot send {} {}: {}", req_.method, req_.url, e.what());
      return false;
    }
    return true;
  }

  bool idempotent() const {
    auto v = msg_.method();
    return v == bhttp::verb::get || v == bhttp::verb::head || v == bhttp::verb::options ||
           v == bhttp::verb::trace;
  }

  void acquire() {
    // A stream holds its connection for minutes and is never reusable afterwards.
    if (stream_)
      return connectNew(nullptr);
    if (auto conn = client_->takeIdle(target_.key))
      return useConn(std::move(conn));
    openOrWait();
  }

  void useConn(std::shared_ptr<Conn> conn) {
    conn_ = std::move(conn);
    reused_ = true;
    net::post(conn_->executor, beast::bind_front_handler(&Op::write, shared_from_this()));
  }

  // A new pooled connection when the host is under its cap; otherwise the request waits for one
  // to be handed over or closed. Its deadline still runs: a request that waited past it fails
  // with kTimeout on its first write.
  void openOrWait() {
    auto slots = client_->slotsFor(target_.key);
    if (!slots)
      return connectNew(nullptr);
    // The waiter sits in `slots` and must not own it back.
    auto waiter = [self = shared_from_this()](std::shared_ptr<Conn> conn) {
      if (conn)
        self->useConn(std::move(conn));
      else
        self->connectNew(self->client_->slotsFor(self->target_.key));
    };
    if (slots->openOrWait(client_->options.max_conns_per_host, std::move(waiter)))
      connectNew(std::move(slots));
  }

  void connectNew(std::shared_ptr<HostSlots> slots) {
    reused_ = false;
    conn_ = std::make_shared<Conn>(net::make_strand(client_->io),
                                   target_.tls ? client_->tls_ctx.get() : nullptr, target_.key,
                                   std::move(slots));
    if (stream_) {
      std::lock_guard lock(stream_->control->mu);
      stream_->control->close = [weak = std::weak_ptr<Conn>(conn_), ex = conn_->executor] {
        net::post(ex, [weak] {
          if (auto conn = weak.lock())
            conn->close();
        });
      };
      if (stream_->control->cancelled)
        stream_->control->close();
    }
    net::post(conn_->executor, beast::bind_front_handler(&Op::resolve, shared_from_this()));
  }

  void resolve() {
    connect_deadline_ = std::min(deadline_, Clock::now() + client_->options.connect_timeout);
    beast::error_code ec;
    auto addr = net::ip::make_address(target_.host, ec);
    if (!ec) {
      endpoints_ = {tcp::endpoint(addr, target_.port)};
      return connect();
    }
    resolver_.emplace(conn_->executor);
    resolve_timer_.emplace(conn_->executor);
    resolving_ = true;
    // The resolver has no deadline of its own; the timer cancels it.
    resolve_timer_->expires_at(connect_deadline_);
    resolve_timer_->async_wait(
        beast::bind_front_handler(&Op::onResolveTimeout, shared_from_this()));
    resolver_->async_resolve(target_.host, std::to_string(target_.port),
                             beast::bind_front_handler(&Op::onResolve, shared_from_this()));
  }

  void onResolveTimeout(beast::error_code ec) {
    if (ec || !resolving_)
      return;
    resolve_timed_out_ = true;
    resolver_->cancel();
  }

  void onResolve(beast::error_code ec, tcp::resolver::results_type results) {
    resolving_ = false;
    resolve_timer_->cancel();
    if (resolve_timed_out_)
      return fail(makeError(Errc::kTimeout), "resolving");
    if (ec)
      return fail(ec, "resolving");
    endpoints_.clear();
    for (const auto& entry : results)
      endpoints_.push_back(entry.endpoint());
    connect();
  }

  void connect() {
    conn_->lowest().expires_at(connect_deadline_);
    conn_->lowest().async_connect(endpoints_,
                                  beast::bind_front_handler(&Op::onConnect, shared_from_this()));
  }

  void onConnect(beast::error_code ec, const tcp::endpoint&) {
    if (ec)
      return fail(mapError(ec), "connecting");
    client_->opened.fetch_add(1);
    conn_->lowest().socket().set_option(tcp::no_delay(true), ec);
    if (conn_->tls())
      return handshake();
    write();
  }

  void handshake() {
    auto& stream = *conn_->tls();
    SSL* native = stream.native_handle();
    const auto& opts = client_->options;
    const std::string& name = opts.server_name.empty() ? target_.host : opts.server_name;
    bool ip = isIpAddress(name);
    if (!ip)
      SSL_set_tlsext_host_name(native, name.c_str());  // SNI may not carry an IP
    if (opts.insecure_skip_verify) {
      stream.set_verify_mode(ssl::verify_none);
    } else {
      X509_VERIFY_PARAM* param = SSL_get0_param(native);
      X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
      int ok = ip ? X509_VERIFY_PARAM_set1_ip_asc(param, name.c_str())
                  : X509_VERIFY_PARAM_set1_host(param, name.c_str(), name.size());
      if (ok != 1)
        return fail(makeError(Errc::kInvalidArgument), "setting the TLS verify name");
      stream.set_verify_mode(ssl::verify_peer);
    }
    conn_->lowest().expires_at(connect_deadline_);
    stream.async_handshake(ssl::stream_base::client,
                           beast::bind_front_handler(&Op::onHandshake, shared_from_this()));
  }

  void onHandshake(beast::error_code ec) {
    if (!ec)
      return write();
    long verify = SSL_get_verify_result(conn_->tls()->native_handle());
    if (verify != X509_V_OK) {
      KOORD_VLOG(1, "http client: certificate of {} not trusted: {}", target_.key,
                 X509_verify_cert_error_string(verify));
      return fail(makeError(Errc::kTlsVerifyFailed), "verifying the server certificate");
    }
    fail(mapError(ec), "TLS handshake");
  }

  void write() {
    conn_->lowest().expires_at(deadline_);
    conn_->visit([this](auto& stream) {
      bhttp::async_write(stream, msg_, beast::bind_front_handler(&Op::onWrite, shared_from_this()));
    });
  }

  void onWrite(beast::error_code ec, std::size_t written) {
    if (ec) {
      // A server that closed the pooled connection read none of the request.
      if (reused_ && !retried_ && isConnectionLoss(ec) && (written == 0 || idempotent())) {
        return retry(ec);
      }
      return fail(mapError(ec), "writing the request");
    }
    readHeader();
  }

  void readHeader() {
    if (stream_)
      return readStreamHeader();
    parser_.emplace();
    parser_->header_limit(kResponseHeaderLimit);
    parser_->body_limit(client_->options.response_body_limit);
    if (msg_.method() == bhttp::verb::head)
      parser_->skip(true);
    conn_->visit([this](auto& stream) {
      bhttp::async_read_header(stream, conn_->buffer, *parser_,
                               beast::bind_front_handler(&Op::onHeader, shared_from_this()));
    });
  }

  void onHeader(beast::error_code ec, std::size_t) {
    if (ec)
      return onReadError(ec);
    readBody();
  }

  void readBody() {
    if (parser_->is_done())
      return complete();
    conn_->visit([this](auto& stream) {
      bhttp::async_read(stream, conn_->buffer, *parser_,
                        beast::bind_front_handler(&Op::onBody, shared_from_this()));
    });
  }

  void onBody(beast::error_code ec, std::size_t) {
    if (ec)
      return onReadError(ec);
    complete();
  }

  void onReadError(beast::error_code ec) {
    // The server's idle close crossed our write: nothing was processed, but the request may
    // have arrived, so only methods that are safe to repeat go again.
    if (reused_ && !retried_ && !parser_->got_some() && isConnectionLoss(ec) && idempotent()) {
      return retry(ec);
    }
    fail(mapError(ec), "reading the response");
  }

  void retry(beast::error_code ec) {
    KOORD_VLOG(2, "http client: pooled connection to {} was closed ({}); retrying {} {}",
               target_.key, ec.message(), req_.method, target_.target);
    conn_->close();
    conn_.reset();  // frees its slot first, so that the cap is not exceeded by the retry
    retried_ = true;
    openOrWait();
  }

  void complete() {
    auto& msg = parser_->get();
    Response res;
    res.status = static_cast<int>(msg.result_int());
    res.content_type = std::string(msg[bhttp::field::content_type]);
    for (const auto& field : msg) {
      res.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
    }
    res.body = std::move(msg.body());
    bool reusable = msg.keep_alive() && !parser_->need_eof() && msg_.keep_alive();
    parser_.reset();
    if (reusable) {
      conn_->lowest().expires_never();
      // Back in the pool before the callback runs, so a request the callback (or the thread it
      // wakes) sends next finds this connection.
      client_->release(std::move(conn_));
    } else {
      conn_->close();
      conn_.reset();
    }
    finish(std::move(res));
  }

  bool cancelled() const { return stream_->control->cancelled.load(); }

  void readStreamHeader() {
    sparser_.emplace();
    sparser_->header_limit(kResponseHeaderLimit);
    sparser_->body_limit(boost::none);  // a watch has no total size, only per-event limits
    conn_->visit([this](auto& stream) {
      bhttp::async_read_header(stream, conn_->buffer, *sparser_,
                               beast::bind_front_handler(&Op::onStreamHeader, shared_from_this()));
    });
  }

  void onStreamHeader(beast::error_code ec, std::size_t) {
    if (cancelled())
      return fail(net::error::operation_aborted, "cancelled");
    if (ec)
      return fail(mapError(ec), "reading the stream's header");
    const auto& msg = sparser_->get();
    Headers headers;
    for (const auto& field : msg)
      headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
    if (!callStream(
            [&] { return stream_->on_headers(static_cast<int>(msg.result_int()), headers); }))
      return fail(net::error::operation_aborted, "stopped by the caller");
    chunk_.resize(64 << 10);
    readStreamBody();
  }

  void readStreamBody() {
    if (cancelled())
      return fail(net::error::operation_aborted, "cancelled");
    if (sparser_->is_done())
      return finishStream();
    auto& body = sparser_->get().body();
    body.data = chunk_.data();
    body.size = chunk_.size();
    body.more = true;
    if (stream_->idle_timeout.count() > 0) {
      conn_->lowest().expires_after(stream_->idle_timeout);
    } else {
      conn_->lowest().expires_never();
    }
    conn_->visit([this](auto& stream) {
      bhttp::async_read_some(stream, conn_->buffer, *sparser_,
                             beast::bind_front_handler(&Op::onStreamBody, shared_from_this()));
    });
  }

  void onStreamBody(beast::error_code ec, std::size_t) {
    if (cancelled())
      return fail(net::error::operation_aborted, "cancelled");
    // need_buffer only says our chunk buffer is full: hand it over and read on.
    if (ec == bhttp::error::need_buffer)
      ec = {};
    if (ec)
      return fail(mapError(ec), "reading the stream");
    std::size_t got = chunk_.size() - sparser_->get().body().size;
    if (got > 0 &&
        !callStream([&] { return stream_->on_data(std::string_view(chunk_.data(), got)); }))
      return fail(net::error::operation_aborted, "stopped by the caller");
    readStreamBody();
  }

  // A throwing callback ends the stream rather than unwinding through Asio.
  template <typename F>
  bool callStream(F&& f) {
    try {
      return f();
    } catch (const std::exception& e) {
      KOORD_LOG_ERROR("http client: stream callback for {} threw: {}", req_.url, e.what());
    } catch (...) {
      KOORD_LOG_ERROR("http client: stream callback for {} threw a non-exception", req_.url);
    }
    return false;
  }

  void finishStream() {
    sparser_.reset();
    conn_->close();
    conn_.reset();
    finish(Response{});
  }

  void fail(boost::system::error_code ec, std::string_view stage) {
    KOORD_VLOG(2, "http client: {} {} failed while {}: {}", req_.method, req_.url, stage,
               ec.message());
    if (conn_) {
      conn_->close();
      conn_.reset();
    }
    finish(ec);
  }

  // Errors found before any connection exists still reach the callback on the io_context.
  void failEarly() {
    net::post(client_->io,
              [self = shared_from_this()] { self->finish(makeError(Errc::kInvalidArgument)); });
  }

  void finish(Result<Response> result) {
    auto done = std::move(done_);
    done_ = nullptr;
    if (!done)
      return;
    try {
      done(std::move(result));
    } catch (const std::exception& e) {
      KOORD_LOG_ERROR("http client: callback for {} {} threw: {}", req_.method, req_.url, e.what());
    } catch (...) {
      KOORD_LOG_ERROR("http client: callback for {} {} threw a non-exception", req_.method,
                      req_.url);
    }
  }

  std::shared_ptr<ClientState> client_;
  ClientRequest req_;
  std::function<void(Result<Response>)> done_;
  Target target_;
  bhttp::request<bhttp::string_body> msg_;
  Clock::time_point deadline_;
  Clock::time_point connect_deadline_;
  std::shared_ptr<Conn> conn_;
  bool reused_ = false;
  bool retried_ = false;
  std::optional<tcp::resolver> resolver_;
  std::optional<net::steady_timer> resolve_timer_;
  bool resolving_ = false;
  bool resolve_timed_out_ = false;
  std::vector<tcp::endpoint> endpoints_;
  std::optional<bhttp::response_parser<bhttp::string_body>> parser_;
  std::optional<StreamCallbacks> stream_;
  std::optional<bhttp::response_parser<bhttp::buffer_body>> sparser_;
  std::vector<char> chunk_;
};

}  // namespace
}  // namespace detail

Client::Client(net::io_context& io, ClientOptions options)
    : state_(std::make_shared<detail::ClientState>(io, std::move(options))) {}

Client::~Client() {
  state_->shutdown();
}

void Client::closeIdleConnections() {
  state_->shutdown();
}

void Client::send(ClientRequest request, std::function<void(Result<Response>)> done) {
  std::make_shared<detail::Op>(state_, std::move(request), std::move(done))->start();
}

Result<Response> Client::sendSync(ClientRequest request) {
  if (state_->io.get_executor().running_in_this_thread()) {
    KOORD_LOG_ERROR("http client: sendSync({}) called on an io_context thread; it would deadlock",
                    request.url);
    return makeError(Errc::kInvalidArgument);
  }
  // Shared, so the promise outlives set_value even after the waiting thread has moved on.
  auto promise = std::make_shared<std::promise<Result<Response>>>();
  auto future = promise->get_future();
  send(std::move(request),
       [promise](Result<Response> result) { promise->set_value(std::move(result)); });
  return future.get();
}

StreamHandle Client::stream(ClientRequest request,
                            std::function<bool(int, const Headers&)> on_headers,
                            std::function<bool(std::string_view)> on_data,
                            std::function<void(boost::system::error_code)> on_done,
                            std::chrono::milliseconds idle_timeout) {
  detail::StreamCallbacks cb;
  cb.on_headers = std::move(on_headers);
  cb.on_data = std::move(on_data);
  cb.idle_timeout = idle_timeout;
  cb.control = std::make_shared<detail::StreamControl>();
  StreamHandle handle(cb.control);
  auto done = [on_done = std::move(on_done)](Result<Response> r) {
    on_done(r ? boost::system::error_code() : r.error());
  };
  std::make_shared<detail::Op>(state_, std::move(request), std::move(cb), std::move(done))->start();
  return handle;
}

void StreamHandle::cancel() const {
  if (control_)
    control_->cancel();
}

std::size_t Client::idleConnections() const {
  std::lock_guard lock(state_->mu);
  std::size_t n = 0;
  for (const auto& [key, conns] : state_->idle)
    n += conns.size();
  return n;
}

std::size_t Client::connectionsOpened() const {
  return state_->opened.load();
}

}  // namespace koord::http
