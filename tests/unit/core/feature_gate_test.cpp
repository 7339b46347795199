#include "koord/core/feature_gate.h"

#include <catch2/catch.hpp>

using koord::FeatureGate;
using koord::FeatureGateError;
using koord::FeatureStage;

namespace {
FeatureGate sample() {
  return FeatureGate({{"BECPUSuppress", true, FeatureStage::kBeta},
                      {"BECPUEvict", false, FeatureStage::kAlpha},
                      {"BatchResource", true, FeatureStage::kBeta},
                      {"Locked", true, FeatureStage::kGA, true},
                      {"BetaOff", false, FeatureStage::kBeta}});
}
}  // namespace

TEST_CASE("feature gates start at their defaults", "[core][featuregate]") {
  auto g = sample();
  CHECK(g.enabled("BECPUSuppress"));
  CHECK_FALSE(g.enabled("BECPUEvict"));
  CHECK_FALSE(g.enabled("AllAlpha"));
  CHECK_THROWS_AS(g.enabled("NotDeclared"), std::logic_error);
}

TEST_CASE("feature gates are set by name from --feature-gates", "[core][featuregate]") {
  auto g = sample();
  g.set("BECPUEvict=true, BECPUSuppress=false");
  CHECK(g.enabled("BECPUEvict"));
  CHECK_FALSE(g.enabled("BECPUSuppress"));
  g.set("");
  CHECK(g.enabled("BECPUEvict"));
}

TEST_CASE("AllAlpha and AllBeta flip their stage unless set explicitly", "[core][featuregate]") {
  auto g = sample();
  g.set("BECPUEvict=false,AllAlpha=true");  // explicit wins regardless of order
  CHECK_FALSE(g.enabled("BECPUEvict"));
  g.set("AllBeta=true");
  CHECK(g.enabled("BetaOff"));
  g.set("AllBeta=false");
  CHECK_FALSE(g.enabled("BetaOff"));
  CHECK(g.enabled("BatchResource"));  // default true stays true
}

TEST_CASE("bad --feature-gates input is refused whole and names the gate", "[core][featuregate]") {
  auto g = sample();
  auto before = g.effective();
  CHECK_THROWS_WITH(g.set("BECPUEvict=true,Bogus=true"),
                    Catch::Contains("unrecognized feature gate: Bogus"));
  CHECK(g.effective() == before);  // all-or-nothing: BECPUEvict was not applied
  CHECK_THROWS_WITH(g.set("BECPUEvict=yes"), Catch::Contains("BECPUEvict"));
  CHECK_THROWS_WITH(g.set("BECPUEvict"), Catch::Contains("BECPUEvict"));
  CHECK_THROWS_WITH(g.set("Locked=false"), Catch::Contains("locked"));
  CHECK_NOTHROW(g.set("Locked=true"));
  CHECK(g.effective() == before);
}

TEST_CASE("feature gate help lists stages and defaults", "[core][featuregate]") {
  auto lines = sample().helpLines();
  CHECK(std::find(lines.begin(), lines.end(), "BECPUEvict=true|false (ALPHA - default=false)") !=
        lines.end());
  CHECK(std::find(lines.begin(), lines.end(), "AllBeta=true|false (BETA - default=false)") !=
        lines.end());
  CHECK(std::none_of(lines.begin(), lines.end(),
                     [](const std::string& l) { return l.rfind("Locked", 0) == 0; }));
  CHECK_THROWS_AS(FeatureGate({{"A", true}, {"A", false}}), std::invalid_argument);
}

TEST_CASE("gates set but never read are reported; defaults and read gates are not",
          "[featuregate]") {
  koord::FeatureGate g({{"Used", false, koord::FeatureStage::kAlpha, false},
                        {"Unused", false, koord::FeatureStage::kAlpha, false},
                        {"AsDefault", true, koord::FeatureStage::kBeta, false}});
  g.set("Used=true,Unused=true,AsDefault=true,AllAlpha=false");
  CHECK(g.enabled("Used"));
  // Before: nothing told an operator that Unused=true changed nothing.
  CHECK(g.setButUnread() == std::vector<std::string>{"Unused=true"});
  CHECK(g.enabled("Unused"));
  CHECK(g.setButUnread().empty());
}

TEST_CASE(
    "gates on by default that no code reads, or that the host cannot serve, are without "
    "effect",
    "[featuregate]") {
  koord::FeatureGate g({{"Implemented", true, koord::FeatureStage::kBeta, false},
                        {"Unimplemented", true, koord::FeatureStage::kBeta, false},
                        {"NoKernel", true, koord::FeatureStage::kBeta, false},
                        {"Off", false, koord::FeatureStage::kAlpha, false}});
  CHECK(g.enabled("Implemented"));
  CHECK(g.enabled("NoKernel"));
  g.markUnavailable("NoKernel", "/sys/fs/resctrl is not mounted");
  // Asking for the effects (or all values) reads nothing: it must not hide an unread gate.
  (void)g.effective();
  const auto effects = g.effects();
  REQUIRE(effects.size() == 4);
  auto find = [&](std::string_view name) {
    return *std::find_if(effects.begin(), effects.end(),
                         [&](const auto& e) { return e.name == name; });
  };
  CHECK(find("Implemented").effective);
  CHECK(find("Implemented").why.empty());
  CHECK_FALSE(find("Unimplemented").effective);
  CHECK(find("Unimplemented").why == "not implemented in koord yet");
  CHECK_FALSE(find("NoKernel").effective);
  CHECK(find("NoKernel").why == "/sys/fs/resctrl is not mounted");
  CHECK_FALSE(find("Off").enabled);
  CHECK_FALSE(find("Off").effective);
  CHECK(find("Off").why.empty());
  CHECK_THROWS_AS(g.markUnavailable("Nope", "x"), std::logic_error);
}
