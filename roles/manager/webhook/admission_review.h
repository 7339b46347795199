// AdmissionReview (admission.k8s.io/v1 and v1beta1) in and out of the manager's webhook server:
// strict decoding of what the API server posts, and the review it expects back.
#pragma once

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "koord/kube/error.h"

namespace koord::manager::webhook {

enum class Operation : std::uint8_t { kCreate, kUpdate, kDelete, kConnect };
/// "CREATE", "UPDATE", "DELETE", "CONNECT".
std::string_view operationName(Operation op);

/// The parts of request the handlers read.
struct AdmissionRequest {
  std::string api_version;  // of the review, echoed in the answer
  std::string uid;
  Operation operation = Operation::kCreate;
  std::string resource;  // request.resource.resource: "pods", "configmaps"
  std::string sub_resource;
  std::string namespace_name;  // request.namespace: the object's namespace may be empty on CREATE
  std::string name;
  bool dry_run = false;
  /// request.userInfo.username: who asked the API server ("" when the review names nobody).
  std::string username;
  /// request.userInfo.extra: for a bound service-account token, the pod it was issued to
  /// (authentication.kubernetes.io/pod-name, pod-uid) and, from Kubernetes 1.30, its node
  /// (authentication.kubernetes.io/node-name).
  std::map<std::string, std::vector<std::string>, std::less<>> user_extra;
  /// request.object; empty for DELETE and CONNECT.
  boost::json::object object;
  /// request.oldObject: always for UPDATE, for DELETE when the API server sends it.
  std::optional<boost::json::object> old_object;
};

/// What a handler decides. Denials carry status{code, message, reason} as Kubernetes'
/// metav1.Status; a patch is only sent with an allowed response.
struct AdmissionResponse {
  bool allowed = true;
  std::int32_t code = 0;
  std::string reason;
  std::string message;
  /// RFC 6902 operations; empty means no change.
  boost::json::array patch;
  std::vector<std::string> warnings;

  static AdmissionResponse allow();
  static AdmissionResponse allowWithPatch(boost::json::array patch);
  /// controller-runtime's Denied: 403 Forbidden.
  static AdmissionResponse deny(std::string message);
  /// controller-runtime's Errored: any code, no reason (Koordinator answers invalid pods with 400
  /// and lookup failures with 500 this way).
  static AdmissionResponse errored(std::int32_t code, std::string message);
};

/// Decodes a review from the raw body. Refused, with a message saying what is wrong: not JSON,
/// not an object, apiVersion other than admission.k8s.io/v1 or v1beta1, kind other than
/// AdmissionReview, a missing or mistyped request, uid, operation or resource, a missing object
/// for CREATE or UPDATE, a missing oldObject for UPDATE.
kube::Expected<AdmissionRequest> decodeAdmissionReview(std::string_view body);

/// The review answering `request`: the same apiVersion and kind, response.uid echoed; a patch as
/// patchType "JSONPatch" and base64 text.
std::string encodeAdmissionReview(const AdmissionRequest& request,
                                  const AdmissionResponse& response);

/// One webhook path: requests for another resource, or for a subresource, are allowed untouched
/// (as Koordinator's shouldIgnoreIfNot* do); the others must carry objects of `kind`.
struct Handler {
  std::string resource;  // "pods"
  std::string kind;      // "Pod"
  std::function<AdmissionResponse(const AdmissionRequest&)> admit;
  /// More resources this path judges, each with its kind; their subresources too when
  /// `subresources` is set (a status written through nodes/status is still a Node).
  std::vector<std::pair<std::string, std::string>> more_resources = {};
  bool subresources = false;
};

/// What the HTTP layer sends back, and the outcome for the metrics label: "allowed", "patched",
/// "denied" (allowed=false with a code below 500), "error" (500 or above), "bad_request" (HTTP
/// 400, the body is a one-line text message, no review could be answered).
struct WebhookResult {
  int http_status = 200;
  std::string content_type;
  std::string body;
  std::string outcome;
};

/// Decodes, dispatches and encodes. Never throws: an exception escaping `handler` is answered
/// as a 500-coded denial.
WebhookResult serve(std::string_view body, const Handler& handler);

}  // namespace koord::manager::webhook
