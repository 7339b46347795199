#include "koord/kube/rest_client.h"

#include <fmt/format.h>
#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>
#include <boost/throw_exception.hpp>

#include <cctype>
#include <charconv>
#include <fstream>
#include <future>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "koord/core/metrics.h"
#include "koord/http/client.h"
#include "koord/kube/json_limits.h"
#include "koord/kube/list_decoder.h"
#include "koord/kube/rate_limiter.h"

namespace koord::kube {

namespace json = boost::json;

[[noreturn]] void throw_exception_from_error(const ApiError& e, const boost::source_location& loc) {
  boost::throw_exception(
      std::runtime_error(fmt::format("API error {} {}: {}", e.code, e.reason, e.message)), loc);
}

namespace {

// RFC 3986 unreserved characters pass; everything else is %XX. Used for path segments and
// query values alike (a '+' in a query must not read as a space).
std::string escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

void addQuery(std::string& q, std::string_view key, std::string_view value) {
  if (value.empty())
    return;
  q += q.empty() ? '?' : '&';
  q += key;
  q += '=';
  q += escape(value);
}

std::string writeQuery(const WriteOptions& o) {
  std::string q;
  addQuery(q, "fieldManager", o.field_manager);
  if (o.dry_run)
    addQuery(q, "dryRun", "All");
  return q;
}

std::string listQuery(const ListOptions& o) {
  std::string q;
  addQuery(q, "labelSelector", o.label_selector);
  addQuery(q, "fieldSelector", o.field_selector);
  if (o.limit > 0)
    addQuery(q, "limit", std::to_string(o.limit));
  addQuery(q, "continue", o.continue_);
  addQuery(q, "resourceVersion", o.resource_version);
  if (o.timeout_seconds)
    addQuery(q, "timeoutSeconds", std::to_string(*o.timeout_seconds));
  return q;
}

// client-go's reasonForError when the body is not a Status (a proxy's page, an empty 429).
std::string reasonForCode(int code) {
  switch (code) {
    case 400:
      return "BadRequest";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "NotFound";
    case 405:
      return "MethodNotAllowed";
    case 406:
      return "NotAcceptable";
    case 409:
      return "Conflict";
    case 410:
      return "Gone";
    case 413:
      return "RequestEntityTooLarge";
    case 415:
      return "UnsupportedMediaType";
    case 422:
      return "Invalid";
    case 429:
      return "TooManyRequests";
    case 500:
      return "InternalError";
    case 503:
      return "ServiceUnavailable";
    case 504:
      return "Timeout";
    default:
      return "Unknown";
  }
}

ApiError transportError(std::string message) {
  ApiError e;
  e.message = std::move(message);
  return e;
}

ApiResult<json::value> toResult(const std::string& what, const http::Response& r,
                                json::storage_ptr storage = {}) {
  json::value body(storage);
  boost::system::error_code ec;
  if (!r.body.empty())
    body = json::parse(r.body, ec, storage, apiObjectParseOptions());
  if (r.status >= 200 && r.status < 300) {
    if (ec)
      return transportError(
          fmt::format("{}: {} response is not JSON: {}", what, r.status, ec.message()));
    return body;
  }
  ApiError e;
  e.code = r.status;
  const json::object* status = nullptr;
  if (!ec && body.is_object()) {
    const auto& o = body.get_object();
    if (const auto* kind = o.if_contains("kind"); kind && kind->is_string() && *kind == "Status")
      status = &o;
  }
  if (status != nullptr) {
    if (const auto* v = status->if_contains("reason"); v && v->is_string())
      e.reason = v->get_string();
    if (const auto* v = status->if_contains("message"); v && v->is_string())
      e.message = v->get_string();
    if (const auto* d = status->if_contains("details"); d && d->is_object()) {
      if (const auto* s = d->get_object().if_contains("retryAfterSeconds"); s && s->is_int64())
        e.retry_after = std::chrono::seconds(s->get_int64());
    }
    e.status = body;
  }
  if (e.reason.empty())
    e.reason = reasonForCode(r.status);
  if (e.message.empty()) {
    std::string text = r.body.substr(0, 512);
    e.message = text.empty() ? fmt::format("{}: the server answered {}", what, r.status)
                             : fmt::format("{}: the server answered {}: {}", what, r.status, text);
  }
  // The header wins over details: it is what the server's rate limiter actually set.
  if (auto h = r.header("Retry-After"); !h.empty()) {
    long long secs = 0;
    auto [ptr, err] = std::from_chars(h.data(), h.data() + h.size(), secs);
    if (err == std::errc() && ptr == h.data() + h.size() && secs >= 0)
      e.retry_after = std::chrono::seconds(secs);
  }
  return e;
}

constexpr std::size_t kMaxConnsPerHost = 64;

http::ClientOptions clientOptions(const RestConfig& c) {
  http::ClientOptions o;
  o.ca_file = c.ca_file;
  o.ca_pem = c.ca_pem;
  o.client_cert_file = c.client_cert_file;
  o.client_key_file = c.client_key_file;
  o.client_cert_pem = c.client_cert_pem;
  o.client_key_pem = c.client_key_pem;
  o.insecure_skip_verify = c.insecure_skip_verify;
  o.server_name = c.tls_server_name;
  // client-go multiplexes every request over one HTTP/2 connection; over HTTP/1.1 a burst of
  // binds or status writes would open a connection (and a TLS handshake on both ends) per request
  // in flight. A fixed set, kept idle between bursts, costs a few handshakes in all.
  o.max_conns_per_host = kMaxConnsPerHost;
  o.max_idle_per_host = kMaxConnsPerHost;
  if (c.timeout.count() > 0)
    o.request_timeout = c.timeout;
  if (!c.user_agent.empty())
    o.user_agent = c.user_agent;
  return o;
}

}  // namespace

ApiResult<json::value> decodeApiResponse(const std::string& what, const http::Response& response) {
  return toResult(what, response);
}

std::string resourcePath(const ResourceRef& ref) {
  std::string p = ref.group.empty() ? "/api/" + escape(ref.version)
                                    : "/apis/" + escape(ref.group) + "/" + escape(ref.version);
  if (!ref.namespace_.empty())
    p += "/namespaces/" + escape(ref.namespace_);
  p += "/" + escape(ref.resource);
  if (!ref.name.empty())
    p += "/" + escape(ref.name);
  if (!ref.subresource.empty())
    p += "/" + escape(ref.subresource);
  return p;
}

namespace detail {

// client-go's rest_client_* series (k8s.io/component-base/metrics/prometheus/restclient), in the
// process's registry as client-go puts them in the legacy one: every client of every role.
struct ClientMetrics {
  metrics::HistogramFamily& latency;
  metrics::CounterFamily& results;
  metrics::HistogramFamily& limiter_wait;

  static ClientMetrics& get() {
    static const std::vector<double> buckets{0.005, 0.025, 0.1, 0.25, 0.5,  1.0,
                                             2.0,   4.0,   8.0, 15.0, 30.0, 60.0};
    static ClientMetrics m{
        metrics::Registry::global().histogram(
            "rest_client_request_duration_seconds",
            "Request latency in seconds. Broken down by verb, and host.", {"verb", "host"},
            buckets),
        metrics::Registry::global().counter(
            "rest_client_requests_total",
            "Number of HTTP requests, partitioned by status code, method, and host.",
            {"code", "method", "host"}),
        metrics::Registry::global().histogram(
            "rest_client_rate_limiter_duration_seconds",
            "Client side rate limiter latency in seconds. Broken down by verb, and host.",
            {"verb", "host"}, buckets),
    };
    return m;
  }
};

// The URL's host and port ("https://10.0.0.1:6443/x" -> "10.0.0.1:6443"), client-go's u.Host.
std::string hostOf(std::string_view url) {
  if (auto scheme = url.find("://"); scheme != std::string_view::npos)
    url.remove_prefix(scheme + 3);
  return std::string(url.substr(0, url.find('/')));
}

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

struct RestState : std::enable_shared_from_this<RestState> {
  RestState(boost::asio::io_context& io_in, RestConfig config_in)
      : io(io_in),
        config(std::move(config_in)),
        client(io_in, clientOptions(config)),
        limiter(config.qps, config.burst),
        token(config.bearer_token),
        host(hostOf(config.host)),
        metrics(ClientMetrics::get()) {
    if (!token.empty())
      token_read = std::chrono::steady_clock::now();
  }

  // The bearer token, re-read from its file at most once a minute (client-go's
  // cachingTokenSource). A failed re-read keeps the last good token.
  ApiResult<std::string> bearer() {
    std::lock_guard lock(token_mu);
    if (config.bearer_token_file.empty())
      return token;
    const auto now = std::chrono::steady_clock::now();
    if (!token.empty() && token_read && now - *token_read < std::chrono::minutes(1))
      return token;
    std::ifstream in(config.bearer_token_file, std::ios::binary);
    std::ostringstream text;
    if (in)
      text << in.rdbuf();
    if (!in || in.bad()) {
      if (!token.empty())
        return token;
      return transportError(
          fmt::format("cannot read the bearer token file {}", config.bearer_token_file));
    }
    std::string t = text.str();
    while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back())))
      t.pop_back();
    token = std::move(t);
    token_read = now;
    return token;
  }

  void send(std::string method, std::string target, std::string body, std::string content_type,
            RestClient::Callback done, json::storage_ptr storage = {}, WriteFence fence = {}) {
    limiter.asyncAcquire(
        io, [self = shared_from_this(), method = std::move(method), target = std::move(target),
             body = std::move(body), content_type = std::move(content_type), done = std::move(done),
             storage = std::move(storage), fence = std::move(fence),
             queued = std::chrono::steady_clock::now()](boost::system::error_code ec) mutable {
          self->metrics.limiter_wait.with({method, self->host}).observe(secondsSince(queued));
          if (ec) {
            done(transportError(
                fmt::format("{} {}: rate limiter wait failed: {}", method, target, ec.message())));
            return;
          }
          // Asked after the limiter's wait, which can be long: leadership may have ended in it.
          std::chrono::milliseconds timeout{0};
          if (fence) {
            const auto left = fence();
            if (left <= std::chrono::milliseconds(0)) {
              ApiError e;
              e.reason = "Fenced";
              e.message =
                  fmt::format("{} {}: not sent: this process no longer leads", method, target);
              done(std::move(e));
              return;
            }
            timeout =
                self->config.timeout.count() > 0 ? std::min(left, self->config.timeout) : left;
          }
          self->sendNow(std::move(method), std::move(target), std::move(body),
                        std::move(content_type), std::move(done), std::move(storage), timeout);
        });
  }

  ApiResult<http::ClientRequest> prepare(std::string method, const std::string& target) {
    http::ClientRequest req;
    req.method = std::move(method);
    req.url = config.host + target;
    req.headers.emplace_back("Accept", "application/json");
    auto t = bearer();
    if (!t)
      return t.error();
    if (!t->empty())
      req.headers.emplace_back("Authorization", "Bearer " + *t);
    return req;
  }

  void sendNow(std::string method, std::string target, std::string body, std::string content_type,
               RestClient::Callback done, json::storage_ptr storage,
               std::chrono::milliseconds timeout) {
    auto prepared = prepare(std::move(method), target);
    if (!prepared) {
      done(prepared.error());
      return;
    }
    http::ClientRequest req = std::move(*prepared);
    req.timeout = timeout;
    if (!content_type.empty())
      req.headers.emplace_back("Content-Type", std::move(content_type));
    req.body = std::move(body);
    std::string what = req.method + " " + target;
    std::string verb = req.method;
    client.send(
        std::move(req), [self = shared_from_this(), verb = std::move(verb), what = std::move(what),
                         done = std::move(done), storage = std::move(storage),
                         sent = std::chrono::steady_clock::now()](Result<http::Response> r) {
          self->metrics.latency.with({verb, self->host}).observe(secondsSince(sent));
          self->metrics.results.with({r ? std::to_string(r->status) : "<error>", verb, self->host})
              .inc();
          if (!r) {
            done(transportError(fmt::format("{}: {}", what, r.error().message())));
            return;
          }
          done(toResult(what, *r, storage));
        });
  }

  boost::asio::io_context& io;
  const RestConfig config;
  http::Client client;
  RateLimiter limiter;
  std::mutex token_mu;
  std::string token;
  std::optional<std::chrono::steady_clock::time_point> token_read;
  const std::string host;
  ClientMetrics& metrics;
};

}  // namespace detail

namespace {

// Runs an async verb and blocks for its answer.
template <typename Start>
ApiResult<json::value> blockOn(boost::asio::io_context& io, Start start) {
  if (io.get_executor().running_in_this_thread())
    return transportError(
        "RestClient: a ...Sync call on an io_context thread would deadlock; use the async form");
  // Shared with the callback: a caller that gives up (the io_context stopped, so the answer
  // can never come) must not leave the callback a dangling promise.
  auto promise = std::make_shared<std::promise<ApiResult<json::value>>>();
  auto future = promise->get_future();
  start([promise](ApiResult<json::value> r) { promise->set_value(std::move(r)); });
  while (future.wait_for(std::chrono::milliseconds(100)) != std::future_status::ready) {
    if (io.stopped())
      return transportError("RestClient: the io_context stopped before the answer came");
  }
  return future.get();
}

}  // namespace

RestClient::RestClient(boost::asio::io_context& io, RestConfig config)
    : state_(std::make_shared<detail::RestState>(io, std::move(config))) {}

RestClient::RestClient(std::shared_ptr<detail::RestState> state, WriteFence fence)
    : state_(std::move(state)), fence_(std::move(fence)) {}

std::unique_ptr<RestClient> RestClient::fenced(WriteFence fence) const {
  // Not make_unique: the constructor is private.
  return std::unique_ptr<RestClient>(new RestClient(state_, std::move(fence)));
}

RestClient::~RestClient() = default;

const RestConfig& RestClient::config() const {
  return state_->config;
}

ApiResult<http::ClientRequest> RestClient::prepareRequest(std::string method,
                                                          std::string path_and_query) const {
  return state_->prepare(std::move(method), path_and_query);
}

http::Client& RestClient::httpClient() const {
  return state_->client;
}

void RestClient::throttle(std::function<void(boost::system::error_code)> done) {
  state_->limiter.asyncAcquire(state_->io, std::move(done));
}

void RestClient::get(const ResourceRef& ref, const GetOptions& options, Callback done) {
  std::string q;
  addQuery(q, "resourceVersion", options.resource_version);
  state_->send("GET", resourcePath(ref) + q, "", "", std::move(done));
}

void RestClient::list(const ResourceRef& ref, const ListOptions& o, Callback done) {
  state_->send("GET", resourcePath(ref) + listQuery(o), "", "", std::move(done), o.storage);
}

void RestClient::listEach(const ResourceRef& ref, const ListOptions& o,
                          std::function<bool(const json::value& item)> on_item, Callback done) {
  std::string target = resourcePath(ref) + listQuery(o);
  throttle([state = state_, target = std::move(target), on_item = std::move(on_item),
            done = std::move(done)](boost::system::error_code ec) mutable {
    std::string what = "GET " + target;
    if (ec) {
      done(transportError(fmt::format("{}: rate limiter wait failed: {}", what, ec.message())));
      return;
    }
    auto req = state->prepare("GET", target);
    if (!req) {
      done(req.error());
      return;
    }
    // The list streams on a connection of its own; shared by the three callbacks, which run
    // serially on that connection.
    struct Listing {
      explicit Listing(std::function<bool(const json::value&)> sink) : decoder(std::move(sink)) {
        error.status = 0;  // no answer yet
      }
      ListDecoder decoder;
      http::Response error;  // a non-200 answer, body capped
      std::string failure;   // why decoding stopped
    };
    auto listing = std::make_shared<Listing>(std::move(on_item));
    state->client.stream(
        std::move(*req),
        [listing](int status, const http::Headers& headers) {
          listing->error.status = status;
          listing->error.headers = headers;
          return true;
        },
        [listing](std::string_view chunk) {
          if (listing->error.status != 200) {
            listing->error.body.append(chunk.substr(0, 65536));
            return listing->error.body.size() < 65536;
          }
          return listing->decoder.feed(chunk, listing->failure);
        },
        [listing, what = std::move(what), done = std::move(done)](boost::system::error_code ec) {
          if (listing->error.status != 0 && listing->error.status != 200) {
            done(toResult(what, listing->error));
            return;
          }
          if (!listing->failure.empty()) {
            done(transportError(fmt::format("{}: {}", what, listing->failure)));
            return;
          }
          if (ec) {
            done(transportError(fmt::format("{}: {}", what, ec.message())));
            return;
          }
          if (!listing->decoder.finish(listing->failure)) {
            done(transportError(fmt::format("{}: {}", what, listing->failure)));
            return;
          }
          done(listing->decoder.metadata().is_object() ? listing->decoder.metadata()
                                                       : json::value(json::object()));
        },
        state->config.timeout.count() > 0 ? state->config.timeout : std::chrono::seconds(60));
  });
}

void RestClient::create(const ResourceRef& ref, json::value body, Callback done,
                        const WriteOptions& options) {
  state_->send("POST", resourcePath(ref) + writeQuery(options), json::serialize(body),
               "application/json", std::move(done), {}, fence_);
}

void RestClient::update(const ResourceRef& ref, json::value body, Callback done,
                        const WriteOptions& options) {
  state_->send("PUT", resourcePath(ref) + writeQuery(options), json::serialize(body),
               "application/json", std::move(done), {}, fence_);
}

void RestClient::patch(const ResourceRef& ref, PatchType type, json::value patch, Callback done,
                       const WriteOptions& options) {
  const char* content_type = "application/merge-patch+json";
  switch (type) {
    case PatchType::kJsonPatch:
      content_type = "application/json-patch+json";
      break;
    case PatchType::kMergePatch:
      content_type = "application/merge-patch+json";
      break;
    case PatchType::kStrategicMergePatch:
      content_type = "application/strategic-merge-patch+json";
      break;
  }
  state_->send("PATCH", resourcePath(ref) + writeQuery(options), json::serialize(patch),
               content_type, std::move(done), {}, fence_);
}

void RestClient::remove(const ResourceRef& ref, const DeleteOptions& o, Callback done) {
  // The options travel as a DeleteOptions body, as client-go sends them.
  json::object body{{"kind", "DeleteOptions"}, {"apiVersion", "v1"}};
  if (o.uid || o.resource_version) {
    json::object pre;
    if (o.uid)
      pre["uid"] = *o.uid;
    if (o.resource_version)
      pre["resourceVersion"] = *o.resource_version;
    body["preconditions"] = std::move(pre);
  }
  if (o.propagation_policy)
    body["propagationPolicy"] = *o.propagation_policy;
  if (o.grace_period_seconds)
    body["gracePeriodSeconds"] = *o.grace_period_seconds;
  if (o.dry_run)
    body["dryRun"] = json::array{"All"};
  state_->send("DELETE", resourcePath(ref), json::serialize(body), "application/json",
               std::move(done), {}, fence_);
}

void RestClient::raw(std::string method, std::string path_and_query, std::string body,
                     std::string content_type, Callback done) {
  // A GET reads; anything else may write.
  WriteFence fence = method == "GET" ? WriteFence() : fence_;
  state_->send(std::move(method), std::move(path_and_query), std::move(body),
               std::move(content_type), std::move(done), {}, std::move(fence));
}

ApiResult<json::value> RestClient::getSync(const ResourceRef& ref, const GetOptions& options) {
  return blockOn(state_->io, [&](Callback cb) { get(ref, options, std::move(cb)); });
}
ApiResult<json::value> RestClient::listSync(const ResourceRef& ref, const ListOptions& options) {
  return blockOn(state_->io, [&](Callback cb) { list(ref, options, std::move(cb)); });
}
ApiResult<json::value> RestClient::createSync(const ResourceRef& ref, json::value body,
                                              const WriteOptions& options) {
  return blockOn(state_->io,
                 [&](Callback cb) { create(ref, std::move(body), std::move(cb), options); });
}
ApiResult<json::value> RestClient::updateSync(const ResourceRef& ref, json::value body,
                                              const WriteOptions& options) {
  return blockOn(state_->io,
                 [&](Callback cb) { update(ref, std::move(body), std::move(cb), options); });
}
ApiResult<json::value> RestClient::patchSync(const ResourceRef& ref, PatchType type, json::value p,
                                             const WriteOptions& options) {
  return blockOn(state_->io,
                 [&](Callback cb) { patch(ref, type, std::move(p), std::move(cb), options); });
}
ApiResult<json::value> RestClient::removeSync(const ResourceRef& ref,
                                              const DeleteOptions& options) {
  return blockOn(state_->io, [&](Callback cb) { remove(ref, options, std::move(cb)); });
}
ApiResult<json::value> RestClient::rawSync(std::string method, std::string path_and_query,
                                           std::string body, std::string content_type) {
  return blockOn(state_->io, [&](Callback cb) {
    raw(std::move(method), std::move(path_and_query), std::move(body), std::move(content_type),
        std::move(cb));
  });
}

}  // namespace koord::kube
