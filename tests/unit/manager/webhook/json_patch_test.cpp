#include "webhook/json_patch.h"

#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include "webhook_test_util.h"

using namespace koord::manager::webhook;
using koord::manager::webhook::testing::parse;
namespace json = boost::json;

namespace {

// The patch must turn `from` into `to` when applied.
void checkRoundTrip(std::string_view from_text, std::string_view to_text) {
  json::value from = parse(from_text);
  json::value to = parse(to_text);
  json::array patch = createJsonPatch(from, to);
  auto applied = applyJsonPatch(from, patch);
  INFO("patch: " << json::serialize(patch));
  REQUIRE(applied.has_value());
  CHECK(*applied == to);
}

}  // namespace

TEST_CASE("JSON pointer tokens escape ~ and /", "[webhook][json_patch]") {
  CHECK(escapeJsonPointerToken("koordinator.sh/qosClass") == "koordinator.sh~1qosClass");
  CHECK(escapeJsonPointerToken("a~b") == "a~0b");
  CHECK(escapeJsonPointerToken("~/") == "~0~1");
  CHECK(escapeJsonPointerToken("") == "");
  CHECK(escapeJsonPointerToken("plain") == "plain");
}

TEST_CASE("equal documents give an empty patch", "[webhook][json_patch]") {
  auto doc = parse(R"({"a": [1, {"b": null}], "c": "x"})");
  CHECK(createJsonPatch(doc, doc).empty());
}

TEST_CASE("a new label is one add with an escaped path", "[webhook][json_patch]") {
  auto from = parse(R"({"metadata": {"labels": {"app": "x"}}})");
  auto to = parse(R"({"metadata": {"labels": {"app": "x", "koordinator.sh/qosClass": "BE"}}})");
  CHECK(createJsonPatch(from, to) ==
        parse(R"([{"op": "add", "path": "/metadata/labels/koordinator.sh~1qosClass",
                   "value": "BE"}])"));
}

TEST_CASE("nested objects patch key by key", "[webhook][json_patch]") {
  auto from = parse(R"({"spec": {"a": 1, "b": {"c": 2, "d": 3}, "gone": true}})");
  auto to = parse(R"({"spec": {"a": 2, "b": {"c": 2, "e": 4}, "new": {"x": 1}}})");
  json::array patch = createJsonPatch(from, to);
  CHECK(patch == parse(R"([
    {"op": "remove", "path": "/spec/gone"},
    {"op": "replace", "path": "/spec/a", "value": 2},
    {"op": "remove", "path": "/spec/b/d"},
    {"op": "add", "path": "/spec/b/e", "value": 4},
    {"op": "add", "path": "/spec/new", "value": {"x": 1}}])"));
  checkRoundTrip(json::serialize(from), json::serialize(to));
}

TEST_CASE("one changed container is patched in place", "[webhook][json_patch]") {
  auto from = parse(R"({"spec": {"containers": [
    {"name": "a", "resources": {"requests": {"cpu": "1"}}},
    {"name": "b", "resources": {"requests": {"cpu": "500m"}}}]}})");
  auto to = parse(R"({"spec": {"containers": [
    {"name": "a", "resources": {"requests": {"cpu": "1"}}},
    {"name": "b", "resources": {"requests": {"kubernetes.io/batch-cpu": "500"}}}]}})");
  CHECK(createJsonPatch(from, to) == parse(R"([
    {"op": "remove", "path": "/spec/containers/1/resources/requests/cpu"},
    {"op": "add", "path": "/spec/containers/1/resources/requests/kubernetes.io~1batch-cpu",
     "value": "500"}])"));
}

TEST_CASE("arrays grow and shrink at the end, or are replaced", "[webhook][json_patch]") {
  CHECK(
      createJsonPatch(parse("[1, 2]"), parse("[1, 2, 3, 4]")) ==
      parse(
          R"([{"op": "add", "path": "/2", "value": 3}, {"op": "add", "path": "/3", "value": 4}])"));
  CHECK(createJsonPatch(parse("[1, 2, 3, 4]"), parse("[1, 2]")) ==
        parse(R"([{"op": "remove", "path": "/3"}, {"op": "remove", "path": "/2"}])"));
  CHECK(createJsonPatch(parse(R"({"t": [1, 2, 3]})"), parse(R"({"t": [9, 2]})")) ==
        parse(R"([{"op": "replace", "path": "/t", "value": [9, 2]}])"));
  CHECK(createJsonPatch(parse(R"({"t": [1]})"), parse(R"({"t": {"a": 1}})")) ==
        parse(R"([{"op": "replace", "path": "/t", "value": {"a": 1}}])"));
  CHECK(createJsonPatch(parse("1"), parse("\"x\"")) ==
        parse(R"([{"op": "replace", "path": "", "value": "x"}])"));
}

TEST_CASE("patches round-trip through apply", "[webhook][json_patch]") {
  checkRoundTrip(R"({})", R"({"a/b": {"c~d": [1, 2]}})");
  checkRoundTrip(R"({"a": [1, 2, 3]})", R"({"a": []})");
  checkRoundTrip(R"({"a": [{"x": 1}, {"y": 2}]})", R"({"a": [{"x": 2}, {"y": 2, "z": null}, 5]})");
  checkRoundTrip(R"({"a": [1, 2, 3]})", R"({"a": [3, 2]})");
  checkRoundTrip(R"({"a": null, "b": true})", R"({"a": {"k": false}, "b": false})");
  checkRoundTrip(R"({"metadata": {"labels": {"koordinator.sh/qosClass": "LS"}}})",
                 R"({"metadata": {"labels": {"koordinator.sh/qosClass": "BE", "~": "~"}}})");
}

TEST_CASE("applyJsonPatch refuses bad operations", "[webhook][json_patch]") {
  auto doc = parse(R"({"a": [1]})");
  auto fails = [&](std::string_view patch) {
    return !applyJsonPatch(doc, parse(patch).as_array()).has_value();
  };
  CHECK(fails(R"([{"op": "remove", "path": "/b"}])"));
  CHECK(fails(R"([{"op": "replace", "path": "/a/5", "value": 1}])"));
  CHECK(fails(R"([{"op": "remove", "path": "/a/01"}])"));
  CHECK(fails(R"([{"op": "frob", "path": "/a"}])"));
  CHECK(fails(R"([{"op": "add", "path": "a", "value": 1}])"));
  CHECK(fails(R"([{"op": "add", "path": "/x~2", "value": 1}])"));
  CHECK(fails(R"([{"op": "test", "path": "/a/0", "value": 2}])"));
  CHECK_FALSE(fails(R"([{"op": "test", "path": "/a/0", "value": 1}])"));
  auto moved =
      applyJsonPatch(doc, parse(R"([{"op": "move", "from": "/a", "path": "/b"}])").as_array());
  REQUIRE(moved.has_value());
  CHECK(*moved == parse(R"({"b": [1]})"));
  auto appended =
      applyJsonPatch(doc, parse(R"([{"op": "add", "path": "/a/-", "value": 2}])").as_array());
  REQUIRE(appended.has_value());
  CHECK(*appended == parse(R"({"a": [1, 2]})"));
}
