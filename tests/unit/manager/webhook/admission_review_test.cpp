#include "webhook/admission_review.h"

#include <boost/json.hpp>

#include <stdexcept>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "webhook/json_patch.h"
#include "webhook_test_util.h"

using namespace koord::manager::webhook;
using namespace koord::manager::webhook::testing;
namespace json = boost::json;

namespace {

constexpr std::string_view kPod = R"({"apiVersion": "v1", "kind": "Pod",
  "metadata": {"name": "p", "namespace": "default"}})";

std::string decodeError(std::string_view body) {
  auto r = decodeAdmissionReview(body);
  REQUIRE_FALSE(r.has_value());
  return r.error().message;
}

Handler recordingHandler(int& calls, AdmissionResponse answer) {
  return Handler{"pods", "Pod", [&calls, answer](const AdmissionRequest&) {
                   ++calls;
                   return answer;
                 }};
}

}  // namespace

TEST_CASE("a v1 review decodes", "[webhook][admission]") {
  auto r = decodeAdmissionReview(R"({
    "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
    "request": {"uid": "705ab4f5-6393-11e8-b7cc-42010a800002",
      "kind": {"group": "", "version": "v1", "kind": "Pod"},
      "resource": {"group": "", "version": "v1", "resource": "pods"},
      "subResource": "", "name": "p", "namespace": "team-a", "operation": "UPDATE",
      "userInfo": {"username": "admin"}, "dryRun": true,
      "object": {"kind": "Pod", "metadata": {"name": "p"}},
      "oldObject": {"kind": "Pod", "metadata": {"name": "p", "labels": {"a": "b"}}},
      "options": {"kind": "UpdateOptions"}}})");
  REQUIRE(r.has_value());
  CHECK(r->api_version == "admission.k8s.io/v1");
  CHECK(r->uid == "705ab4f5-6393-11e8-b7cc-42010a800002");
  CHECK(r->operation == Operation::kUpdate);
  CHECK(r->resource == "pods");
  CHECK(r->sub_resource.empty());
  CHECK(r->namespace_name == "team-a");
  CHECK(r->name == "p");
  CHECK(r->dry_run);
  CHECK(r->object == parseObject(R"({"kind": "Pod", "metadata": {"name": "p"}})"));
  REQUIRE(r->old_object.has_value());
  CHECK(r->old_object->at("metadata").at("labels").at("a") == "b");
}

TEST_CASE("a v1beta1 review decodes and is answered in v1beta1", "[webhook][admission]") {
  auto body = review("CREATE", kPod, "pods", "", "admission.k8s.io/v1beta1");
  auto r = decodeAdmissionReview(body);
  REQUIRE(r.has_value());
  CHECK(r->api_version == "admission.k8s.io/v1beta1");
  CHECK(r->operation == Operation::kCreate);
  CHECK_FALSE(r->old_object.has_value());
  auto answer = parse(encodeAdmissionReview(*r, AdmissionResponse::allow()));
  CHECK(answer == parse(R"({"apiVersion": "admission.k8s.io/v1beta1",
    "kind": "AdmissionReview", "response": {"uid": "u-1", "allowed": true}})"));
}

TEST_CASE("DELETE and CONNECT need no object", "[webhook][admission]") {
  auto del = decodeAdmissionReview(review("DELETE", "", "pods", kPod));
  REQUIRE(del.has_value());
  CHECK(del->operation == Operation::kDelete);
  CHECK(del->object.empty());
  CHECK(del->old_object.has_value());
  auto connect = decodeAdmissionReview(review("CONNECT", "null"));
  REQUIRE(connect.has_value());
  CHECK(connect->operation == Operation::kConnect);
}

TEST_CASE("malformed reviews are refused with what is wrong", "[webhook][admission]") {
  CHECK_THAT(decodeError(""), Catch::StartsWith("AdmissionReview: not valid JSON"));
  CHECK_THAT(decodeError("{\"apiVersion\": "),
             Catch::StartsWith("AdmissionReview: not valid JSON"));
  CHECK_THAT(decodeError("garbage"), Catch::StartsWith("AdmissionReview: not valid JSON"));
  CHECK(decodeError("[1, 2]") == "AdmissionReview: expected object, got array");
  CHECK(decodeError("\"review\"") == "AdmissionReview: expected object, got string");
  CHECK(decodeError(R"({"apiVersion": "admission.k8s.io/v2", "kind": "AdmissionReview"})") ==
        "AdmissionReview.apiVersion: got \"admission.k8s.io/v2\", want \"admission.k8s.io/v1\" "
        "or \"admission.k8s.io/v1beta1\"");
  CHECK(decodeError(R"({"kind": "AdmissionReview"})") ==
        "AdmissionReview.apiVersion: got \"\", want \"admission.k8s.io/v1\" or "
        "\"admission.k8s.io/v1beta1\"");
  CHECK(decodeError(R"({"apiVersion": 1})") ==
        "AdmissionReview.apiVersion: expected string, "
        "got number");
  CHECK(decodeError(R"({"apiVersion": "admission.k8s.io/v1", "kind": "Pod"})") ==
        "AdmissionReview.kind: got \"Pod\", want \"AdmissionReview\"");
  constexpr std::string_view kHead =
      R"({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview")";
  auto with = [&](std::string_view request) {
    return decodeError(std::string(kHead) + ", \"request\": " + std::string(request) + "}");
  };
  CHECK(decodeError(std::string(kHead) + "}") == "AdmissionReview.request: required");
  CHECK(with("null") == "AdmissionReview.request: required");
  CHECK(with("[]") == "request: expected object, got array");
  CHECK(with(R"({"operation": "CREATE"})") == "request.uid: required");
  CHECK(with(R"({"uid": "", "operation": "CREATE"})") == "request.uid: required");
  CHECK(with(R"({"uid": 7})") == "request.uid: expected string, got number");
  CHECK(with(R"({"uid": "u"})") == "request.operation: required");
  CHECK(with(R"({"uid": "u", "operation": "PATCH"})") ==
        "request.operation: unsupported value \"PATCH\": supported values: \"CREATE\", "
        "\"UPDATE\", \"DELETE\", \"CONNECT\"");
  CHECK(with(R"({"uid": "u", "operation": "CREATE"})") == "request.resource: required");
  CHECK(with(R"({"uid": "u", "operation": "CREATE", "resource": "pods"})") ==
        "request.resource: expected object, got string");
  CHECK(with(R"({"uid": "u", "operation": "CREATE", "resource": {}})") ==
        "request.resource.resource: required");
  constexpr std::string_view kReq = R"("uid": "u", "resource": {"resource": "pods"})";
  CHECK(with(fmt::format(R"({{{}, "operation": "CREATE"}})", kReq)) == "request.object: required");
  CHECK(with(fmt::format(R"({{{}, "operation": "CREATE", "object": null}})", kReq)) ==
        "request.object: required");
  CHECK(with(fmt::format(R"({{{}, "operation": "CREATE", "object": "e30="}})", kReq)) ==
        "request.object: expected object, got string");
  CHECK(with(fmt::format(R"({{{}, "operation": "UPDATE", "object": {{}}}})", kReq)) ==
        "request.oldObject: required");
  CHECK(with(fmt::format(R"({{{}, "operation": "UPDATE", "object": {{}}, "oldObject": 1}})",
                         kReq)) == "request.oldObject: expected object, got number");
  CHECK(with(fmt::format(R"({{{}, "operation": "CREATE", "object": {{}}, "dryRun": "yes"}})",
                         kReq)) == "request.dryRun: expected boolean, got string");
  CHECK(with(fmt::format(R"({{{}, "operation": "CREATE", "object": {{}}, "namespace": 1}})",
                         kReq)) == "request.namespace: expected string, got number");
}

TEST_CASE("nesting beyond the limit is refused, not recursed into", "[webhook][admission]") {
  std::string deep = std::string(100000, '[') + std::string(100000, ']');
  CHECK_THAT(decodeError(deep), Catch::StartsWith("AdmissionReview: not valid JSON"));
  int calls = 0;
  auto result = serve(review("CREATE", std::string(300, '[') + std::string(300, ']')),
                      recordingHandler(calls, AdmissionResponse::allow()));
  CHECK(result.http_status == 400);
  CHECK(calls == 0);
}

TEST_CASE("responses echo the uid and carry status, patchType and base64 patch",
          "[webhook][admission]") {
  auto request = decodeAdmissionReview(review("CREATE", kPod));
  REQUIRE(request.has_value());

  auto denied = parse(encodeAdmissionReview(*request, AdmissionResponse::deny("no way")));
  CHECK(denied == parse(R"({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
    "response": {"uid": "u-1", "allowed": false,
      "status": {"code": 403, "message": "no way", "reason": "Forbidden"}}})"));

  auto errored = parse(encodeAdmissionReview(*request, AdmissionResponse::errored(400, "bad")));
  CHECK(errored.at("response") ==
        parse(R"({"uid": "u-1", "allowed": false, "status": {"code": 400, "message": "bad"}})"));

  json::array patch =
      parse(R"([{"op": "add", "path": "/metadata/labels", "value": {"a": "b"}}])").as_array();
  auto patched = parse(encodeAdmissionReview(*request, AdmissionResponse::allowWithPatch(patch)));
  const auto& response = patched.at("response").as_object();
  CHECK(response.at("allowed") == true);
  CHECK(response.at("patchType") == "JSONPatch");
  CHECK_FALSE(response.contains("status"));
  CHECK(parse(base64Decode(response.at("patch").as_string())) == patch);
}

TEST_CASE("serve answers garbage with 400 and a one-line reason", "[webhook][admission]") {
  int calls = 0;
  Handler h = recordingHandler(calls, AdmissionResponse::allow());
  auto r = serve("this is not json", h);
  CHECK(r.http_status == 400);
  CHECK(r.outcome == "bad_request");
  CHECK_THAT(r.body, Catch::StartsWith("AdmissionReview: not valid JSON"));
  CHECK(r.body.back() == '\n');
  CHECK(r.content_type.rfind("text/plain", 0) == 0);
  CHECK(calls == 0);

  auto wrong_kind = serve(review("CREATE", R"({"kind": "ConfigMap"})"), h);
  CHECK(wrong_kind.http_status == 400);
  CHECK(wrong_kind.body == "request.object.kind: got \"ConfigMap\", want \"Pod\"\n");
  auto no_kind = serve(review("CREATE", R"({"metadata": {}})"), h);
  CHECK(no_kind.http_status == 400);
  CHECK(no_kind.body == "request.object.kind: required, want \"Pod\"\n");
  auto old_wrong = serve(review("UPDATE", kPod, "pods", R"({"kind": "Node"})"), h);
  CHECK(old_wrong.http_status == 400);
  CHECK(old_wrong.body == "request.oldObject.kind: got \"Node\", want \"Pod\"\n");
  CHECK(calls == 0);
}

TEST_CASE("serve allows other resources and subresources without asking the handler",
          "[webhook][admission]") {
  int calls = 0;
  Handler h = recordingHandler(calls, AdmissionResponse::deny("no"));
  auto other = serve(review("CREATE", R"({"kind": "Node"})", "nodes"), h);
  CHECK(other.http_status == 200);
  CHECK(other.outcome == "allowed");
  CHECK(parse(other.body).at("response").at("allowed") == true);

  std::string sub = review("CREATE", R"({"kind": "Binding"})");
  sub.replace(sub.find("\"namespace\""), 0, "\"subResource\":\"binding\",");
  auto binding = serve(sub, h);
  CHECK(binding.outcome == "allowed");
  CHECK(calls == 0);

  auto ours = serve(review("CREATE", kPod), h);
  CHECK(calls == 1);
  CHECK(ours.http_status == 200);
  CHECK(ours.outcome == "denied");
  CHECK(ours.content_type == "application/json");
}

TEST_CASE("serve labels outcomes and survives a throwing handler", "[webhook][admission]") {
  int calls = 0;
  auto patched =
      serve(review("CREATE", kPod),
            recordingHandler(calls, AdmissionResponse::allowWithPatch(
                                        parse(R"([{"op": "remove", "path": "/a"}])").as_array())));
  CHECK(patched.outcome == "patched");
  auto errored = serve(review("CREATE", kPod),
                       recordingHandler(calls, AdmissionResponse::errored(500, "lookup failed")));
  CHECK(errored.outcome == "error");
  CHECK(errored.http_status == 200);

  Handler throwing{"pods", "Pod", [](const AdmissionRequest&) -> AdmissionResponse {
                     throw std::runtime_error("boom");
                   }};
  auto thrown = serve(review("CREATE", kPod), throwing);
  CHECK(thrown.http_status == 200);
  CHECK(thrown.outcome == "error");
  auto body = parse(thrown.body);
  CHECK(body.at("response").at("allowed") == false);
  CHECK(body.at("response").at("status").at("code") == 500);
  CHECK(body.at("response").at("status").at("message") == "internal error: boom");
}
