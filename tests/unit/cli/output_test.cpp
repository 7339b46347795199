#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include "koord/kube/yaml_json.h"
#include "output/output_format.h"
#include "output/table.h"
#include "output/yaml_writer.h"

namespace json = boost::json;
using namespace koord::roles::cli;

TEST_CASE("yaml output reads back as the same value", "[cli][output]") {
  // Strings YAML would take for bools, nulls, numbers or syntax stay strings.
  const json::value v = json::parse(R"({
    "plain": "koord-batch", "yes": "yes", "on": "On", "null": "null", "tilde": "~",
    "empty": "", "number": "0755", "float": "1e3", "negative": "-1", "colon": "a: b",
    "hash": "a #b", "lead": " x", "dash": "- x", "quote": "\"q\"", "newline": "a\nb",
    "unicode": "\u00e9t\u00e9", "n": 12, "f": 1.5, "b": false, "nothing": null,
    "list": [1, "two", {"three": 3, "four": [4]}, [], {}],
    "nested": {"deeper": {"deepest": ["a"]}}, "emptyList": [], "emptyObject": {}
  })");
  const std::string text = toYaml(v);
  auto back = koord::kube::yamlToJson(text);
  INFO(text);
  REQUIRE(back.has_value());
  CHECK(*back == v);
  CHECK(text.find("plain: koord-batch\n") != std::string::npos);
  CHECK(text.find("yes: \"yes\"\n") == std::string::npos);  // the key is quoted too
  CHECK(text.find("\"yes\": \"yes\"\n") != std::string::npos);
}

TEST_CASE("a list at the top and lists in lists read back", "[cli][output]") {
  const json::value v = json::parse(R"([[1, [2, 3]], {"a": [{"b": 1}, {"c": [true]}]}, "x"])");
  auto back = koord::kube::yamlToJson(toYaml(v));
  INFO(toYaml(v));
  REQUIRE(back.has_value());
  CHECK(*back == v);
}

TEST_CASE("tables align columns as kubectl does", "[cli][output]") {
  Table t({"NAME", "CPU"});
  t.addRow({"node-a", "1500m"});
  t.addRow({"b", ""});
  t.addRow({"c", "1m", "dropped"});
  CHECK(t.render() ==
        "NAME     CPU\n"
        "node-a   1500m\n"
        "b        <none>\n"
        "c        1m\n");
  CHECK(Table({"NAME"}).render() == "NAME\n");
}

TEST_CASE("output formats are kubectl's names", "[cli][output]") {
  CHECK(parseOutputFormat("") == OutputFormat::kTable);
  CHECK(parseOutputFormat("wide") == OutputFormat::kTable);
  CHECK(parseOutputFormat("json") == OutputFormat::kJson);
  CHECK(parseOutputFormat("yaml") == OutputFormat::kYaml);
  CHECK_THROWS_WITH(parseOutputFormat("xml"), Catch::Contains("\"xml\""));
  const json::value v = json::parse(R"({"a": [1, {"b": null}], "c": {}})");
  const std::string text = formatStructured(v, OutputFormat::kJson);
  CHECK(json::parse(text) == v);
  CHECK(text.back() == '\n');
}
