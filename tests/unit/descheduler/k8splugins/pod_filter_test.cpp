// The shared namespaces/labelSelector args: strict decoding and which pods pass.
#include "plugins/podfilter/pod_filter.h"

#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <string>

#include "fake_handle.h"

namespace koord::roles::descheduler::podfilter {
namespace {

Expected<CommonArgs> decode(std::string_view text) {
  const boost::json::value v = boost::json::parse(text);
  return decodeCommonArgs(v.as_object());
}

TEST_CASE("podfilter: namespaces and labelSelector are read", "[descheduler]") {
  auto a = decode(R"({"namespaces": {"include": ["a", "b"]},
                      "labelSelector": {"matchLabels": {"app": "web"}}})");
  REQUIRE(a.has_value());
  REQUIRE(a->namespaces);
  CHECK(a->namespaces->include == std::vector<std::string>{"a", "b"});
  CHECK(a->namespaces->exclude.empty());
  REQUIRE(a->label_selector);
  CHECK(a->label_selector->match_labels.at("app") == "web");

  auto none = decode("{}");
  REQUIRE(none.has_value());
  CHECK_FALSE(none->namespaces);
  CHECK_FALSE(none->label_selector);
}

TEST_CASE("podfilter: refusals name the field", "[descheduler]") {
  struct Case {
    const char* json;
    const char* want;
  };
  const Case cases[] = {
      {R"({"namespaces": {"include": ["a"], "exclude": ["b"]}})", "namespaces: only one of"},
      {R"({"namespaces": {"includes": ["a"]}})", "namespaces: unknown field \"includes\""},
      {R"({"namespaces": {"include": [1]}})", "namespaces.include[0]"},
      {R"({"namespaces": []})", "namespaces"},
      {R"({"labelSelector": {"matchLabel": {}}})", "labelSelector: unknown field"},
      {R"({"labelSelector": {"matchLabels": {"bad key!": "x"}}})", "labelSelector"},
  };
  for (const auto& c : cases) {
    INFO(c.json);
    auto a = decode(c.json);
    REQUIRE_FALSE(a.has_value());
    CHECK_THAT(a.error().message, Catch::Contains(c.want));
  }
}

TEST_CASE("podfilter: namespaces and labels decide which pods pass", "[descheduler]") {
  auto pod = [](std::string ns, std::string app) {
    auto p = testkit::makePod("p", "n1", 100, 1, "rs", std::move(ns));
    p->labels["app"] = std::move(app);
    return p;
  };
  struct Case {
    const char* json;
    const char* ns;
    const char* app;
    bool want;
  };
  const Case cases[] = {
      {"{}", "x", "web", true},
      {R"({"namespaces": {"include": ["a"]}})", "a", "web", true},
      {R"({"namespaces": {"include": ["a"]}})", "b", "web", false},
      {R"({"namespaces": {"exclude": ["a"]}})", "a", "web", false},
      {R"({"namespaces": {"exclude": ["a"]}})", "b", "web", true},
      {R"({"labelSelector": {"matchLabels": {"app": "web"}}})", "a", "web", true},
      {R"({"labelSelector": {"matchLabels": {"app": "web"}}})", "a", "db", false},
      {R"({"labelSelector": {}})", "a", "db", true},
  };
  for (const auto& c : cases) {
    INFO(c.json << " " << c.ns << " " << c.app);
    auto args = decode(c.json);
    REQUIRE(args.has_value());
    auto f = PodFilter::make(*args);
    REQUIRE(f.has_value());
    CHECK(f->matches(*pod(c.ns, c.app)) == c.want);
  }
  auto both = PodFilter::make(Namespaces{{"a"}, {"b"}}, std::nullopt);
  CHECK_FALSE(both.has_value());
}

}  // namespace
}  // namespace koord::roles::descheduler::podfilter
