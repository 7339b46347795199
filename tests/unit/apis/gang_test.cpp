// A pod's gang and a gang's settings as Koordinator's Coscheduling reads them: which label or
// annotation names the gang, every default and fallback of tryInitByPodConfig and
// tryInitByPodGroup, the values it refuses, and the bounds.
#include "koord/apis/gang.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <fmt/format.h>

#include "catch_expected.h"
#include "koord/apis/input_limits.h"

using namespace koord::apis;
namespace kube = koord::kube;
using namespace std::chrono_literals;

namespace {

constexpr std::chrono::nanoseconds kDefaultWait = 600s;

kube::Expected<GangSpec> fromPod(const kube::Labels& annotations, const kube::Labels& labels = {}) {
  return gangSpecFromPod("ns", labels, annotations, kDefaultWait);
}

// A pod in gang "g" that needs 2, plus `extra` annotations.
kube::Expected<GangSpec> gangOf(kube::Labels extra) {
  extra.emplace(std::string(kAnnotationGangName), "g");
  extra.emplace(std::string(kAnnotationGangMinAvailable), "2");
  return fromPod(extra);
}

bool mentions(const GangSpec& spec, std::string_view text) {
  for (const std::string& line : spec.ignored) {
    if (line.find(text) != std::string::npos)
      return true;
  }
  return false;
}

}  // namespace

TEST_CASE("gang: the keys are Koordinator's", "[apis][gang]") {
  CHECK(kAnnotationGangName == "gang.scheduling.koordinator.sh/name");
  CHECK(kAnnotationGangMinAvailable == "gang.scheduling.koordinator.sh/min-available");
  CHECK(kAnnotationGangTotalNumber == "gang.scheduling.koordinator.sh/total-number");
  CHECK(kAnnotationGangMode == "gang.scheduling.koordinator.sh/mode");
  CHECK(kAnnotationGangWaitingTime == "gang.scheduling.koordinator.sh/waiting-time");
  CHECK(kAnnotationGangGroups == "gang.scheduling.koordinator.sh/groups");
  CHECK(kAnnotationGangMatchPolicy == "gang.scheduling.koordinator.sh/match-policy");
  CHECK(kAnnotationAliasGangMatchPolicy == "pod-group.scheduling.sigs.k8s.io/match-policy");
  CHECK(kLabelPodGroup == "pod-group.scheduling.sigs.k8s.io");
  CHECK(kLabelLightweightPodGroupName == "pod-group.scheduling.sigs.k8s.io/name");
  CHECK(kLabelLightweightPodGroupMinAvailable == "pod-group.scheduling.sigs.k8s.io/min-available");
  CHECK(toString(GangMode::kStrict) == "Strict");
  CHECK(toString(GangMode::kNonStrict) == "NonStrict");
  CHECK(toString(GangMatchPolicy::kOnceSatisfied) == "once-satisfied");
  CHECK(toString(GangMatchPolicy::kOnlyWaiting) == "only-waiting");
  CHECK(toString(GangMatchPolicy::kWaitingAndRunning) == "waiting-and-running");
}

TEST_CASE("gang: a pod's gang is named by the first non-empty source", "[apis][gang]") {
  const std::string pg(kLabelPodGroup);
  const std::string light(kLabelLightweightPodGroupName);
  const std::string annotation(kAnnotationGangName);

  auto none = podGang("ns", {}, {});
  REQUIRE(none.has_value());
  CHECK_FALSE(none->has_value());
  auto empty = podGangId("ns", {{pg, ""}, {light, ""}}, {{annotation, ""}});
  REQUIRE(empty.has_value());
  CHECK_FALSE(empty->has_value());

  auto by_group = podGang("ns", {{pg, "a"}, {light, "b"}}, {{annotation, "c"}});
  REQUIRE(by_group.has_value());
  REQUIRE(by_group->has_value());
  CHECK(**by_group == PodGang{"ns", "a", GangSource::kPodGroup});
  CHECK((*by_group)->id() == "ns/a");

  auto by_light = podGang("ns", {{pg, ""}, {light, "b"}}, {{annotation, "c"}});
  REQUIRE(by_light.has_value());
  REQUIRE(by_light->has_value());
  CHECK(**by_light == PodGang{"ns", "b", GangSource::kPodAnnotations});

  auto by_annotation = podGangId("ns", {}, {{annotation, "c"}});
  REQUIRE(by_annotation.has_value());
  CHECK(*by_annotation == "ns/c");

  auto too_long = podGangId("ns", {}, {{annotation, std::string(kMaxGangNameBytes + 1, 'x')}});
  REQUIRE_FALSE(too_long.has_value());
  CHECK_THAT(too_long.error().message,
             Catch::StartsWith("gang.scheduling.koordinator.sh/name: 254 bytes, more than the "
                               "253 allowed"));
}

TEST_CASE("gang: a pod with only a name and min-available takes every default", "[apis][gang]") {
  auto spec = gangOf({});
  REQUIRE(spec.has_value());
  CHECK(spec->id == "ns/g");
  CHECK(spec->source == GangSource::kPodAnnotations);
  CHECK(spec->min_available == 2);
  CHECK(spec->total_number == 2);
  CHECK(spec->mode == GangMode::kStrict);
  CHECK(spec->match_policy == GangMatchPolicy::kOnceSatisfied);
  CHECK(spec->wait_time == kDefaultWait);
  CHECK(spec->groups == std::vector<std::string>{"ns/g"});
  CHECK(spec->group_id == "ns/g");
  CHECK(spec->ignored.empty());
}

TEST_CASE("gang: a pod that sets everything", "[apis][gang]") {
  auto spec = gangOf({{std::string(kAnnotationGangTotalNumber), "5"},
                      {std::string(kAnnotationGangMode), "NonStrict"},
                      {std::string(kAnnotationGangMatchPolicy), "waiting-and-running"},
                      {std::string(kAnnotationGangWaitingTime), "1m30s"},
                      {std::string(kAnnotationGangGroups), R"(["ns/z", "other/a", "ns/g"])"}});
  REQUIRE(spec.has_value());
  CHECK(spec->total_number == 5);
  CHECK(spec->mode == GangMode::kNonStrict);
  CHECK(spec->match_policy == GangMatchPolicy::kWaitingAndRunning);
  CHECK(spec->wait_time == 90s);
  CHECK(spec->groups == std::vector<std::string>{"ns/g", "ns/z", "other/a"});
  CHECK(spec->group_id == "ns/g,ns/z,other/a");
  CHECK(spec->ignored.empty());
}

TEST_CASE("gang: min-available comes from the lightweight label first", "[apis][gang]") {
  const std::string light_min(kLabelLightweightPodGroupMinAvailable);
  auto spec = fromPod({{std::string(kAnnotationGangMinAvailable), "2"}},
                      {{std::string(kLabelLightweightPodGroupName), "g"}, {light_min, "7"}});
  REQUIRE(spec.has_value());
  CHECK(spec->id == "ns/g");
  CHECK(spec->min_available == 7);

  // An empty label falls through to the annotation.
  auto fallback = fromPod(
      {{std::string(kAnnotationGangName), "g"}, {std::string(kAnnotationGangMinAvailable), "+3"}},
      {{light_min, ""}});
  REQUIRE(fallback.has_value());
  CHECK(fallback->min_available == 3);

  // strconv.ParseInt's int32: a sign and digits, leading zeros allowed.
  for (const auto& [text, value] : std::vector<std::pair<std::string, int>>{
           {"007", 7}, {"-1", -1}, {"2147483647", 2147483647}}) {
    auto parsed = fromPod({{std::string(kAnnotationGangName), "g"},
                           {std::string(kAnnotationGangMinAvailable), text}});
    REQUIRE(parsed.has_value());
    CHECK(parsed->min_available == value);
  }
}

TEST_CASE("gang: a missing or malformed min-available refuses the gang", "[apis][gang]") {
  const std::string name(kAnnotationGangName);
  const std::string min(kAnnotationGangMinAvailable);
  struct Case {
    std::string what;
    kube::Labels labels;
    kube::Labels annotations;
    std::string error;
  };
  const Case cases[] = {
      {"no min-available",
       {},
       {{name, "g"}},
       "gang.scheduling.koordinator.sh/min-available: missing"},
      {"an empty one",
       {},
       {{name, "g"}, {min, ""}},
       "gang.scheduling.koordinator.sh/min-available: not an int32: \"\""},
      {"a word",
       {},
       {{name, "g"}, {min, "two"}},
       "gang.scheduling.koordinator.sh/min-available: not an int32: \"two\""},
      {"a fraction",
       {},
       {{name, "g"}, {min, "1.5"}},
       "gang.scheduling.koordinator.sh/min-available"},
      {"spaces", {}, {{name, "g"}, {min, " 2"}}, "gang.scheduling.koordinator.sh/min-available"},
      {"underscores",
       {},
       {{name, "g"}, {min, "1_0"}},
       "gang.scheduling.koordinator.sh/min-available"},
      {"a sign alone",
       {},
       {{name, "g"}, {min, "-"}},
       "gang.scheduling.koordinator.sh/min-available"},
      {"past int32",
       {},
       {{name, "g"}, {min, "2147483648"}},
       "gang.scheduling.koordinator.sh/min-available"},
      {"a bad lightweight label",
       {{std::string(kLabelLightweightPodGroupMinAvailable), "x"}},
       {{name, "g"}, {min, "2"}},
       "pod-group.scheduling.sigs.k8s.io/min-available: not an int32"},
      {"no gang", {}, {{min, "2"}}, "gang.scheduling.koordinator.sh/name: the pod is in no gang"},
      {"a PodGroup's pod",
       {{std::string(kLabelPodGroup), "pg"}},
       {{min, "2"}},
       "pod-group.scheduling.sigs.k8s.io: the pod's gang is PodGroup ns/pg"},
  };
  for (const Case& c : cases) {
    SECTION(c.what) {
      auto spec = fromPod(c.annotations, c.labels);
      REQUIRE_FALSE(spec.has_value());
      CHECK_THAT(spec.error().message, Catch::StartsWith(c.error));
    }
  }
}

TEST_CASE("gang: malformed settings fall back as Koordinator's do, and are named", "[apis][gang]") {
  SECTION("total-number") {
    auto word = gangOf({{std::string(kAnnotationGangTotalNumber), "five"}});
    REQUIRE(word.has_value());
    CHECK(word->total_number == 2);
    CHECK(mentions(*word, "gang.scheduling.koordinator.sh/total-number: not an int32: \"five\""));
    auto less = gangOf({{std::string(kAnnotationGangTotalNumber), "1"}});
    REQUIRE(less.has_value());
    CHECK(less->total_number == 2);
    CHECK(mentions(*less, "total-number: 1 is less than min-available 2"));
    // 0 is kept: Koordinator only raises a non-zero total.
    auto zero = gangOf({{std::string(kAnnotationGangTotalNumber), "0"}});
    REQUIRE(zero.has_value());
    CHECK(zero->total_number == 0);
    CHECK(zero->ignored.empty());
  }
  SECTION("mode") {
    for (std::string text : {"", "strict", "Loose"}) {
      auto spec = gangOf({{std::string(kAnnotationGangMode), text}});
      REQUIRE(spec.has_value());
      CHECK(spec->mode == GangMode::kStrict);
      CHECK(mentions(*spec, fmt::format("mode: unsupported value \"{}\", using Strict", text)));
    }
  }
  SECTION("match policy, and its alias") {
    auto bad = gangOf({{std::string(kAnnotationGangMatchPolicy), "all"}});
    REQUIRE(bad.has_value());
    CHECK(bad->match_policy == GangMatchPolicy::kOnceSatisfied);
    CHECK(mentions(*bad, "gang.scheduling.koordinator.sh/match-policy: unsupported value \"all\""));

    auto alias = gangOf({{std::string(kAnnotationAliasGangMatchPolicy), "only-waiting"}});
    REQUIRE(alias.has_value());
    CHECK(alias->match_policy == GangMatchPolicy::kOnlyWaiting);
    // The alias is read only when the annotation is empty.
    auto both = gangOf({{std::string(kAnnotationGangMatchPolicy), "waiting-and-running"},
                        {std::string(kAnnotationAliasGangMatchPolicy), "only-waiting"}});
    REQUIRE(both.has_value());
    CHECK(both->match_policy == GangMatchPolicy::kWaitingAndRunning);
    auto empty_first = gangOf({{std::string(kAnnotationGangMatchPolicy), ""},
                               {std::string(kAnnotationAliasGangMatchPolicy), "only-waiting"}});
    REQUIRE(empty_first.has_value());
    CHECK(empty_first->match_policy == GangMatchPolicy::kOnlyWaiting);
    auto bad_alias = gangOf({{std::string(kAnnotationAliasGangMatchPolicy), "x"}});
    REQUIRE(bad_alias.has_value());
    CHECK(mentions(*bad_alias, "pod-group.scheduling.sigs.k8s.io/match-policy: unsupported"));
  }
  SECTION("waiting-time") {
    for (std::string text : {"", "30", "0s", "-5s", "soon"}) {
      auto spec = gangOf({{std::string(kAnnotationGangWaitingTime), text}});
      REQUIRE(spec.has_value());
      CHECK(spec->wait_time == kDefaultWait);
      CHECK(mentions(*spec, "waiting-time: not a positive duration"));
      CHECK(mentions(*spec, "using 10m0s"));
    }
  }
  SECTION("groups") {
    const std::string key(kAnnotationGangGroups);
    for (std::string text : {"", "ns/a", "{}", "\"ns/a\"", "[", "7"}) {
      auto spec = gangOf({{key, text}});
      REQUIRE(spec.has_value());
      CHECK(spec->groups == std::vector<std::string>{"ns/g"});
      CHECK(mentions(*spec, "gang.scheduling.koordinator.sh/groups: not"));
    }
    for (std::string text : {"null", "[]"}) {
      auto spec = gangOf({{key, text}});
      REQUIRE(spec.has_value());
      CHECK(spec->groups == std::vector<std::string>{"ns/g"});
      CHECK(spec->ignored.empty());
    }
    // Go's decoder leaves items of another type at "", and keeps the rest.
    auto mixed = gangOf({{key, R"(["ns/b", 1, null, "ns/a"])"}});
    REQUIRE(mixed.has_value());
    CHECK(mixed->groups == std::vector<std::string>{"", "", "ns/a", "ns/b"});
    CHECK(mixed->group_id == ",,ns/a,ns/b");
    CHECK(mentions(*mixed, "items that are not strings"));
  }
}

TEST_CASE("gang: the groups annotation is bounded", "[apis][gang]") {
  const std::string key(kAnnotationGangGroups);
  std::string many = "[";
  for (std::size_t i = 0; i <= kMaxGangGroups; ++i)
    many += fmt::format("{}\"ns/g{}\"", i == 0 ? "" : ",", i);
  many += "]";
  auto too_many = gangOf({{key, many}});
  REQUIRE_FALSE(too_many.has_value());
  CHECK_THAT(too_many.error().message,
             Catch::StartsWith(
                 "gang.scheduling.koordinator.sh/groups: 257 items, more than the 256 allowed"));

  auto too_long = gangOf({{key, fmt::format(R"(["ns/a", "{}"])", std::string(318, 'x'))}});
  REQUIRE_FALSE(too_long.has_value());
  CHECK_THAT(too_long.error().message,
             Catch::StartsWith("gang.scheduling.koordinator.sh/groups[1]: 318 bytes"));

  auto huge = gangOf({{key, std::string(kMaxAnnotationValueBytes + 1, ' ')}});
  REQUIRE_FALSE(huge.has_value());
  CHECK_THAT(huge.error().message, Catch::StartsWith("gang.scheduling.koordinator.sh/groups: "));

  // At the bounds, accepted.
  std::string most = "[";
  for (std::size_t i = 0; i < kMaxGangGroups; ++i)
    most += fmt::format("{}\"ns/g{}\"", i == 0 ? "" : ",", i);
  most += "]";
  auto at_bound = gangOf({{key, most}});
  REQUIRE(at_bound.has_value());
  CHECK(at_bound->groups.size() == kMaxGangGroups);
}

TEST_CASE("gang: a long value is cut short in the messages", "[apis][gang]") {
  auto spec = gangOf({{std::string(kAnnotationGangMode), std::string(10000, 'm')}});
  REQUIRE(spec.has_value());
  REQUIRE(spec->ignored.size() == 1);
  CHECK(spec->ignored[0].size() < 300);
  CHECK_THAT(spec->ignored[0], Catch::Contains("(10000 bytes)"));
}

TEST_CASE("gang: a PodGroup's gang as tryInitByPodGroup reads it", "[apis][gang]") {
  PodGroup pg;
  pg.namespace_ = "team";
  pg.name = "train";
  pg.min_member = 3;

  auto bare = gangSpecFromPodGroup(pg, kDefaultWait);
  REQUIRE(bare.has_value());
  CHECK(bare->id == "team/train");
  CHECK(bare->source == GangSource::kPodGroup);
  CHECK(bare->min_available == 3);
  CHECK(bare->total_number == 3);
  CHECK(bare->mode == GangMode::kStrict);
  CHECK(bare->match_policy == GangMatchPolicy::kOnceSatisfied);
  CHECK(bare->wait_time == kDefaultWait);
  CHECK(bare->groups == std::vector<std::string>{"team/train"});
  CHECK(bare->ignored.empty());

  pg.schedule_timeout_seconds = 45;
  pg.annotations = {{std::string(kAnnotationGangTotalNumber), "6"},
                    {std::string(kAnnotationGangMode), "NonStrict"},
                    {std::string(kAnnotationGangMatchPolicy), "only-waiting"},
                    // Not read from a PodGroup: only pods have the alias.
                    {std::string(kAnnotationAliasGangMatchPolicy), "waiting-and-running"},
                    // Nor the waiting time: spec.scheduleTimeoutSeconds gives it.
                    {std::string(kAnnotationGangWaitingTime), "5s"},
                    {std::string(kAnnotationGangGroups), R"(["team/train", "team/eval"])"}};
  auto full = gangSpecFromPodGroup(pg, kDefaultWait);
  REQUIRE(full.has_value());
  CHECK(full->total_number == 6);
  CHECK(full->mode == GangMode::kNonStrict);
  CHECK(full->match_policy == GangMatchPolicy::kOnlyWaiting);
  CHECK(full->wait_time == 45s);
  CHECK(full->group_id == "team/eval,team/train");

  pg.annotations = {{std::string(kAnnotationAliasGangMatchPolicy), "only-waiting"},
                    {std::string(kAnnotationGangTotalNumber), "2"}};
  pg.schedule_timeout_seconds = -1;
  auto fallback = gangSpecFromPodGroup(pg, kDefaultWait);
  REQUIRE(fallback.has_value());
  CHECK(fallback->match_policy == GangMatchPolicy::kOnceSatisfied);
  CHECK(fallback->total_number == 3);
  CHECK(fallback->wait_time == kDefaultWait);
  CHECK(mentions(*fallback, "spec.scheduleTimeoutSeconds: negative (-1)"));
  CHECK(mentions(*fallback, "total-number: 2 is less than min-available 3"));

  pg.annotations = {
      {std::string(kAnnotationGangGroups), std::string(kMaxAnnotationValueBytes + 1, 'x')}};
  auto bounded = gangSpecFromPodGroup(pg, kDefaultWait);
  REQUIRE_FALSE(bounded.has_value());
  CHECK_THAT(bounded.error().message, Catch::StartsWith("gang.scheduling.koordinator.sh/groups"));
}
