#include "koord/kube/yaml_json.h"

#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include <string>

#include "catch_expected.h"

namespace json = boost::json;
using koord::kube::yamlToJson;

namespace {

json::value valueOf(const std::string& scalar) {
  auto doc = yamlToJson("v: " + scalar + "\n");
  REQUIRE(doc);
  return doc->at("v");
}

}  // namespace

TEST_CASE("plain scalars resolve as go-yaml v2 does, quoted ones stay strings", "[yaml]") {
  struct Row {
    std::string yaml;
    std::string json;  // the expected value as JSON text
  };
  const Row rows[] = {
      {"10", "10"},
      {"\"10\"", "\"10\""},
      {"'10'", "\"10\""},
      {"!!str 10", "\"10\""},
      {"!!int \"12\"", "12"},
      {"+12", "12"},
      {"-7", "-7"},
      {"1_000", "1000"},
      {"0x1F", "31"},
      {"0o17", "15"},
      {"017", "15"},
      {"0b101", "5"},
      {"08", "8"},  // not octal, so a float: 8
      {"9223372036854775807", "9223372036854775807"},
      {"9223372036854775808", "9223372036854775808"},
      {"1e3", "1000"},
      {"1.0", "1"},
      {"1.5", "1.5"},
      {"-.5", "-0.5"},
      {".5", "0.5"},
      {"!!float 2", "2"},
      {"1e400", "\"1e400\""},
      {"yes", "true"},
      {"Yes", "true"},
      {"YES", "true"},
      {"y", "true"},
      {"on", "true"},
      {"True", "true"},
      {"no", "false"},
      {"N", "false"},
      {"off", "false"},
      {"FALSE", "false"},
      {"\"yes\"", "\"yes\""},
      {"'no'", "\"no\""},
      {"tRue", "\"tRue\""},
      {"~", "null"},
      {"null", "null"},
      {"NULL", "null"},
      {"\"null\"", "\"null\""},
      {"", "null"},
      {"abc", "\"abc\""},
      {"2001-12-14", "\"2001-12-14\""},
      {"12:30", "\"12:30\""},
      {"15s", "\"15s\""},
      {"!custom text", "\"text\""},
  };
  for (const Row& row : rows) {
    CAPTURE(row.yaml);
    const json::value got = valueOf(row.yaml);
    const json::value want = json::parse(row.json);
    CHECK(got.kind() == want.kind());
    CHECK(got == want);
  }
}

TEST_CASE("block scalars, lists and nested maps convert", "[yaml]") {
  auto doc = yamlToJson("a:\n  b: |\n    line\n  c: [1, two, 3.5]\n");
  REQUIRE(doc);
  CHECK(*doc == json::parse(R"({"a":{"b":"line\n","c":[1,"two",3.5]}})"));
}

TEST_CASE("map keys become strings as sigs.k8s.io/yaml writes them", "[yaml]") {
  auto doc = yamlToJson("yes: 1\n10: 2\n1.5: 3\n1e6: 4\n\"quoted\": 5\nno: 6\n0.0001: 7\n");
  REQUIRE(doc);
  CHECK(*doc == json::parse(R"({"true":1,"10":2,"1.5":3,"1e+06":4,"quoted":5,"false":6,
                                "0.0001":7})"));
  // The YAML 1.1 trap go-yaml v2 keeps: a plain y or n key is a boolean.
  auto trap = yamlToJson("x: 1\ny: 2\n\"n\": 3\n");
  REQUIRE(trap);
  CHECK(*trap == json::parse(R"({"x":1,"true":2,"n":3})"));
}

// A float key goes through float32 as sigs.k8s.io/yaml's FormatFloat(f, 'g', -1, 32) does: one
// beyond float's range is an infinity there. koord read past its buffer on these (found by
// tests/fuzz/scheduler_config_fuzz).
TEST_CASE("float map keys beyond float32's range are infinities", "[yaml]") {
  auto doc = yamlToJson("1e39: 1\n-1e39: 2\n3.4e38: 3\n");
  REQUIRE(doc);
  CHECK(*doc == json::parse(R"({".inf":1,"-.inf":2,"3.4e+38":3})"));
}

TEST_CASE("merge keys fill in what the map does not set itself", "[yaml]") {
  auto doc = yamlToJson("base: &b {a: 1, b: 2}\nm:\n  <<: *b\n  b: 3\n");
  REQUIRE(doc);
  CHECK(doc->at("m") == json::parse(R"({"b":3,"a":1})"));
}

TEST_CASE("YAML faults are errors naming the path and line", "[yaml]") {
  struct Row {
    std::string yaml;
    std::string error;
  };
  const Row rows[] = {
      {"a: 1\na: 2\n", "duplicate key \"a\" (line 2)"},
      {"p:\n  - x: 1\n    x: 2\n", "p[0]: duplicate key \"x\" (line 3)"},
      {"yes: 1\ntrue: 2\n", "duplicate key \"true\" (line 2)"},
      {"v: .inf\n", "v: \".inf\" has no JSON form (line 1)"},
      {"v: -.Inf\n", "v: \"-.Inf\" has no JSON form (line 1)"},
      {"v: .nan\n", "v: \".nan\" has no JSON form (line 1)"},
      {"~: 1\n", "null map key (line 1)"},
      {"v: !!int abc\n", "v: cannot decode \"abc\" as !!int (line 1)"},
      {"v: !!binary aGk=\n", "v: unsupported tag !!binary (line 1)"},
      {"m:\n  <<: 3\n", "m.<<: expected a map or a list of maps to merge (line 2)"},
      {"a: 1\n---\nb: 2\n", "expected one YAML document, found 2"},
      {"a: [1, 2\n", "malformed YAML at line"},
  };
  for (const Row& row : rows) {
    CAPTURE(row.yaml);
    auto doc = yamlToJson(row.yaml);
    REQUIRE_FALSE(doc);
    CHECK_THAT(doc.error().message, Catch::Matchers::StartsWith(row.error));
  }
}

// yaml-cpp 0.7's LoadAll never returned on these (tests/fuzz/scheduler_config_fuzz found the
// first one): a ',' where a block node should start is parsed as an endless run of empty
// documents. A --config file holding one must be an error, not a scheduler that hangs at start.
TEST_CASE("a stray ',' outside a flow collection is an error, not a hang", "[yaml]") {
  for (const std::string& yaml :
       {std::string(",: fxo\0\0\xeb", 9), std::string(","), std::string("- ,"),
        std::string("\"x\" ,"), std::string("!!str ,"), std::string("a: 1\n---\n,\n")}) {
    CAPTURE(yaml);
    auto doc = yamlToJson(yaml);
    REQUIRE_FALSE(doc);
    CHECK_THAT(doc.error().message, Catch::Matchers::StartsWith("malformed YAML at line"));
  }
  // ',' inside flow collections and plain scalars is still fine.
  auto doc = yamlToJson("a: [1, 2]\nb: {c: d, e: f}\ng: x, y\n");
  REQUIRE(doc);
  CHECK(doc->at("g") == "x, y");
}

TEST_CASE("an empty document is null, a trailing --- is no second document", "[yaml]") {
  auto empty = yamlToJson("");
  REQUIRE(empty);
  CHECK(empty->is_null());
  auto trailing = yamlToJson("a: 1\n---\n");
  REQUIRE(trailing);
  CHECK(*trailing == json::parse(R"({"a":1})"));
}

TEST_CASE("JSON text is read as YAML", "[yaml]") {
  auto doc = yamlToJson(R"({"a": [1, "2", true, null], "b": {"c": 1.25}})");
  REQUIRE(doc);
  CHECK(*doc == json::parse(R"({"a":[1,"2",true,null],"b":{"c":1.25}})"));
}
