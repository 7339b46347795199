// Kubernetes REST verbs (get, list, create, update, patch, delete, subresources) over koord's
// pooled HTTP client, for any resource addressed generically, with errors that keep the Status.
#pragma once

#include <boost/assert/source_location.hpp>
#include <boost/json/value.hpp>
#include <boost/system/result.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "koord/http/client.h"
#include "koord/kube/kubeconfig.h"

namespace boost::asio {
class io_context;
}

namespace koord::kube {

/// A failed API call. The API server's metav1.Status is kept whole because callers branch on
/// its reason (NotFound, Conflict, AlreadyExists, Gone, Expired, Invalid, TooManyRequests).
struct ApiError {
  /// The HTTP status; 0 when no response came (connect, TLS, timeout, rate-limiter shutdown) or
  /// the response could not be read.
  int code = 0;
  /// Status.reason, or client-go's reason for the HTTP code when the body is not a Status.
  std::string reason;
  std::string message;
  /// From the Retry-After header or Status.details.retryAfterSeconds (429, some 5xx).
  std::optional<std::chrono::seconds> retry_after;
  /// The Status object as sent (details.causes says which fields were Invalid); null if none.
  boost::json::value status;
};

/// What result::value() throws through when the caller did not check: a programmer error.
[[noreturn]] void throw_exception_from_error(const ApiError& e, const boost::source_location& loc);

template <typename T>
using ApiResult = boost::system::result<T, ApiError>;

inline bool isNotFound(const ApiError& e) {
  return e.reason == "NotFound";
}
inline bool isConflict(const ApiError& e) {
  return e.reason == "Conflict";
}
inline bool isAlreadyExists(const ApiError& e) {
  return e.reason == "AlreadyExists";
}
/// A list's continue token or a watch's resourceVersion is too old (410).
inline bool isResourceExpired(const ApiError& e) {
  return e.reason == "Expired" || e.reason == "Gone";
}
inline bool isInvalid(const ApiError& e) {
  return e.reason == "Invalid";
}
inline bool isTooManyRequests(const ApiError& e) {
  return e.reason == "TooManyRequests";
}
/// A write a fenced client did not send: this process no longer leads (code 0).
inline bool isFenced(const ApiError& e) {
  return e.reason == "Fenced";
}

/// What the verbs make of an HTTP answer: the decoded JSON body on 2xx; otherwise an ApiError
/// from the body's Status (or client-go's reason for the code), retry_after from the
/// Retry-After header, else from Status.details.retryAfterSeconds. `what` prefixes messages.
ApiResult<boost::json::value> decodeApiResponse(const std::string& what,
                                                const http::Response& response);

/// A resource, a collection of it, or a subresource of one object. The core group is "".
struct ResourceRef {
  std::string group;
  std::string version;
  std::string resource;     // plural, lower case: "configmaps", "widgets"
  std::string namespace_;   // empty for cluster-scoped resources or all namespaces
  std::string name;         // empty for the collection (list, create)
  std::string subresource;  // "status", "binding", "eviction", "scale"
};

/// /api/v1/namespaces/ns/pods/name/status, /apis/apps/v1/deployments, ... (segments escaped).
std::string resourcePath(const ResourceRef& ref);

struct GetOptions {
  std::string resource_version;
};

struct ListOptions {
  std::string label_selector;
  std::string field_selector;
  std::int64_t limit = 0;  // 0 = no paging
  std::string continue_;
  std::string resource_version;
  std::optional<std::int64_t> timeout_seconds;
  /// Where the decoded list lives. A big list decoded into one monotonic_resource is faster to
  /// build and to free than one allocation per JSON node; default: the heap.
  boost::json::storage_ptr storage;
};

struct WriteOptions {
  std::string field_manager;
  bool dry_run = false;
};

struct DeleteOptions {
  /// Preconditions: the delete fails with 409 Conflict when the object's differ.
  std::optional<std::string> uid;
  std::optional<std::string> resource_version;
  /// "Orphan", "Background" or "Foreground".
  std::optional<std::string> propagation_policy;
  std::optional<std::int64_t> grace_period_seconds;
  bool dry_run = false;
};

enum class PatchType {
  kJsonPatch,            // application/json-patch+json (RFC 6902: an array of operations)
  kMergePatch,           // application/merge-patch+json (RFC 7386)
  kStrategicMergePatch,  // application/strategic-merge-patch+json (built-in types only)
};

namespace detail {
struct RestState;
}

/// What a fenced client asks before each write: how long the write may still take. Zero or less
/// refuses it. Called on io threads, concurrently.
using WriteFence = std::function<std::chrono::milliseconds()>;

/// Every request first waits on the config's QPS/burst limiter. Async callbacks run once, on
/// one of the io_context's threads; the ...Sync forms block the calling thread and must not be
/// called on the io_context's threads (they answer code 0 instead of deadlocking). Bodies out
/// are the decoded JSON of the response (null for an empty body).
class RestClient {
 public:
  using Callback = std::function<void(ApiResult<boost::json::value>)>;

  /// Throws std::runtime_error when the CA or client certificate cannot be loaded: a startup
  /// fault, as in http::Client.
  RestClient(boost::asio::io_context& io, RestConfig config);
  /// Requests in flight still complete and call their callbacks.
  ~RestClient();
  RestClient(const RestClient&) = delete;
  RestClient& operator=(const RestClient&) = delete;

  void get(const ResourceRef& ref, Callback done) { get(ref, GetOptions{}, std::move(done)); }
  void get(const ResourceRef& ref, const GetOptions& options, Callback done);
  void list(const ResourceRef& ref, const ListOptions& options, Callback done);
  /// A list decoded while it streams in: `on_item` gets each element of items (alive only for
  /// the call; false stops the list), then `done` gets the list's metadata object
  /// (resourceVersion, continue) or the error. Memory stays at one item however long the list
  /// is. Items already handed over before an error stay handed over: the caller decides.
  void listEach(const ResourceRef& ref, const ListOptions& options,
                std::function<bool(const boost::json::value& item)> on_item, Callback done);
  /// POST to the collection (or to a subresource such as pods/x/binding or pods/x/eviction).
  void create(const ResourceRef& ref, boost::json::value body, Callback done,
              const WriteOptions& options = {});
  /// PUT; the body's metadata.resourceVersion makes it a compare-and-swap (409 when stale).
  void update(const ResourceRef& ref, boost::json::value body, Callback done,
              const WriteOptions& options = {});
  void patch(const ResourceRef& ref, PatchType type, boost::json::value patch, Callback done,
             const WriteOptions& options = {});
  /// DELETE (`delete` is a keyword). Answers the deleted object or a Status.
  void remove(const ResourceRef& ref, const DeleteOptions& options, Callback done);

  ApiResult<boost::json::value> getSync(const ResourceRef& ref, const GetOptions& options = {});
  ApiResult<boost::json::value> listSync(const ResourceRef& ref, const ListOptions& options = {});
  ApiResult<boost::json::value> createSync(const ResourceRef& ref, boost::json::value body,
                                           const WriteOptions& options = {});
  ApiResult<boost::json::value> updateSync(const ResourceRef& ref, boost::json::value body,
                                           const WriteOptions& options = {});
  ApiResult<boost::json::value> patchSync(const ResourceRef& ref, PatchType type,
                                          boost::json::value patch,
                                          const WriteOptions& options = {});
  ApiResult<boost::json::value> removeSync(const ResourceRef& ref,
                                           const DeleteOptions& options = {});

  /// Any path under the host ("/version", "/apis"), limited and authenticated like the verbs.
  void raw(std::string method, std::string path_and_query, std::string body,
           std::string content_type, Callback done);
  ApiResult<boost::json::value> rawSync(std::string method, std::string path_and_query,
                                        std::string body = "", std::string content_type = "");

  const RestConfig& config() const;

  /// A client on the same connections, rate limiter and credentials whose writes (create,
  /// update, patch, remove, and raw requests other than GET) ask `fence` when they are about to
  /// be sent, after the rate limiter: with no time left they fail with isFenced() and nothing is
  /// sent; otherwise the request's timeout is cut to the time left, so an answer that comes later
  /// is not waited for. Reads are not fenced. For a leader's controllers (LeadershipFence): a
  /// write queued before leadership ended is refused rather than sent after it. Must not
  /// outlive the io_context, as this client must not.
  std::unique_ptr<RestClient> fenced(WriteFence fence) const;

  /// A request for `path_and_query` under the host with the same Accept and Authorization
  /// headers the verbs send (the token file re-read as they do), for calls the verbs do not
  /// cover, such as watch streams. Not rate limited. Fails only when the token cannot be read.
  ApiResult<http::ClientRequest> prepareRequest(std::string method,
                                                std::string path_and_query) const;
  /// The pooled client the verbs use, for stream() with the same TLS settings.
  http::Client& httpClient() const;
  /// Waits for a token of the QPS/burst limiter the verbs use, then calls `done` (with
  /// operation_aborted when the io_context shuts down first). Watch streams take one per open,
  /// as client-go's do, so a watcher that reconnects in a loop cannot flood the server.
  void throttle(std::function<void(boost::system::error_code)> done);

 private:
  RestClient(std::shared_ptr<detail::RestState> state, WriteFence fence);

  std::shared_ptr<detail::RestState> state_;
  WriteFence fence_;  // empty: writes are not fenced
};

}  // namespace koord::kube
