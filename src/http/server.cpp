#include "koord/http/server.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/stat.h>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ip/v6_only.hpp>
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
#include <charconv>
#include <ctime>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "koord/core/log.h"
#include "koord/core/metrics.h"
#include "koord/http/cert.h"
#include "koord/http/file_util.h"
#include "openssl_errors.h"

namespace koord::http {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
namespace ssl = net::ssl;
using tcp = net::ip::tcp;
using Clock = std::chrono::steady_clock;

namespace {

// Large enough for bearer tokens and cookies, small enough that a flood of headers is cheap.
constexpr std::size_t kHeaderLimit = 64 * 1024;
constexpr std::size_t kReadChunk = 4096;
// After a response that closes the connection, unread request bytes would make the kernel send
// RST, which can destroy the response before the client reads it; drain for this long first.
constexpr auto kLingerTime = std::chrono::milliseconds(500);
constexpr std::size_t kLingerBytes = 256 * 1024;
// A 503 for a handler that overran the deadline still needs a moment to be written.
constexpr auto kLateWriteWindow = std::chrono::seconds(1);
constexpr auto kAcceptRetryDelay = std::chrono::milliseconds(100);
constexpr auto kWarnInterval = std::chrono::seconds(10);

bool icontains(std::string_view haystack, std::string_view needle) {
  return std::search(haystack.begin(), haystack.end(), needle.begin(), needle.end(),
                     [](char x, char y) {
                       return std::tolower(static_cast<unsigned char>(x)) ==
                              std::tolower(static_cast<unsigned char>(y));
                     }) != haystack.end();
}

std::string endpointString(const tcp::endpoint& ep) {
  auto addr = ep.address();
  // A dual-stack listener sees IPv4 peers as ::ffff:a.b.c.d; logs should show a.b.c.d.
  if (addr.is_v6() && addr.to_v6().is_v4_mapped()) {
    addr = net::ip::make_address_v4(net::ip::v4_mapped, addr.to_v6());
  }
  if (addr.is_v6())
    return fmt::format("[{}]:{}", addr.to_string(), ep.port());
  return fmt::format("{}:{}", addr.to_string(), ep.port());
}

std::string httpDate() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[64];
  std::size_t n = std::strftime(buf, sizeof buf, "%a, %d %b %Y %H:%M:%S GMT", &tm);
  return std::string(buf, n);
}

bool isHttpParseError(const beast::error_code& ec) {
  return ec.category() == bhttp::make_error_code(bhttp::error::bad_target).category();
}

// Offers only HTTP/1.1, so that clients that would prefer h2 (Go's) settle on it explicitly.
int selectAlpn(SSL*, const unsigned char** out, unsigned char* outlen, const unsigned char* in,
               unsigned int inlen, void*) {
  static const unsigned char kProtos[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
  unsigned char* selected = nullptr;
  unsigned char selected_len = 0;
  if (SSL_select_next_proto(&selected, &selected_len, kProtos, sizeof kProtos, in, inlen) !=
      OPENSSL_NPN_NEGOTIATED) {
    return SSL_TLSEXT_ERR_NOACK;
  }
  *out = selected;
  *outlen = selected_len;
  return SSL_TLSEXT_ERR_OK;
}

// The subject CN of a client certificate; nullopt when it has none, or more than one (which CN
// counts would then depend on the reader: Go's takes the last).
std::optional<std::string> subjectCommonName(X509* cert) {
  X509_NAME* subject = X509_get_subject_name(cert);
  int index = X509_NAME_get_index_by_NID(subject, NID_commonName, -1);
  if (index < 0 || X509_NAME_get_index_by_NID(subject, NID_commonName, index) >= 0)
    return std::nullopt;
  unsigned char* utf8 = nullptr;
  int len =
      ASN1_STRING_to_UTF8(&utf8, X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, index)));
  if (len < 0)
    return std::nullopt;
  std::string cn(reinterpret_cast<const char*>(utf8), static_cast<std::size_t>(len));
  OPENSSL_free(utf8);
  return cn;
}

// Runs for each certificate of the client's chain after OpenSSL's own check; only the leaf's
// name is ours to judge.
bool verifyClientName(const std::vector<std::string>& allowed, const std::string& server,
                      bool preverified, X509_STORE_CTX* store) {
  if (!preverified || X509_STORE_CTX_get_error_depth(store) != 0)
    return preverified;
  auto cn = subjectCommonName(X509_STORE_CTX_get_current_cert(store));
  if (cn && std::find(allowed.begin(), allowed.end(), *cn) != allowed.end())
    return true;
  // Only a client holding a certificate from the trusted CA gets here, so this is a
  // misconfiguration worth a warning, not a scanner's noise.
  KOORD_LOG_WARNING("http server {}: refusing client certificate with CN {:?}: not one of {}",
                    server, cn.value_or("(none or several)"), fmt::join(allowed, ", "));
  X509_STORE_CTX_set_error(store, X509_V_ERR_APPLICATION_VERIFICATION);
  return false;
}

// Hands out the TLS context for new connections and swaps it when the files on disk change, so
// that rotating a certificate (cert-manager, a Secret update) needs no restart.
class TlsContextProvider {
 public:
  TlsContextProvider(TlsServerConfig config, std::string server_name)
      : config_(std::move(config)), name_(std::move(server_name)) {
    stamp_ = stampFiles();
    std::string error;
    current_ = build(error);
    if (!current_) {
      throw std::runtime_error(
          fmt::format("http server {}: cannot load TLS certificate: {}", name_, error));
    }
    last_check_ = Clock::now();
  }

  std::shared_ptr<ssl::context> current() {
    std::lock_guard lock(mu_);
    auto now = Clock::now();
    if (now - last_check_ < config_.reload_check)
      return current_;
    last_check_ = now;
    auto stamp = stampFiles();
    if (stamp == stamp_)
      return current_;
    // Recorded even when the load below fails: a broken file is reported once, and retried
    // only when it changes again (the writer finishing its job).
    stamp_ = stamp;
    std::string error;
    if (auto ctx = build(error)) {
      current_ = std::move(ctx);
      KOORD_LOG_INFO("http server {}: reloaded TLS certificate {}", name_, config_.cert_file);
    } else {
      KOORD_LOG_ERROR(
          "http server {}: reloading TLS certificate failed, keeping the previous one: {}", name_,
          error);
    }
    return current_;
  }

 private:
  struct FileStamp {
    bool exists = false;
    dev_t dev = 0;
    ino_t ino = 0;
    off_t size = 0;
    std::int64_t mtime_ns = 0;
    bool operator==(const FileStamp&) const = default;
  };

  std::vector<FileStamp> stampFiles() const {
    std::vector<FileStamp> out;
    for (const std::string* path :
         {&config_.cert_file, &config_.key_file, &config_.client_ca_file}) {
      FileStamp s;
      struct stat st {};
      if (!path->empty() && ::stat(path->c_str(), &st) == 0) {
        s.exists = true;
        s.dev = st.st_dev;
        s.ino = st.st_ino;  // an atomic rename or a Secret's symlink swap changes the inode
        s.size = st.st_size;
        s.mtime_ns = std::int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec;
      }
      out.push_back(s);
    }
    return out;
  }

  std::shared_ptr<ssl::context> build(std::string& error) const {
    try {
      return buildOrThrow(error);
    } catch (const std::exception& e) {
      error = e.what();
      return nullptr;
    }
  }

  std::shared_ptr<ssl::context> buildOrThrow(std::string& error) const {
    auto cert = config_.cert_pem.empty() ? readFile(config_.cert_file)
                                         : Result<std::string>(config_.cert_pem);
    if (!cert) {
      error = fmt::format("reading {}: {}", config_.cert_file, cert.error().message());
      return nullptr;
    }
    auto key =
        config_.key_pem.empty() ? readFile(config_.key_file) : Result<std::string>(config_.key_pem);
    if (!key) {
      error = fmt::format("reading {}: {}", config_.key_file, key.error().message());
      return nullptr;
    }
    auto ctx = std::make_shared<ssl::context>(ssl::context::tls_server);
    SSL_CTX* native = ctx->native_handle();
    SSL_CTX_set_min_proto_version(native, TLS1_2_VERSION);
    ctx->set_options(ssl::context::default_workarounds | ssl::context::no_compression |
                     ssl::context::single_dh_use);
    beast::error_code ec;
    ctx->use_certificate_chain(net::buffer(*cert), ec);
    if (ec) {
      error = fmt::format("certificate {}: {}", config_.cert_file, ec.message());
      ERR_clear_error();
      return nullptr;
    }
    ctx->use_private_key(net::buffer(*key), ssl::context::pem, ec);
    if (ec) {
      error = fmt::format("key {}: {}", config_.key_file, ec.message());
      ERR_clear_error();
      return nullptr;
    }
    if (SSL_CTX_check_private_key(native) != 1) {
      error = fmt::format("key {} does not match certificate {}: {}", config_.key_file,
                          config_.cert_file, detail::drainOpensslErrors());
      return nullptr;
    }
    if (!config_.client_ca_file.empty() && !loadClientCAs(native, error))
      return nullptr;
    if (!config_.client_common_names.empty()) {
      if (config_.client_ca_file.empty()) {
        error = "client_common_names needs client_ca_file";
        return nullptr;
      }
      ctx->set_verify_callback(
          [names = config_.client_common_names, server = name_](bool preverified,
                                                                ssl::verify_context& vc) {
            return verifyClientName(names, server, preverified, vc.native_handle());
          },
          ec);
      if (ec) {
        error = fmt::format("client name check: {}", ec.message());
        return nullptr;
      }
    }
    // Required for session resumption once client certificates are verified.
    static const unsigned char kSessionContext[] = "koord";
    SSL_CTX_set_session_id_context(native, kSessionContext, sizeof kSessionContext - 1);
    SSL_CTX_set_alpn_select_cb(native, selectAlpn, nullptr);
    try {
      auto not_after = certNotAfter(*cert);
      KOORD_VLOG(1, "http server {}: TLS certificate {} valid until {}", name_, config_.cert_file,
                 std::chrono::system_clock::to_time_t(not_after));
    } catch (const std::exception&) {
      // Already loaded by OpenSSL above; the expiry is only informational.
    }
    return ctx;
  }

  bool loadClientCAs(SSL_CTX* native, std::string& error) const {
    auto pem = readFile(config_.client_ca_file);
    if (!pem) {
      error = fmt::format("reading {}: {}", config_.client_ca_file, pem.error().message());
      return false;
    }
    BIO* bio = BIO_new_mem_buf(pem->data(), static_cast<int>(pem->size()));
    X509_STORE* store = SSL_CTX_get_cert_store(native);
    int count = 0;
    while (X509* ca = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr)) {
      // The CA list in CertificateRequest lets clients with several certificates pick one.
      bool ok = X509_STORE_add_cert(store, ca) == 1 && SSL_CTX_add_client_CA(native, ca) == 1;
      X509_free(ca);
      if (!ok) {
        BIO_free(bio);
        error =
            fmt::format("client CA {}: {}", config_.client_ca_file, detail::drainOpensslErrors());
        return false;
      }
      ++count;
    }
    BIO_free(bio);
    ERR_clear_error();  // the loop ends on a "no start line" error
    if (count == 0) {
      error = fmt::format("client CA {}: no certificates found", config_.client_ca_file);
      return false;
    }
    SSL_CTX_set_verify(native, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
    return true;
  }

  const TlsServerConfig config_;
  const std::string name_;
  std::mutex mu_;
  std::shared_ptr<ssl::context> current_;
  std::vector<FileStamp> stamp_;
  Clock::time_point last_check_;
};

struct HandlerEntry {
  Handler sync;
  AsyncHandler async;
};

struct HostPort {
  std::string host;
  std::string port;
};

HostPort splitAddress(const std::string& name, const std::string& address) {
  auto pos = address.rfind(':');
  if (pos == std::string::npos) {
    throw std::runtime_error(
        fmt::format("http server {}: address '{}' has no port (want host:port)", name, address));
  }
  HostPort hp{address.substr(0, pos), address.substr(pos + 1)};
  if (hp.host.size() >= 2 && hp.host.front() == '[' && hp.host.back() == ']') {
    hp.host = hp.host.substr(1, hp.host.size() - 2);
  }
  unsigned port = 0;
  auto [end, err] = std::from_chars(hp.port.data(), hp.port.data() + hp.port.size(), port);
  if (hp.port.empty() || err != std::errc() || end != hp.port.data() + hp.port.size() ||
      port > 65535) {
    throw std::runtime_error(
        fmt::format("http server {}: address '{}' has an invalid port", name, address));
  }
  return hp;
}

}  // namespace

namespace detail {

class SessionBase;

struct ServerState : std::enable_shared_from_this<ServerState> {
  ServerState(net::io_context& io_context, ServerOptions opts)
      : io(io_context),
        options(std::move(opts)),
        strand(net::make_strand(io_context)),
        acceptor(strand),
        retry_timer(strand),
        requests(metrics::Registry::global().counter(
            "koord_http_server_requests_total",
            "HTTP requests answered, by server, registered path and status code.",
            {"server", "path", "code"})),
        durations(metrics::Registry::global().histogram(
            "koord_http_server_request_duration_seconds",
            "Time from the first byte of an HTTP request to the end of its response.",
            {"server", "path"})) {}

  void registerHandler(std::string path, HandlerEntry entry) {
    if (started.load()) {
      throw std::logic_error(fmt::format("http server {}: handler for {} registered after start()",
                                         options.name, path));
    }
    if (path.empty() || path.front() != '/') {
      throw std::logic_error(
          fmt::format("http server {}: handler path '{}' must start with '/'", options.name, path));
    }
    auto [it, inserted] = handlers.emplace(std::move(path), std::move(entry));
    if (!inserted) {
      throw std::logic_error(
          fmt::format("http server {}: two handlers for {}", options.name, it->first));
    }
  }

  void listen();
  bool tryListen(const tcp::endpoint& ep, bool dual_stack, beast::error_code& ec);
  void doAccept();
  void onAccept(beast::error_code ec, tcp::socket socket);
  void accepted(tcp::socket socket);
  void record(const std::string& path, int status, Clock::duration elapsed);
  // Called from any connection's strand, hence atomic rather than shouldWarn's strand-bound
  // time point.
  bool shouldWarnBusy() {
    auto now = Clock::now().time_since_epoch().count();
    auto last = last_busy_warning.load();
    auto interval = std::chrono::duration_cast<Clock::duration>(kWarnInterval).count();
    if (last != 0 && now - last < interval)
      return false;
    return last_busy_warning.compare_exchange_strong(last, now);
  }
  bool shouldWarn(Clock::time_point& last) {
    auto now = Clock::now();
    if (now - last < kWarnInterval && last != Clock::time_point{})
      return false;
    last = now;
    return true;
  }

  net::io_context& io;
  const ServerOptions options;
  std::unordered_map<std::string, HandlerEntry> handlers;  // frozen by start()
  std::unique_ptr<TlsContextProvider> tls;
  net::strand<net::io_context::executor_type> strand;  // acceptor and retry_timer live on it
  tcp::acceptor acceptor;
  net::steady_timer retry_timer;
  std::atomic<bool> started{false};
  std::atomic<bool> stopping{false};
  std::atomic<std::uint16_t> port{0};
  std::atomic<std::size_t> accepted_count{0};
  std::atomic<std::size_t> body_bytes_in_flight{0};
  std::atomic<Clock::rep> last_busy_warning{0};
  mutable std::mutex sessions_mu;
  std::unordered_map<SessionBase*, std::weak_ptr<SessionBase>> sessions;
  metrics::CounterFamily& requests;
  metrics::HistogramFamily& durations;
  std::unordered_map<std::string, metrics::Histogram*> duration_by_path;  // frozen by start()
  Clock::time_point last_refusal_warning;                                 // on strand
  Clock::time_point last_accept_error;                                    // on strand
};

// The body bytes one request holds against max_body_bytes_in_flight. An async handler's `done`
// shares it, so a handler still running after its deadline keeps its request counted.
class BodyReservation {
 public:
  explicit BodyReservation(std::shared_ptr<ServerState> server) : server_(std::move(server)) {}
  ~BodyReservation() { server_->body_bytes_in_flight.fetch_sub(bytes_); }
  BodyReservation(const BodyReservation&) = delete;
  BodyReservation& operator=(const BodyReservation&) = delete;

  /// Grows the reservation to `total` bytes; false, with nothing taken, past the bound.
  bool growTo(std::size_t total) {
    if (total <= bytes_)
      return true;
    const std::size_t more = total - bytes_;
    const std::size_t bound = server_->options.max_body_bytes_in_flight;
    auto& in_flight = server_->body_bytes_in_flight;
    std::size_t current = in_flight.load();
    do {
      if (bound != 0 && (current > bound || bound - current < more))
        return false;
    } while (!in_flight.compare_exchange_weak(current, current + more));
    bytes_ = total;
    return true;
  }

 private:
  std::shared_ptr<ServerState> server_;
  std::size_t bytes_ = 0;
};

class SessionBase : public std::enable_shared_from_this<SessionBase> {
 public:
  explicit SessionBase(std::shared_ptr<ServerState> server) : server_(std::move(server)) {}
  virtual ~SessionBase() {
    std::lock_guard lock(server_->sessions_mu);
    server_->sessions.erase(this);
  }
  SessionBase(const SessionBase&) = delete;
  SessionBase& operator=(const SessionBase&) = delete;

  virtual void start() = 0;
  /// Thread-safe: closes the connection if it is between requests.
  virtual void stopIfIdle() = 0;

 protected:
  std::shared_ptr<ServerState> server_;
};

namespace {

using PlainStream = beast::tcp_stream;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

template <class Stream>
class Session final : public SessionBase {
  static constexpr bool kTls = std::is_same_v<Stream, TlsStream>;

 public:
  Session(std::shared_ptr<ServerState> server, tcp::socket&& socket, std::string remote,
          std::shared_ptr<ssl::context> tls_ctx)
      : SessionBase(std::move(server)),
        tls_ctx_(std::move(tls_ctx)),
        stream_(makeStream(std::move(socket), tls_ctx_.get())),
        handler_timer_(stream_.get_executor()),
        remote_(std::move(remote)) {}

  void start() override {
    net::dispatch(stream_.get_executor(), beast::bind_front_handler(&Session::onStart, self()));
  }

  void stopIfIdle() override {
    net::post(stream_.get_executor(), [self = self()] {
      if (self->phase_ == Phase::kIdle || self->phase_ == Phase::kHandshake)
        self->close();
    });
  }

 private:
  enum class Phase { kHandshake, kIdle, kReading, kHandling, kWriting, kClosing, kClosed };

  static Stream makeStream(tcp::socket&& socket, ssl::context* ctx) {
    if constexpr (kTls) {
      return Stream(std::move(socket), *ctx);
    } else {
      return Stream(std::move(socket));
    }
  }

  std::shared_ptr<Session> self() { return std::static_pointer_cast<Session>(shared_from_this()); }
  beast::tcp_stream& lowest() { return beast::get_lowest_layer(stream_); }
  const std::string& name() const { return server_->options.name; }

  void onStart() {
    if (server_->stopping.load())
      return close();
    // The first request counts from accept, so a client that connects and stays silent holds
    // its slot for request_deadline, not idle_timeout.
    deadline_ = Clock::now() + server_->options.request_deadline;
    if constexpr (kTls) {
      phase_ = Phase::kHandshake;
      lowest().expires_at(deadline_);
      stream_.async_handshake(ssl::stream_base::server,
                              beast::bind_front_handler(&Session::onHandshake, self()));
    } else {
      readIdle();
    }
  }

  void onHandshake(beast::error_code ec) {
    if (ec) {
      KOORD_VLOG(1, "http server {}: TLS handshake with {} failed: {}", name(), remote_,
                 ec.message());
      return close();
    }
    readIdle();
  }

  // Waits for the first byte of the next request under idle_timeout; the request deadline
  // starts only once the client begins a request.
  void readIdle() {
    phase_ = Phase::kIdle;
    if (server_->stopping.load())
      return close();
    if (buffer_.size() > 0)
      return beginRequest();  // pipelined
    if (first_request_) {
      lowest().expires_at(deadline_);
    } else {
      lowest().expires_after(server_->options.idle_timeout);
    }
    stream_.async_read_some(buffer_.prepare(kReadChunk),
                            beast::bind_front_handler(&Session::onIdleRead, self()));
  }

  void onIdleRead(beast::error_code ec, std::size_t n) {
    if (ec) {
      if (ec == beast::error::timeout) {
        KOORD_VLOG(3, "http server {}: closing idle connection from {}", name(), remote_);
      } else if (ec != net::error::eof && ec != net::error::operation_aborted &&
                 ec != ssl::error::stream_truncated) {
        KOORD_VLOG(2, "http server {}: reading from {}: {}", name(), remote_, ec.message());
      }
      return close();
    }
    buffer_.commit(n);
    beginRequest();
  }

  void beginRequest() {
    phase_ = Phase::kReading;
    if (!first_request_)
      deadline_ = Clock::now() + server_->options.request_deadline;
    first_request_ = false;
    started_ = Clock::now();
    metric_path_ = "other";
    head_ = false;
    parser_.emplace();
    parser_->header_limit(kHeaderLimit);
    parser_->body_limit(server_->options.body_limit);
    lowest().expires_at(deadline_);
    bhttp::async_read_header(stream_, buffer_, *parser_,
                             beast::bind_front_handler(&Session::onHeader, self()));
  }

  void onHeader(beast::error_code ec, std::size_t) {
    if (ec)
      return onReadError(ec);
    auto& msg = parser_->get();
    version_ = msg.version();
    head_ = msg.method() == bhttp::verb::head;
    keep_alive_ = msg.keep_alive();

    // Origin form ("/a?b") is parsed as such so that "//a" stays a path, not an authority;
    // absolute form ("http://h/a") is what proxies send.
    auto target = msg.target();
    auto url = !target.empty() && target.front() == '/' ? boost::urls::parse_origin_form(target)
                                                        : boost::urls::parse_absolute_uri(target);
    if (!url) {
      KOORD_VLOG(1, "http server {}: bad request target from {}", name(), remote_);
      return respondError(400, "malformed request target\n");
    }
    path_ = url->path();
    if (path_.empty())
      path_ = "/";
    query_ = std::string(url->encoded_query());
    if (server_->handlers.count(path_))
      metric_path_ = path_;

    if (auto len = parser_->content_length(); len && *len > server_->options.body_limit) {
      KOORD_VLOG(1, "http server {}: {} bytes of body from {} exceed the limit", name(), *len,
                 remote_);
      return respondError(413, "request body too large\n");
    }
    // Before the body parser starts: it allocates Content-Length bytes up front.
    if (auto len = parser_->content_length(); len && *len > 0 && !reserveBody(*len))
      return refuseBusy();
    if (!parser_->is_done() && equalsIgnoreCase(msg[bhttp::field::expect], "100-continue")) {
      continue_ = fmt::format("HTTP/1.{} 100 Continue\r\n\r\n", version_ == 10 ? 0 : 1);
      net::async_write(stream_, net::buffer(continue_),
                       beast::bind_front_handler(&Session::onContinueWritten, self()));
      return;
    }
    readBody();
  }

  void onContinueWritten(beast::error_code ec, std::size_t) {
    if (ec)
      return onReadError(ec);
    readBody();
  }

  // Piece by piece rather than async_read, so that a chunked body is counted against
  // max_body_bytes_in_flight as it grows.
  void readBody() {
    if (parser_->is_done())
      return onRequest();
    bhttp::async_read_some(stream_, buffer_, *parser_,
                           beast::bind_front_handler(&Session::onBody, self()));
  }

  void onBody(beast::error_code ec, std::size_t) {
    if (ec)
      return onReadError(ec);
    if (!reserveBody(parser_->get().body().size()))
      return refuseBusy();
    readBody();
  }

  bool reserveBody(std::size_t total) {
    if (!body_)
      body_ = std::make_shared<BodyReservation>(server_);
    return body_->growTo(total);
  }

  void refuseBusy() {
    if (server_->shouldWarnBusy()) {
      KOORD_LOG_WARNING(
          "http server {}: {} body bytes in flight (max_body_bytes_in_flight {}); refusing {} "
          "from {} with 503",
          name(), server_->body_bytes_in_flight.load(), server_->options.max_body_bytes_in_flight,
          path_, remote_);
    }
    body_.reset();
    Response r = text(503, "too many request bodies in flight, retry later\n");
    r.headers.emplace_back("Retry-After", "1");
    // The body stays unread, so the connection cannot carry another request.
    respond(std::move(r), /*force_close=*/true);
  }

  void onReadError(beast::error_code ec) {
    if (ec == bhttp::error::body_limit) {
      KOORD_VLOG(1, "http server {}: body from {} exceeds the limit", name(), remote_);
      return respondError(413, "request body too large\n");
    }
    if (ec == bhttp::error::header_limit) {
      KOORD_VLOG(1, "http server {}: headers from {} exceed the limit", name(), remote_);
      return respondError(431, "request header fields too large\n");
    }
    if (ec == beast::error::timeout) {
      KOORD_VLOG(1, "http server {}: closing connection from {}: request not complete within {}ms",
                 name(), remote_, server_->options.request_deadline.count());
      return close();
    }
    if (ec == bhttp::error::end_of_stream || ec == bhttp::error::partial_message ||
        ec == net::error::eof || ec == net::error::operation_aborted ||
        ec == ssl::error::stream_truncated) {
      KOORD_VLOG(2, "http server {}: {} closed the connection mid-request", name(), remote_);
      return close();
    }
    if (isHttpParseError(ec)) {
      KOORD_VLOG(1, "http server {}: malformed request from {}: {}", name(), remote_, ec.message());
      return respondError(400, "malformed request\n");
    }
    KOORD_VLOG(2, "http server {}: reading request from {}: {}", name(), remote_, ec.message());
    close();
  }

  void onRequest() {
    phase_ = Phase::kHandling;
    Request req;
    auto& msg = parser_->get();
    req.method = std::string(msg.method_string());
    req.target = std::string(msg.target());
    req.path = path_;
    req.query = query_;
    for (const auto& field : msg) {
      req.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
    }
    req.body = std::move(msg.body());
    req.remote = remote_;
    parser_.reset();

    auto it = server_->handlers.find(req.path);
    if (it == server_->handlers.end())
      return respond(text(404, "404 page not found\n"));
    if (it->second.async)
      return runAsync(it->second.async, std::move(req));

    Response res;
    try {
      res = it->second.sync(req);
    } catch (const std::exception& e) {
      KOORD_LOG_ERROR("http server {}: handler for {} {} from {} threw: {}", name(), req.method,
                      req.path, remote_, e.what());
      res = text(500, "internal server error\n");
    } catch (...) {
      KOORD_LOG_ERROR("http server {}: handler for {} {} from {} threw a non-exception", name(),
                      req.method, req.path, remote_);
      res = text(500, "internal server error\n");
    }
    respond(std::move(res));
  }

  void runAsync(const AsyncHandler& handler, Request req) {
    auto seq = ++seq_;
    auto called = std::make_shared<std::atomic<bool>>(false);
    handler_timer_.expires_at(deadline_);
    handler_timer_.async_wait(beast::bind_front_handler(&Session::onHandlerDeadline, self(), seq));
    std::string method = req.method;
    // `body` rides along only to keep the request's bytes counted while the handler holds it.
    std::function<void(Response)> done = [self = self(), seq, called, body = body_](Response res) {
      if (called->exchange(true)) {
        KOORD_LOG_ERROR("http server {}: async handler answered {} twice; second answer dropped",
                        self->name(), self->path_);
        return;
      }
      // Always posted, never run inline: the handler may call done() from inside itself.
      auto ex = self->stream_.get_executor();
      net::post(ex, [self = std::move(self), seq, res = std::move(res)]() mutable {
        self->onAsyncDone(seq, std::move(res));
      });
    };
    try {
      handler(std::move(req), std::move(done));
    } catch (const std::exception& e) {
      KOORD_LOG_ERROR("http server {}: async handler for {} {} from {} threw: {}", name(), method,
                      path_, remote_, e.what());
      if (!called->exchange(true))
        failAsync(seq);
    } catch (...) {
      KOORD_LOG_ERROR("http server {}: async handler for {} {} from {} threw a non-exception",
                      name(), method, path_, remote_);
      if (!called->exchange(true))
        failAsync(seq);
    }
  }

  void failAsync(std::uint64_t seq) {
    if (seq != seq_ || phase_ != Phase::kHandling)
      return;
    ++seq_;
    handler_timer_.cancel();
    respond(text(500, "internal server error\n"));
  }

  void onAsyncDone(std::uint64_t seq, Response res) {
    if (seq != seq_ || phase_ != Phase::kHandling) {
      KOORD_VLOG(1, "http server {}: dropping late answer for {} to {}", name(), path_, remote_);
      return;
    }
    ++seq_;
    handler_timer_.cancel();
    respond(std::move(res));
  }

  void onHandlerDeadline(std::uint64_t seq, beast::error_code ec) {
    if (ec || seq != seq_ || phase_ != Phase::kHandling)
      return;
    ++seq_;
    KOORD_LOG_WARNING("http server {}: handler for {} from {} did not answer within {}ms", name(),
                      path_, remote_, server_->options.request_deadline.count());
    respond(text(503, "handler timed out\n"), /*force_close=*/true,
            Clock::now() + kLateWriteWindow);
  }

  void respondError(int status, std::string body) {
    respond(text(status, std::move(body)), /*force_close=*/true);
  }

  void respond(Response r, bool force_close = false,
               std::optional<Clock::time_point> write_deadline = std::nullopt) {
    phase_ = Phase::kWriting;
    int status = r.status;
    if (status < 100 || status > 999) {
      KOORD_LOG_ERROR("http server {}: handler for {} returned invalid status {}; sending 500",
                      name(), path_, status);
      r = text(500, "internal server error\n");
      status = 500;
    }
    res_ = {};
    res_.version(version_ == 10 ? 10 : 11);
    res_.result(static_cast<unsigned>(status));
    std::string_view reason = reasonPhrase(status);
    res_.reason(reason.empty() ? std::string_view("Unknown") : reason);
    res_.set(bhttp::field::date, httpDate());
    res_.set(bhttp::field::server, "koord");
    bool close_after = force_close;
    for (const auto& [key, value] : r.headers) {
      if (key.find_first_of("\r\n:") != std::string::npos ||
          value.find_first_of("\r\n") != std::string::npos) {
        KOORD_LOG_ERROR("http server {}: handler for {} set an invalid header '{}'; dropped",
                        name(), path_, key);
        continue;
      }
      if (equalsIgnoreCase(key, "Content-Length") || equalsIgnoreCase(key, "Transfer-Encoding"))
        continue;
      if (equalsIgnoreCase(key, "Connection")) {
        if (icontains(value, "close"))
          close_after = true;
        continue;
      }
      res_.insert(key, value);
    }
    keep_alive_ = keep_alive_ && !close_after && !server_->stopping.load();
    res_.keep_alive(keep_alive_);
    bool bodiless = status < 200 || status == 204 || status == 304;
    if (!bodiless && !r.content_type.empty()) {
      res_.set(bhttp::field::content_type, r.content_type);
    }
    if (bodiless) {
      // No body and no Content-Length, as RFC 9110 requires for these codes.
    } else if (head_) {
      res_.content_length(r.body.size());
    } else {
      res_.body() = std::move(r.body);
      res_.prepare_payload();
    }
    status_ = status;
    lowest().expires_at(write_deadline.value_or(deadline_));
    bhttp::async_write(stream_, res_, beast::bind_front_handler(&Session::onWrite, self()));
  }

  void onWrite(beast::error_code ec, std::size_t) {
    auto elapsed = Clock::now() - started_;
    server_->record(metric_path_, status_, elapsed);
    KOORD_VLOG(4, "http server {}: {} {} {} {}us", name(), remote_, path_, status_,
               std::chrono::duration_cast<std::chrono::microseconds>(elapsed).count());
    res_ = {};
    body_.reset();
    if (ec) {
      KOORD_VLOG(2, "http server {}: writing response to {}: {}", name(), remote_, ec.message());
      return close();
    }
    if (!keep_alive_)
      return gracefulClose();
    readIdle();
  }

  void gracefulClose() {
    phase_ = Phase::kClosing;
    lowest().expires_after(kLingerTime);
    if constexpr (kTls) {
      stream_.async_shutdown(beast::bind_front_handler(&Session::onShutdown, self()));
    } else {
      beast::error_code ec;
      lowest().socket().shutdown(tcp::socket::shutdown_send, ec);
      linger();
    }
  }

  void onShutdown(beast::error_code) { close(); }

  void linger() {
    stream_.async_read_some(buffer_.prepare(kReadChunk),
                            beast::bind_front_handler(&Session::onLinger, self()));
  }

  void onLinger(beast::error_code ec, std::size_t n) {
    linger_bytes_ += n;
    if (ec || linger_bytes_ > kLingerBytes)
      return close();
    linger();
  }

  void close() {
    phase_ = Phase::kClosed;
    body_.reset();
    handler_timer_.cancel();
    beast::error_code ec;
    lowest().socket().shutdown(tcp::socket::shutdown_both, ec);
    lowest().close();
  }

  std::shared_ptr<ssl::context> tls_ctx_;  // keeps the context this handshake used alive
  Stream stream_;
  net::steady_timer handler_timer_;
  std::string remote_;
  beast::flat_buffer buffer_;
  std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
  std::shared_ptr<BodyReservation> body_;  // the current request's, if it has a body
  bhttp::response<bhttp::string_body> res_;
  std::string continue_;
  Phase phase_ = Phase::kHandshake;
  bool first_request_ = true;
  bool keep_alive_ = true;
  bool head_ = false;
  unsigned version_ = 11;
  int status_ = 0;
  std::string path_;
  std::string query_;
  std::string metric_path_ = "other";
  Clock::time_point deadline_;
  Clock::time_point started_;
  std::uint64_t seq_ = 0;
  std::size_t linger_bytes_ = 0;
};

}  // namespace

void ServerState::record(const std::string& path, int status, Clock::duration elapsed) {
  requests.with({options.name, path, std::to_string(status)}).inc();
  auto it = duration_by_path.find(path);
  if (it != duration_by_path.end()) {
    it->second->observe(std::chrono::duration<double>(elapsed).count());
  }
}

bool ServerState::tryListen(const tcp::endpoint& ep, bool dual_stack, beast::error_code& ec) {
  beast::error_code ignored;
  acceptor.close(ignored);
  acceptor.open(ep.protocol(), ec);
  if (ec)
    return false;
  acceptor.set_option(net::socket_base::reuse_address(true), ignored);
  if (dual_stack)
    acceptor.set_option(net::ip::v6_only(false), ignored);
  acceptor.bind(ep, ec);
  if (!ec)
    acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    acceptor.close(ignored);
    return false;
  }
  return true;
}

void ServerState::listen() {
  HostPort hp = splitAddress(options.name, options.address);
  auto port_number = static_cast<std::uint16_t>(std::stoi(hp.port));
  beast::error_code ec;
  bool ok = false;
  if (hp.host.empty()) {
    // All interfaces: IPv6 dual-stack where the host has IPv6, IPv4 otherwise.
    ok = tryListen(tcp::endpoint(net::ip::address_v6::any(), port_number), true, ec) ||
         tryListen(tcp::endpoint(net::ip::address_v4::any(), port_number), false, ec);
  } else if (auto addr = net::ip::make_address(hp.host, ec); !ec) {
    ok = tryListen(tcp::endpoint(addr, port_number), false, ec);
  } else {
    tcp::resolver resolver(io);
    auto results = resolver.resolve(hp.host, hp.port, ec);
    for (const auto& entry : results) {
      if ((ok = tryListen(entry.endpoint(), false, ec)))
        break;
    }
    if (!ok && !ec)
      ec = net::error::host_not_found;
  }
  if (!ok) {
    throw std::runtime_error(fmt::format("http server {}: cannot listen on {}: {}", options.name,
                                         options.address, ec.message()));
  }
  auto local = acceptor.local_endpoint(ec);
  port.store(local.port());
  KOORD_LOG_INFO("http server {}: serving {} on {}", options.name, tls ? "https" : "http",
                 endpointString(local));
}

void ServerState::doAccept() {
  acceptor.async_accept(net::make_strand(io),
                        beast::bind_front_handler(&ServerState::onAccept, shared_from_this()));
}

void ServerState::onAccept(beast::error_code ec, tcp::socket socket) {
  if (ec == net::error::operation_aborted || !acceptor.is_open())
    return;
  if (ec) {
    if (ec == net::error::connection_aborted) {
      KOORD_VLOG(2, "http server {}: connection aborted before accept", options.name);
      return doAccept();
    }
    // Typically EMFILE; pausing lets connections close instead of spinning on the error.
    if (shouldWarn(last_accept_error)) {
      KOORD_LOG_ERROR("http server {}: accept failed: {}; retrying", options.name, ec.message());
    }
    retry_timer.expires_after(kAcceptRetryDelay);
    retry_timer.async_wait([self = shared_from_this()](beast::error_code wait_ec) {
      if (!wait_ec && !self->stopping.load())
        self->doAccept();
    });
    return;
  }
  try {
    accepted(std::move(socket));
  } catch (const std::exception& e) {
    KOORD_LOG_ERROR("http server {}: setting up a connection failed: {}", options.name, e.what());
  }
  doAccept();
}

void ServerState::accepted(tcp::socket socket) {
  beast::error_code ec;
  if (stopping.load())
    return;
  accepted_count.fetch_add(1);
  auto remote_ep = socket.remote_endpoint(ec);
  std::string remote = ec ? std::string("unknown") : endpointString(remote_ep);
  std::size_t active;
  {
    std::lock_guard lock(sessions_mu);
    active = sessions.size();
  }
  if (active >= options.max_connections) {
    if (shouldWarn(last_refusal_warning)) {
      KOORD_LOG_WARNING("http server {}: {} connections open (max_connections); refusing {}",
                        options.name, active, remote);
    }
    socket.close(ec);
    return;
  }
  socket.set_option(tcp::no_delay(true), ec);
  std::shared_ptr<SessionBase> session;
  if (tls) {
    session = std::make_shared<Session<TlsStream>>(shared_from_this(), std::move(socket),
                                                   std::move(remote), tls->current());
  } else {
    session = std::make_shared<Session<PlainStream>>(shared_from_this(), std::move(socket),
                                                     std::move(remote), nullptr);
  }
  {
    std::lock_guard lock(sessions_mu);
    sessions.emplace(session.get(), session);
  }
  session->start();
}

}  // namespace detail

Server::Server(net::io_context& io, ServerOptions options)
    : state_(std::make_shared<detail::ServerState>(io, std::move(options))) {}

Server::~Server() {
  stop();
}

void Server::handle(std::string path, Handler handler) {
  state_->registerHandler(std::move(path), {std::move(handler), nullptr});
}

void Server::handleAsync(std::string path, AsyncHandler handler) {
  state_->registerHandler(std::move(path), {nullptr, std::move(handler)});
}

void Server::start() {
  auto& s = *state_;
  if (s.started.load() || s.stopping.load()) {
    throw std::logic_error(fmt::format("http server {}: start() called twice", s.options.name));
  }
  if (s.options.max_body_bytes_in_flight != 0 &&
      s.options.max_body_bytes_in_flight < s.options.body_limit) {
    throw std::logic_error(fmt::format(
        "http server {}: max_body_bytes_in_flight {} is below body_limit {}: bodies between the "
        "two could never be served",
        s.options.name, s.options.max_body_bytes_in_flight, s.options.body_limit));
  }
  if (s.options.tls)
    s.tls = std::make_unique<TlsContextProvider>(*s.options.tls, s.options.name);
  s.listen();
  for (const auto& [path, entry] : s.handlers) {
    s.duration_by_path[path] = &s.durations.with({s.options.name, path});
  }
  s.duration_by_path["other"] = &s.durations.with({s.options.name, "other"});
  s.started.store(true);
  net::post(s.strand, [state = state_] { state->doAccept(); });
}

std::uint16_t Server::port() const {
  return state_->port.load();
}

void Server::stop() {
  auto& s = *state_;
  if (!s.started.load() || s.stopping.exchange(true))
    return;
  KOORD_LOG_INFO("http server {}: stopping", s.options.name);
  net::post(s.strand, [state = state_] {
    beast::error_code ec;
    state->acceptor.close(ec);
    state->retry_timer.cancel();
  });
  std::vector<std::shared_ptr<detail::SessionBase>> live;
  {
    std::lock_guard lock(s.sessions_mu);
    for (auto& [ptr, weak] : s.sessions) {
      if (auto session = weak.lock())
        live.push_back(std::move(session));
    }
  }
  for (auto& session : live)
    session->stopIfIdle();
}

std::size_t Server::connectionsAccepted() const {
  return state_->accepted_count.load();
}

std::size_t Server::activeConnections() const {
  std::lock_guard lock(state_->sessions_mu);
  return state_->sessions.size();
}

std::size_t Server::bodyBytesInFlight() const {
  return state_->body_bytes_in_flight.load();
}

}  // namespace koord::http
