// /validate-reservation: what a Reservation must hold for a pod ever to use it, each refusal
// naming its field; what a scheduled one keeps; and reviews that cannot be judged.
#include "webhook/reservation_validating.h"

#include <boost/json.hpp>

#include <functional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "webhook/field_errors.h"
#include "webhook_test_util.h"

using namespace koord::manager::webhook;
using namespace koord::manager::webhook::testing;
namespace json = boost::json;

namespace {

constexpr std::string_view kReservation = R"({
  "apiVersion": "scheduling.koordinator.sh/v1alpha1", "kind": "Reservation",
  "metadata": {"name": "r1", "labels": {"team": "a"}},
  "spec": {
    "template": {"metadata": {"namespace": "default"}, "spec": {"containers": [
      {"name": "main", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]}},
    "owners": [{"object": {"namespace": "default", "name": "web-0"}},
               {"labelSelector": {"matchLabels": {"app": "web"}}}],
    "ttl": "1h", "allocateOnce": true}})";

json::object reservation() {
  return parseObject(kReservation);
}

json::object& specOf(json::object& r) {
  return r["spec"].as_object();
}

// The reservation after `edit`.
json::object edited(const std::function<void(json::object& spec)>& edit) {
  json::object r = reservation();
  edit(specOf(r));
  return r;
}

// Scheduled on node-a (status.nodeName set), as the scheduler leaves it.
json::object scheduled(json::object r) {
  r["status"] = json::object{{"phase", "Available"}, {"nodeName", "node-a"}};
  return r;
}

struct Answer {
  std::string outcome;
  int code = 0;
  std::string message;
};

Answer answer(std::string_view op, const json::object& object, const json::object* old = nullptr) {
  auto r = serve(review(op, json::serialize(object), "reservations",
                        old == nullptr ? std::string() : json::serialize(*old)),
                 reservationValidatingHandler());
  REQUIRE(r.http_status == 200);
  Answer a{r.outcome, 0, ""};
  const json::value body = parse(r.body);
  const auto& response = body.at("response").as_object();
  if (const auto* status = response.if_contains("status")) {
    a.code = static_cast<int>(status->at("code").to_number<std::int64_t>());
    a.message = std::string(status->at("message").as_string());
  }
  return a;
}

json::array selectorOwner(std::string_view op, json::array values) {
  json::object expr{{"key", "app"}, {"operator", op}};
  if (!values.empty())
    expr["values"] = std::move(values);
  return json::array{json::object{
      {"labelSelector", json::object{{"matchExpressions", json::array{std::move(expr)}}}}}};
}

struct Case {
  const char* what;
  std::function<void(json::object& spec)> edit;
  // Empty: allowed. Otherwise the refusal must contain it (the field, and for our own rules the
  // whole field.Error).
  std::string refusal;
};

}  // namespace

TEST_CASE("a Reservation is judged on CREATE, each refusal naming its field",
          "[webhook][reservation]") {
  const std::vector<Case> cases{
      {"as written", [](json::object&) {}, ""},
      {"an owner by controller alone",
       [](json::object& s) {
         s["owners"] = json::array{json::object{{"controller",
                                                 {{"apiVersion", "apps/v1"},
                                                  {"kind", "StatefulSet"},
                                                  {"name", "web"},
                                                  {"uid", "u"}}}}};
       },
       ""},
      {"an empty labelSelector (every pod)",
       [](json::object& s) {
         s["owners"] = json::array{{{"labelSelector", json::object{}}}};
       },
       ""},
      {"ttl and expires both (expires wins)",
       [](json::object& s) { s["expires"] = "2030-01-01T00:00:00Z"; }, ""},
      {"ttl 0 (never expires)", [](json::object& s) { s["ttl"] = "0s"; }, ""},
      {"allocatePolicy Restricted", [](json::object& s) { s["allocatePolicy"] = "Restricted"; },
       ""},
      {"allocatePolicy \"\" (Default)", [](json::object& s) { s["allocatePolicy"] = ""; }, ""},
      {"no template", [](json::object& s) { s.erase("template"); },
       "spec.template: Required value: the pod the reservation holds room for"},
      {"a null template", [](json::object& s) { s["template"] = nullptr; },
       "spec.template: Required value"},
      {"a template that is no object", [](json::object& s) { s["template"] = "pod"; },
       "spec.template"},
      {"no owners", [](json::object& s) { s.erase("owners"); },
       "spec.owners: Required value: at least one owner, or no pod may use it"},
      {"an empty owners list", [](json::object& s) { s["owners"] = json::array{}; },
       "spec.owners: Required value"},
      {"an owner that names nothing",
       [](json::object& s) { s["owners"].as_array().push_back(json::object{}); },
       "spec.owners[2]: Required value: one of object, controller or labelSelector"},
      {"In without values", [](json::object& s) { s["owners"] = selectorOwner("In", {}); },
       "spec.owners[0].labelSelector"},
      {"Exists with values",
       [](json::object& s) { s["owners"] = selectorOwner("Exists", {"web"}); },
       "spec.owners[0].labelSelector"},
      {"an unknown operator",
       [](json::object& s) {
         s["owners"] = selectorOwner("Between", {"a", "b"});
       },
       "spec.owners[0].labelSelector"},
      {"a negative ttl", [](json::object& s) { s["ttl"] = "-1h"; },
       "spec.ttl: Invalid value: \"-1h\": must not be negative (0 never expires)"},
      {"a ttl that is no duration", [](json::object& s) { s["ttl"] = "soon"; }, "spec.ttl"},
      {"an expires that is no time", [](json::object& s) { s["expires"] = "tomorrow"; },
       "spec.expires"},
      {"an unknown allocatePolicy", [](json::object& s) { s["allocatePolicy"] = "Greedy"; },
       "spec.allocatePolicy"},
      {"allocateOnce that is no boolean", [](json::object& s) { s["allocateOnce"] = "yes"; },
       "spec.allocateOnce"},
  };
  for (const auto& c : cases) {
    INFO(c.what);
    json::object r = edited(c.edit);
    auto errors = validateReservation(r, nullptr);
    auto a = answer("CREATE", r);
    if (c.refusal.empty()) {
      REQUIRE(errors.has_value());
      CHECK(errors->empty());
      CHECK(a.outcome == "allowed");
      continue;
    }
    CHECK(a.outcome == "denied");
    CHECK(a.code == 400);
    CHECK_THAT(a.message, Catch::Contains(c.refusal));
    // The same refusal from the function, as an error (undecodable) or a broken rule.
    std::string direct =
        errors ? (errors->empty() ? "" : aggregateMessages(*errors)) : errors.error().message;
    CHECK(direct == a.message);
  }
}

TEST_CASE("every broken rule is reported, joined as field.ErrorList's aggregate",
          "[webhook][reservation]") {
  json::object r = edited([](json::object& s) {
    s.erase("template");
    s["owners"] = json::array{json::object{}};
    s["ttl"] = "-5m";
  });
  auto a = answer("CREATE", r);
  CHECK(a.outcome == "denied");
  CHECK(a.message ==
        "[spec.template: Required value: the pod the reservation holds room for, "
        "spec.owners[0]: Required value: one of object, controller or labelSelector, "
        "spec.ttl: Invalid value: \"-5m\": must not be negative (0 never expires)]");
}

TEST_CASE("a scheduled Reservation keeps what it was placed and sized by",
          "[webhook][reservation]") {
  const json::object old = scheduled(reservation());
  const std::string why = "may not change once the reservation is scheduled (on node \"node-a\")";
  const std::vector<Case> cases{
      {"a longer ttl", [](json::object& s) { s["ttl"] = "48h"; }, ""},
      {"an expiry", [](json::object& s) { s["expires"] = "2030-01-01T00:00:00Z"; }, ""},
      {"unschedulable", [](json::object& s) { s["unschedulable"] = true; }, ""},
      {"taints",
       [](json::object& s) {
         s["taints"] = json::array{{{"key", "drain"}, {"effect", "NoSchedule"}}};
       },
       ""},
      // The CRD's defaults spelled out or left out are the same values.
      {"allocateOnce left out (true)", [](json::object& s) { s.erase("allocateOnce"); }, ""},
      {"allocatePolicy \"\" spelled out", [](json::object& s) { s["allocatePolicy"] = ""; }, ""},
      {"another template",
       [](json::object& s) { s["template"].as_object()["spec"].as_object()["priority"] = 100; },
       "spec.template: Forbidden: " + why},
      {"another owner",
       [](json::object& s) {
         s["owners"].as_array().push_back(json::object{{"object", {{"name", "web-1"}}}});
       },
       "spec.owners: Forbidden: " + why},
      {"allocateOnce false", [](json::object& s) { s["allocateOnce"] = false; },
       "spec.allocateOnce: Invalid value: false: " + why},
      {"allocatePolicy Aligned", [](json::object& s) { s["allocatePolicy"] = "Aligned"; },
       "spec.allocatePolicy: Invalid value: \"Aligned\": " + why},
      // The rules of CREATE still hold.
      {"a negative ttl", [](json::object& s) { s["ttl"] = "-1h"; },
       "spec.ttl: Invalid value: \"-1h\": must not be negative (0 never expires)"},
  };
  for (const auto& c : cases) {
    INFO(c.what);
    json::object now = scheduled(edited(c.edit));
    auto a = answer("UPDATE", now, &old);
    if (c.refusal.empty()) {
      CHECK(a.outcome == "allowed");
      continue;
    }
    CHECK(a.outcome == "denied");
    CHECK(a.code == 400);
    CHECK(a.message == c.refusal);
  }
}

TEST_CASE("a pending Reservation may still change what it asks for", "[webhook][reservation]") {
  const json::object old = reservation();
  json::object now = edited([](json::object& s) {
    s["template"].as_object()["spec"].as_object()["priority"] = 100;
    s["owners"] = json::array{{{"labelSelector", {{"matchLabels", {{"app", "db"}}}}}}};
    s["allocateOnce"] = false;
    s["allocatePolicy"] = "Restricted";
  });
  CHECK(answer("UPDATE", now, &old).outcome == "allowed");
}

TEST_CASE("an update that leaves spec alone passes even a broken reservation",
          "[webhook][reservation]") {
  // Stored before the webhook was on: no owners. Its finalizer must still come off.
  json::object old = scheduled(edited([](json::object& s) { s.erase("owners"); }));
  json::object relabelled = old;
  relabelled["metadata"].as_object()["labels"] = json::object{{"team", "b"}};
  relabelled["metadata"].as_object()["finalizers"] = json::array{};
  CHECK(answer("UPDATE", relabelled, &old).outcome == "allowed");
  // A change to its spec is judged in full.
  json::object retimed = old;
  specOf(retimed)["ttl"] = "2h";
  auto a = answer("UPDATE", retimed, &old);
  CHECK(a.outcome == "denied");
  CHECK_THAT(a.message, Catch::Contains("spec.owners: Required value"));
}

TEST_CASE("reviews the webhook cannot judge are refused; others pass untouched",
          "[webhook][reservation]") {
  Handler h = reservationValidatingHandler();
  const std::string text = json::serialize(reservation());

  // Not a review, or not one this path can answer: HTTP 400, nothing judged.
  for (const std::string& body :
       {std::string("{"), std::string("[]"),
        review("CREATE", R"({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}})",
               "reservations"),
        review("UPDATE", text, "reservations"), review("CREATE", "", "reservations")}) {
    INFO(body);
    auto r = serve(body, h);
    CHECK(r.http_status == 400);
    CHECK(r.outcome == "bad_request");
  }
  // An object of the right kind whose spec is no object: refused, naming the field.
  json::object no_spec = reservation();
  no_spec["spec"] = json::array{};
  auto a = answer("CREATE", no_spec);
  CHECK(a.outcome == "denied");
  CHECK(a.code == 400);
  CHECK_THAT(a.message, Catch::StartsWith("spec"));

  // DELETE, other resources and the status subresource are not this webhook's to judge.
  CHECK(serve(review("DELETE", "", "reservations", text), h).outcome == "allowed");
  json::object broken = edited([](json::object& s) { s.erase("owners"); });
  CHECK(serve(review("CREATE", json::serialize(broken), "pods"), h).outcome == "allowed");
  json::value status_review = parse(
      review("UPDATE", json::serialize(broken), "reservations", json::serialize(reservation())));
  status_review.at("request").as_object()["subResource"] = "status";
  CHECK(serve(json::serialize(status_review), h).outcome == "allowed");
}
