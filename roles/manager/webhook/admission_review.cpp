#include "webhook/admission_review.h"

#include <boost/json.hpp>

#include <array>
#include <exception>

#include <fmt/format.h>

#include "koord/kube/json_fields.h"
#include "koord/kube/kubeconfig.h"

namespace koord::manager::webhook {
namespace {

using namespace koord::kube::jsonfields;

namespace json = boost::json;

constexpr std::string_view kV1 = "admission.k8s.io/v1";
constexpr std::string_view kV1beta1 = "admission.k8s.io/v1beta1";

// Pods with managedFields nest about 20 deep; Boost.JSON's default of 32 is too tight for CRDs,
// Go's 10000 too loose for a recursive diff.
constexpr std::size_t kMaxDepth = 256;

kube::Error bad(std::string message) {
  return kube::makeKubeError(std::move(message));
}

kube::Expected<std::string> requiredString(const json::object& o, std::string_view name,
                                           std::string_view path) {
  auto s = stringField(o, name, path);
  if (s && s->empty())
    return bad(fmt::format("{}.{}: required", path, name));
  return s;
}

kube::Expected<Operation> parseOperation(std::string_view s) {
  if (s == "CREATE")
    return Operation::kCreate;
  if (s == "UPDATE")
    return Operation::kUpdate;
  if (s == "DELETE")
    return Operation::kDelete;
  if (s == "CONNECT")
    return Operation::kConnect;
  return bad(fmt::format(
      "request.operation: unsupported value \"{}\": supported values: \"CREATE\", \"UPDATE\", "
      "\"DELETE\", \"CONNECT\"",
      s));
}

// request.object / request.oldObject: an object when present; `required` when the operation
// cannot be judged without it.
kube::Expected<std::optional<json::object>> embeddedObject(json::object& request,
                                                           std::string_view name, bool required) {
  json::value* v = request.if_contains(name);
  if (v != nullptr && v->is_null())
    v = nullptr;
  if (v == nullptr) {
    if (required)
      return bad(fmt::format("request.{}: required", name));
    return std::optional<json::object>();
  }
  if (!v->is_object())
    return typeError(fmt::format("request.{}", name), "object", *v);
  // Moved, not copied: it keeps the review's arena alive (see decodeAdmissionReview).
  return std::optional<json::object>(std::move(v->get_object()));
}

// The object must be what the resource says: a Pod under "pods", a ConfigMap under
// "configmaps". controller-runtime's decoder refuses a missing kind too.
std::optional<std::string> checkKind(const json::object& o, std::string_view path,
                                     std::string_view want) {
  const json::value* kind = o.if_contains("kind");
  if (kind == nullptr || !kind->is_string())
    return fmt::format("{}.kind: required, want \"{}\"", path, want);
  if (kind->get_string() != want)
    return fmt::format("{}.kind: got \"{}\", want \"{}\"", path,
                       std::string_view(kind->get_string()), want);
  return std::nullopt;
}

WebhookResult badRequest(std::string message) {
  return WebhookResult{400, "text/plain; charset=utf-8", std::move(message) + "\n", "bad_request"};
}

std::string_view outcomeOf(const AdmissionResponse& r) {
  if (r.allowed)
    return r.patch.empty() ? "allowed" : "patched";
  return r.code >= 500 ? "error" : "denied";
}

}  // namespace

std::string_view operationName(Operation op) {
  switch (op) {
    case Operation::kCreate:
      return "CREATE";
    case Operation::kUpdate:
      return "UPDATE";
    case Operation::kDelete:
      return "DELETE";
    case Operation::kConnect:
      return "CONNECT";
  }
  return "";
}

AdmissionResponse AdmissionResponse::allow() {
  return AdmissionResponse{};
}

AdmissionResponse AdmissionResponse::allowWithPatch(boost::json::array patch) {
  AdmissionResponse r;
  r.patch = std::move(patch);
  return r;
}

AdmissionResponse AdmissionResponse::deny(std::string message) {
  AdmissionResponse r;
  r.allowed = false;
  r.code = 403;
  r.reason = "Forbidden";
  r.message = std::move(message);
  return r;
}

AdmissionResponse AdmissionResponse::errored(std::int32_t code, std::string message) {
  AdmissionResponse r;
  r.allowed = false;
  r.code = code;
  r.message = std::move(message);
  return r;
}

kube::Expected<AdmissionRequest> decodeAdmissionReview(std::string_view body) {
  json::parse_options options;
  options.max_depth = kMaxDepth;
  boost::system::error_code ec;
  // One arena per review: the pod, its mutated copy and the patch are built and freed together
  // (allocation was most of a review's cost), and the values moved out keep it alive.
  json::value doc =
      json::parse(body, ec, json::make_shared_resource<json::monotonic_resource>(), options);
  if (ec)
    return bad(fmt::format("AdmissionReview: not valid JSON: {}", ec.message()));
  json::object* review = doc.if_object();
  if (review == nullptr)
    return typeError("AdmissionReview", "object", doc);

  AdmissionRequest out;
  auto api_version = stringField(*review, "apiVersion", "AdmissionReview");
  if (!api_version)
    return api_version.error();
  if (*api_version != kV1 && *api_version != kV1beta1) {
    return bad(fmt::format("AdmissionReview.apiVersion: got \"{}\", want \"{}\" or \"{}\"",
                           *api_version, kV1, kV1beta1));
  }
  out.api_version = std::move(*api_version);
  auto kind = stringField(*review, "kind", "AdmissionReview");
  if (!kind)
    return kind.error();
  if (*kind != "AdmissionReview")
    return bad(fmt::format("AdmissionReview.kind: got \"{}\", want \"AdmissionReview\"", *kind));

  json::value* request_value = review->if_contains("request");
  if (request_value != nullptr && request_value->is_null())
    request_value = nullptr;
  if (request_value == nullptr)
    return bad("AdmissionReview.request: required");
  json::object* request = request_value->if_object();
  if (request == nullptr)
    return typeError("request", "object", *request_value);

  auto uid = requiredString(*request, "uid", "request");
  if (!uid)
    return uid.error();
  out.uid = std::move(*uid);

  auto op = requiredString(*request, "operation", "request");
  if (!op)
    return op.error();
  auto operation = parseOperation(*op);
  if (!operation)
    return operation.error();
  out.operation = *operation;

  const json::value* resource_value = field(*request, "resource");
  if (resource_value == nullptr)
    return bad("request.resource: required");
  const json::object* resource = resource_value->if_object();
  if (resource == nullptr)
    return typeError("request.resource", "object", *resource_value);
  auto resource_name = requiredString(*resource, "resource", "request.resource");
  if (!resource_name)
    return resource_name.error();
  out.resource = std::move(*resource_name);

  auto sub_resource = stringField(*request, "subResource", "request");
  if (!sub_resource)
    return sub_resource.error();
  out.sub_resource = std::move(*sub_resource);
  auto ns = stringField(*request, "namespace", "request");
  if (!ns)
    return ns.error();
  out.namespace_name = std::move(*ns);
  auto name = stringField(*request, "name", "request");
  if (!name)
    return name.error();
  out.name = std::move(*name);
  auto dry_run = boolField(*request, "dryRun", "request");
  if (!dry_run)
    return dry_run.error();
  out.dry_run = *dry_run;

  if (const json::value* user = field(*request, "userInfo")) {
    const json::object* info = user->if_object();
    if (info == nullptr)
      return typeError("request.userInfo", "object", *user);
    auto username = stringField(*info, "username", "request.userInfo");
    if (!username)
      return username.error();
    out.username = std::move(*username);
    if (const json::value* extra = field(*info, "extra")) {
      const json::object* entries = extra->if_object();
      if (entries == nullptr)
        return typeError("request.userInfo.extra", "object", *extra);
      for (const auto& [key, values] : *entries) {
        const json::array* list = values.if_array();
        if (list == nullptr)
          return typeError(fmt::format("request.userInfo.extra[{}]", std::string_view(key)),
                           "array", values);
        auto& into = out.user_extra[std::string(key)];
        for (const auto& v : *list) {
          if (!v.is_string())
            return typeError(fmt::format("request.userInfo.extra[{}]", std::string_view(key)),
                             "array of strings", v);
          into.emplace_back(v.get_string());
        }
      }
    }
  }

  bool needs_object = out.operation == Operation::kCreate || out.operation == Operation::kUpdate;
  auto object = embeddedObject(*request, "object", needs_object);
  if (!object)
    return object.error();
  if (*object)
    out.object = std::move(**object);
  auto old_object = embeddedObject(*request, "oldObject", out.operation == Operation::kUpdate);
  if (!old_object)
    return old_object.error();
  out.old_object = std::move(*old_object);
  return out;
}

std::string encodeAdmissionReview(const AdmissionRequest& request,
                                  const AdmissionResponse& response) {
  json::object r;
  r["uid"] = request.uid;
  r["allowed"] = response.allowed;
  if (!response.allowed || response.code != 0 || !response.message.empty()) {
    json::object status;
    if (response.code != 0)
      status["code"] = response.code;
    if (!response.message.empty())
      status["message"] = response.message;
    if (!response.reason.empty())
      status["reason"] = response.reason;
    r["status"] = std::move(status);
  }
  if (response.allowed && !response.patch.empty()) {
    r["patchType"] = "JSONPatch";
    r["patch"] = kube::encodeBase64(json::serialize(response.patch));
  }
  if (!response.warnings.empty()) {
    json::array warnings;
    for (const auto& w : response.warnings)
      warnings.emplace_back(w);
    r["warnings"] = std::move(warnings);
  }
  json::object review;
  review["apiVersion"] = request.api_version;
  review["kind"] = "AdmissionReview";
  review["response"] = std::move(r);
  return json::serialize(review);
}

WebhookResult serve(std::string_view body, const Handler& handler) {
  try {
    auto request = decodeAdmissionReview(body);
    if (!request)
      return badRequest(request.error().message);
    AdmissionResponse response;
    std::string_view kind;
    if (request->resource == handler.resource) {
      kind = handler.kind;
    } else {
      for (const auto& [resource, k] : handler.more_resources) {
        if (request->resource == resource)
          kind = k;
      }
    }
    bool ours = !kind.empty() && (request->sub_resource.empty() || handler.subresources);
    if (ours) {
      bool has_object =
          request->operation == Operation::kCreate || request->operation == Operation::kUpdate;
      if (has_object) {
        if (auto wrong = checkKind(request->object, "request.object", kind))
          return badRequest(*wrong);
      }
      if (request->old_object) {
        if (auto wrong = checkKind(*request->old_object, "request.oldObject", kind))
          return badRequest(*wrong);
      }
      try {
        response = handler.admit(*request);
      } catch (const std::exception& e) {
        response = AdmissionResponse::errored(500, fmt::format("internal error: {}", e.what()));
      }
    }
    std::string out = encodeAdmissionReview(*request, response);
    return WebhookResult{200, "application/json", std::move(out), std::string(outcomeOf(response))};
  } catch (const std::exception& e) {
    // Only allocation can fail out here; answer rather than take the server down.
    return WebhookResult{500, "text/plain; charset=utf-8",
                         fmt::format("internal error: {}\n", e.what()), "error"};
  }
}

}  // namespace koord::manager::webhook
