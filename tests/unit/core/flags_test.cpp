#include "koord/core/flags.h"

#include <catch2/catch.hpp>

using namespace std::chrono_literals;
using koord::FlagError;
using koord::FlagSet;

namespace {
struct Opts {
  bool oneshot = false;
  bool leader = false;
  int qps = 0;
  double ratio = 0;
  std::string addr;
  std::chrono::milliseconds interval{};
  std::vector<std::string> controllers;
};

struct Fixture {
  Opts o;
  FlagSet flags{"koordlet"};
  Fixture() {
    flags.addBool("oneshot", &o.oneshot, false, "Run once.");
    flags.addBool("enable-leader-election", &o.leader, true, "Elect a leader.");
    flags.addInt("kube-api-qps", &o.qps, 20, "QPS to the API server.");
    flags.addDouble("ratio", &o.ratio, 0.5, "A ratio.");
    flags.addString("addr", &o.addr, ":9316", "Listen address.");
    flags.addDuration("collect-res-used-interval", &o.interval, 1s, "Collect interval.");
    flags.addStringList("controllers", &o.controllers, {"*"}, "Controllers.");
  }
};
}  // namespace

TEST_CASE("defaults are set before parsing", "[core][flags]") {
  Fixture f;
  CHECK(f.o.qps == 20);
  CHECK(f.o.leader);
  CHECK(f.o.addr == ":9316");
  CHECK(f.o.interval == 1s);
  CHECK(f.o.controllers == std::vector<std::string>{"*"});
  REQUIRE(f.flags.parse(std::vector<std::string>{}) == FlagSet::Outcome::kRun);
  CHECK(f.o.qps == 20);
  CHECK_FALSE(f.flags.changed("kube-api-qps"));
}

TEST_CASE("Go and GNU spellings are both accepted", "[core][flags]") {
  Fixture f;
  REQUIRE(f.flags.parse({"-addr=:1234", "--kube-api-qps", "50", "-collect-res-used-interval",
                         "500ms", "--oneshot", "-enable-leader-election=false", "--ratio=0.25",
                         "--controllers=a,b", "-controllers", "c"}) == FlagSet::Outcome::kRun);
  CHECK(f.o.addr == ":1234");
  CHECK(f.o.qps == 50);
  CHECK(f.o.interval == 500ms);
  CHECK(f.o.oneshot);
  CHECK_FALSE(f.o.leader);
  CHECK(f.o.ratio == 0.25);
  CHECK(f.o.controllers == std::vector<std::string>{"a", "b", "c"});
  CHECK(f.flags.changed("kube-api-qps"));
  CHECK_FALSE(f.flags.changed("v"));
}

TEST_CASE("an empty value after '=' is the empty value, as in Go", "[core][flags]") {
  Fixture f;
  // Koordinator's manifests pass "--feature-gates=" when no gate is set.
  REQUIRE(f.flags.parse({"--addr=", "-controllers="}) == FlagSet::Outcome::kRun);
  CHECK(f.o.addr.empty());
  CHECK(f.o.controllers.empty());
  CHECK(f.flags.changed("addr"));
  // Where Go refuses an empty value, so does koord.
  CHECK_THROWS_WITH(f.flags.parse({"--kube-api-qps="}), Catch::Contains("kube-api-qps"));
  CHECK_THROWS_WITH(f.flags.parse({"--oneshot="}), Catch::Contains("oneshot"));
  CHECK_THROWS_WITH(f.flags.parse({"--bogus="}), "unknown flag: --bogus");
}

TEST_CASE("the last occurrence of a scalar flag wins", "[core][flags]") {
  Fixture f;
  f.flags.parse({"--kube-api-qps=1", "--kube-api-qps=2"});
  CHECK(f.o.qps == 2);
}

TEST_CASE("bad command lines name the offending word", "[core][flags]") {
  Fixture f;
  CHECK_THROWS_WITH(f.flags.parse({"--oneshot", "--bogus"}), "unknown flag: --bogus");
  CHECK_THROWS_WITH(f.flags.parse({"-bogus=3"}), "unknown flag: -bogus");
  CHECK_THROWS_WITH(f.flags.parse({"--kube-api-qps=abc"}),
                    Catch::Contains("kube-api-qps") && Catch::Contains("abc"));
  CHECK_THROWS_WITH(f.flags.parse({"--collect-res-used-interval=5"}),
                    Catch::Contains("collect-res-used-interval"));
  CHECK_THROWS_WITH(f.flags.parse({"--oneshot=maybe"}), Catch::Contains("oneshot"));
  CHECK_THROWS_WITH(f.flags.parse({"stray"}), Catch::Contains("stray"));
  // Go does not let a bool consume the next word; it becomes a stray argument.
  CHECK_THROWS_WITH(f.flags.parse({"--oneshot", "false"}), Catch::Contains("false"));
  CHECK_THROWS_WITH(f.flags.parse({"--addr"}), Catch::Contains("addr"));
  // No prefix guessing.
  CHECK_THROWS_WITH(f.flags.parse({"--kube-api=5"}), Catch::Contains("kube-api"));
  CHECK_THROWS_AS(f.flags.parse({"--kube-api-qps=99", "--nope"}), FlagError);
}

TEST_CASE("a failed parse leaves every flag at its default", "[core][flags]") {
  Fixture f;
  CHECK_THROWS(f.flags.parse({"--kube-api-qps=7", "--addr=:1", "--ratio=x"}));
  CHECK(f.o.qps == 20);
  CHECK(f.o.addr == ":9316");
}

TEST_CASE("help is recognised in every spelling and usage lists flags", "[core][flags]") {
  Fixture f;
  CHECK(f.flags.parse({"--help"}) == FlagSet::Outcome::kHelp);
  CHECK(f.flags.parse({"-h"}) == FlagSet::Outcome::kHelp);
  CHECK(f.flags.parse({"-help"}) == FlagSet::Outcome::kHelp);
  f.flags.addHelpSection("Feature gates", {"A=true|false (ALPHA - default=false)"});
  auto u = f.flags.usage();
  CHECK(u.find("--kube-api-qps int") != std::string::npos);
  CHECK(u.find("(default 20)") != std::string::npos);
  CHECK(u.find("(default \":9316\")") != std::string::npos);
  CHECK(u.find("(default 1s)") != std::string::npos);
  CHECK(u.find("Feature gates:") != std::string::npos);
  CHECK_THROWS_AS(f.flags.addInt("kube-api-qps", &f.o.qps, 1, "dup"), std::logic_error);
}
