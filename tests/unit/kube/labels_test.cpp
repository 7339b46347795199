#include "koord/kube/labels.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using koord::kube::Labels;
using koord::kube::LabelSelector;
using koord::kube::LabelSelectorOperator;
using koord::kube::Requirement;
using koord::kube::Selector;
using koord::kube::SelectorOperator;

TEST_CASE("label keys and values follow Kubernetes' rules", "[kube][labels]") {
  using koord::kube::validateLabelKey;
  using koord::kube::validateLabelValue;
  for (const char* good : {"a", "A", "1", "app", "app.kubernetes.io/name", "k8s.io/a_b-c.d",
                           "node-role.kubernetes.io/control-plane", "x/y", "a-b_c.D9"}) {
    INFO(good);
    CHECK_FALSE(validateLabelKey(good).has_value());
  }
  const std::string name63(63, 'a');
  const std::string prefix253 = std::string(63, 'p') + "." + std::string(63, 'q') + "." +
                                std::string(63, 'r') + "." + std::string(61, 's');
  REQUIRE(prefix253.size() == 253);
  CHECK_FALSE(validateLabelKey(name63).has_value());
  CHECK_FALSE(validateLabelKey(prefix253 + "/" + name63).has_value());
  for (const std::string& bad :
       {std::string(""), std::string("-a"), std::string("a-"), std::string("a b"),
        std::string("a/b/c"), std::string("/a"), std::string("a/"), std::string("Upper.io/a"),
        std::string("a_.io/b"), std::string("é"), name63 + "a", prefix253 + "x/a",
        std::string("a..b/c"), std::string("a=b")}) {
    INFO(bad);
    CHECK(validateLabelKey(bad).has_value());
  }
  CHECK_THAT(*validateLabelKey("/a"), Catch::Contains("prefix part must be non-empty"));
  CHECK_THAT(*validateLabelKey(name63 + "a"), Catch::Contains("no more than 63"));

  for (const std::string& good :
       {std::string(""), std::string("v"), std::string("v1.2_3-x"), name63}) {
    CHECK_FALSE(validateLabelValue(good).has_value());
  }
  for (const std::string& bad : {std::string("-v"), std::string("v-"), std::string("a/b"),
                                 std::string("a b"), name63 + "a"}) {
    INFO(bad);
    CHECK(validateLabelValue(bad).has_value());
  }
}

namespace {

Selector mustParse(std::string_view text) {
  auto s = Selector::parse(text);
  INFO(text);
  REQUIRE(s.has_value());
  return *s;
}

}  // namespace

TEST_CASE("selector strings parse and match like labels.Parse", "[kube][labels]") {
  struct Case {
    const char* selector;
    Labels labels;
    bool want;
  };
  const std::vector<Case> cases = {
      {"", {{"x", "y"}}, true},
      {"x=y", {{"x", "y"}}, true},
      {"x==y", {{"x", "y"}}, true},
      {"x=z", {{"x", "y"}}, false},
      {"x=", {{"x", ""}}, true},
      {"x=", {}, false},
      {"x!=y", {{"x", "z"}}, true},
      {"x!=y", {}, true},
      {"x!=y", {{"x", "y"}}, false},
      {"x in (y,z)", {{"x", "z"}}, true},
      {"x in (y,z)", {{"x", "w"}}, false},
      {"x in (y,z)", {}, false},
      {"x notin (y,z)", {{"x", "w"}}, true},
      {"x notin (y,z)", {}, true},
      {"x notin (y,z)", {{"x", "y"}}, false},
      {"x", {{"x", ""}}, true},
      {"x", {{"y", "x"}}, false},
      {"!x", {{"y", "x"}}, true},
      {"!x", {{"x", "y"}}, false},
      {"x>1", {{"x", "2"}}, true},
      {"x>1", {{"x", "1"}}, false},
      {"x>1", {{"x", "a"}}, false},
      {"x<1", {{"x", "-5"}}, true},
      {"x<1", {}, false},
      {"x=y,z=w", {{"x", "y"}, {"z", "w"}}, true},
      {"x=y,z=w", {{"x", "y"}}, false},
      {"x=y, z in (a,b), !q", {{"x", "y"}, {"z", "b"}}, true},
      {"x=y, z in (a,b), !q", {{"x", "y"}, {"z", "b"}, {"q", ""}}, false},
      {"  x  =  y  ", {{"x", "y"}}, true},
      {"x in ()", {{"x", ""}}, true},
      {"x in (,a)", {{"x", ""}}, true},
      {"x in (a,)", {{"x", "a"}}, true},
      {"in in (in,notin)", {{"in", "notin"}}, true},
      {"example.com/role in (db)", {{"example.com/role", "db"}}, true},
  };
  for (const auto& c : cases) {
    INFO(c.selector);
    CHECK(mustParse(c.selector).matches(c.labels) == c.want);
  }
}

TEST_CASE("selector strings print canonically and round-trip", "[kube][labels]") {
  const std::vector<std::pair<const char*, const char*>> cases = {
      {"", ""},
      {"x=y", "x=y"},
      {"x==y", "x==y"},
      {"x!=y", "x!=y"},
      {"x", "x"},
      {"!x", "!x"},
      {"x in (z,y,y)", "x in (y,z)"},
      {"x notin (b, a)", "x notin (a,b)"},
      {"z=1,a=2,m", "a=2,m,z=1"},
      {"x>5,x<9", "x>5,x<9"},
      {"x=", "x="},
      {"x in ()", "x in ()"},
      {"x in (,a)", "x in (,a)"},
      {"app.kubernetes.io/name in (web),tier!=db", "app.kubernetes.io/name in (web),tier!=db"},
  };
  for (const auto& [in, want] : cases) {
    INFO(in);
    Selector s = mustParse(in);
    CHECK(s.toString() == want);
    CHECK(mustParse(s.toString()) == s);
  }
}

TEST_CASE("selector parse errors name the bad token", "[kube][labels]") {
  const std::vector<std::pair<const char*, const char*>> cases = {
      {"x=a||y=b", "invalid label value \"a||y\""},
      {"x==a==b", "found '==', expected: ',' or 'end of string'"},
      {"!x=a", "found '=', expected: ',' or 'end of string'"},
      {"x in (a", "found '', expected: ',' or ')'"},
      {"x in a", "found 'a' expected: '('"},
      {"x in (a b)", "found 'b', expected: ',' or ')'"},
      {"x=a,", "found '', expected: identifier after ','"},
      {",x=a", "found ',', expected: !, identifier, or 'end of string'"},
      {"x y", "found 'y', expected: in, notin"},
      {"x=(a)", "found '(', expected: identifier"},
      {"-x=a", "invalid label key \"-x\""},
      {"x=-a", "invalid label value \"-a\""},
      {"x>a", "must be an integer"},
      {"x>", "must be an integer"},
      {"a/b/c", "invalid label key \"a/b/c\""},
      {"x in (a,b),", "expected: identifier after ','"},
      {"!", "found '', expected: identifier"},
  };
  for (const auto& [in, want] : cases) {
    INFO(in);
    auto s = Selector::parse(in);
    REQUIRE_FALSE(s.has_value());
    CHECK_THAT(s.error().message, Catch::Contains(want));
  }
}

TEST_CASE("Requirement::make validates like labels.NewRequirement", "[kube][labels]") {
  CHECK_FALSE(Requirement::make("x", SelectorOperator::kIn, {}).has_value());
  CHECK_FALSE(Requirement::make("x", SelectorOperator::kEquals, {"a", "b"}).has_value());
  CHECK_FALSE(Requirement::make("x", SelectorOperator::kExists, {"a"}).has_value());
  CHECK_FALSE(Requirement::make("x", SelectorOperator::kGreaterThan, {"1", "2"}).has_value());
  CHECK_FALSE(Requirement::make("x", SelectorOperator::kLessThan, {"1.5"}).has_value());
  CHECK_FALSE(Requirement::make("bad key", SelectorOperator::kExists, {}).has_value());
  auto r = Requirement::make("x", SelectorOperator::kIn, {"b", "a", "b"});
  REQUIRE(r.has_value());
  CHECK(r->values() == std::vector<std::string>{"a", "b"});
  CHECK(r->toString() == "x in (a,b)");
  CHECK_THROWS(Requirement::make("x", SelectorOperator::kIn, {}).value());
}

TEST_CASE("metav1.LabelSelector converts as LabelSelectorAsSelector", "[kube][labels]") {
  using koord::kube::toSelector;
  // A nil selector matches nothing; an empty one everything.
  auto nil = toSelector(nullptr);
  REQUIRE(nil.has_value());
  CHECK(nil->matchesNothing());
  CHECK_FALSE(nil->matches({}));
  CHECK(toSelector(LabelSelector{})->matches({{"a", "b"}}));
  CHECK(toSelector(LabelSelector{})->empty());

  LabelSelector ls;
  ls.match_labels = {{"app", "web"}};
  ls.match_expressions = {{"tier", LabelSelectorOperator::kIn, {"fe", "be"}},
                          {"canary", LabelSelectorOperator::kDoesNotExist, {}},
                          {"env", LabelSelectorOperator::kNotIn, {"dev"}},
                          {"zone", LabelSelectorOperator::kExists, {}}};
  auto s = toSelector(ls);
  REQUIRE(s.has_value());
  CHECK(s->toString() == "app=web,!canary,env notin (dev),tier in (be,fe),zone");
  CHECK(s->matches({{"app", "web"}, {"tier", "fe"}, {"zone", "z1"}}));
  CHECK_FALSE(s->matches({{"app", "web"}, {"tier", "fe"}, {"zone", "z1"}, {"canary", "1"}}));
  CHECK_FALSE(s->matches({{"app", "web"}, {"tier", "fe"}, {"zone", "z1"}, {"env", "dev"}}));
  CHECK_FALSE(s->matches({{"app", "web"}, {"tier", "fe"}}));
  CHECK(mustParse(s->toString()) == *s);

  LabelSelector bad;
  bad.match_expressions = {{"ok", LabelSelectorOperator::kExists, {}},
                           {"tier", LabelSelectorOperator::kIn, {}}};
  auto err = toSelector(bad);
  REQUIRE_FALSE(err.has_value());
  CHECK_THAT(err.error().message, Catch::Contains("matchExpressions[1]"));
  LabelSelector bad_label;
  bad_label.match_labels = {{"app", "not valid"}};
  CHECK_THAT(toSelector(bad_label).error().message, Catch::Contains("matchLabels"));
}

TEST_CASE("fromSet selects by equality on every pair", "[kube][labels]") {
  Selector s = Selector::fromSet({{"b", "2"}, {"a", "1"}});
  CHECK(s.toString() == "a=1,b=2");
  CHECK(s.matches({{"a", "1"}, {"b", "2"}, {"c", "3"}}));
  CHECK_FALSE(s.matches({{"a", "1"}}));
  CHECK(Selector::fromSet({}).empty());
}
