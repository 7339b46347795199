#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>
#include <string>

#include "koord/kube/time.h"
#include "snapshot/cluster_snapshot.h"

namespace json = boost::json;
using namespace koord::roles::cli;

namespace {

const std::string kRecording = std::string(KOORD_CLI_DATA_DIR) + "/cluster-snapshot.json";

std::string withItems(std::string_view items) {
  return std::string(R"({"apiVersion":"koord.koordinator.sh/v1alpha1","kind":"Snapshot",)"
                     R"("takenAt":"2026-01-02T03:04:05Z","server":"https://x","items":[)") +
         std::string(items) + "]}";
}

}  // namespace

TEST_CASE("the recorded snapshot reads, and writes back line for line", "[cli][snapshot]") {
  auto snapshot = readSnapshotFile(kRecording);
  REQUIRE(snapshot.has_value());
  CHECK(snapshot->of("Node").size() == 2);
  CHECK(snapshot->of("Pod").size() == 3);
  CHECK(snapshot->of("NodeMetric").size() == 2);
  CHECK(snapshot->of("ConfigMap").size() == 2);
  CHECK(snapshot->of("NodeSLO").size() == 1);
  CHECK(snapshot->of("Reservation").size() == 1);
  CHECK(snapshot->of("Device").empty());
  CHECK(snapshot->missing_kinds.empty());
  for (const auto& kind : snapshotKinds()) {
    for (const auto& item : snapshot->of(kind.kind)) {
      CHECK(item.at("apiVersion").as_string() == kind.api_version);
      CHECK(item.at("metadata").as_object().if_contains("managedFields") == nullptr);
    }
  }
  // What koord snapshot wrote is already in formatSnapshot's order.
  std::string original;
  {
    std::ifstream in(kRecording);
    original.assign(std::istreambuf_iterator<char>(in), {});
  }
  CHECK(formatSnapshot(*snapshot) == original);
}

TEST_CASE("a kubectl List is a snapshot taken at its newest NodeMetric", "[cli][snapshot]") {
  auto snapshot = parseSnapshot(R"({"apiVersion":"v1","kind":"List","items":[
    {"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"}},
    {"apiVersion":"v1","kind":"Secret","metadata":{"name":"s","namespace":"x"}},
    {"apiVersion":"slo.koordinator.sh/v1alpha1","kind":"NodeMetric","metadata":{"name":"n1"},
     "status":{"updateTime":"2026-05-01T10:00:00Z"}}]})");
  REQUIRE(snapshot.has_value());
  CHECK(snapshot->of("Node").size() == 1);
  CHECK(snapshot->of("Secret").empty());
  CHECK(snapshot->taken_at == *koord::kube::parseTime("2026-05-01T10:00:00Z"));
  // YAML too, as kubectl get -o yaml writes it.
  auto yaml = parseSnapshot(
      "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Node\n"
      "  metadata:\n    name: n2\n");
  REQUIRE(yaml.has_value());
  CHECK(yaml->of("Node").at(0).at("metadata").at("name").as_string() == "n2");
}

TEST_CASE("malformed snapshots are refused naming the item", "[cli][snapshot]") {
  auto error = [](std::string_view text) {
    auto s = parseSnapshot(text);
    REQUIRE_FALSE(s.has_value());
    return s.error().message;
  };
  CHECK_THAT(error("[1]"), Catch::Contains("not an object"));
  CHECK_THAT(error("{\"kind\":\"Pod\"}"), Catch::Contains("kind \"Pod\""));
  CHECK_THAT(error("{\"kind\":\"Snapshot\",\"apiVersion\":\"v9\"}"), Catch::Contains("v9"));
  CHECK_THAT(error(R"({"apiVersion":"koord.koordinator.sh/v1alpha1","kind":"Snapshot",)"
                   R"("takenAt":"yesterday"})"),
             Catch::Contains("yesterday"));
  CHECK_THAT(error(withItems(R"({"apiVersion":"v1","kind":"Node","metadata":{}})")),
             Catch::Contains("items[0] (Node): no metadata.name"));
  CHECK_THAT(error(withItems(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"}})")),
             Catch::Contains("no metadata.namespace"));
  CHECK_THAT(error(withItems(R"(1)")), Catch::Contains("items[0]: not an object"));
  CHECK_THAT(error(withItems(R"({"apiVersion":"v2","kind":"Node","metadata":{"name":"n"}})")),
             Catch::Contains("apiVersion \"v2\""));
  CHECK_THAT(error("{not json"), Catch::Contains("not JSON"));
  // YAML lets any byte into a string; a snapshot must be UTF-8 to be written again.
  CHECK_THAT(error("kind: List\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata:\n"
                   "    name: \"n\xff\"\n"),
             Catch::Contains("not valid YAML text"));
  auto missing = readSnapshotFile("/nonexistent/koord-snapshot.json");
  REQUIRE_FALSE(missing.has_value());
  CHECK_THAT(missing.error().message, Catch::Contains("/nonexistent/koord-snapshot.json"));
}

TEST_CASE("a snapshot written and read back is the same", "[cli][snapshot]") {
  auto snapshot = parseSnapshot(
      withItems(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"b","namespace":"x"}},)"
                R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n"}},)"
                R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","namespace":"x"}})"));
  REQUIRE(snapshot.has_value());
  snapshot->missing_kinds = {"Device"};
  const std::string text = formatSnapshot(*snapshot);
  auto again = parseSnapshot(text);
  REQUIRE(again.has_value());
  CHECK(again->taken_at == snapshot->taken_at);
  CHECK(again->server == "https://x");
  CHECK(again->missing_kinds == std::vector<std::string>{"Device"});
  // Nodes first, pods by name.
  CHECK(text.find("\"n\"") < text.find("\"a\""));
  CHECK(text.find("\"a\"") < text.find("\"b\""));
  CHECK(formatSnapshot(*again) == text);
}
