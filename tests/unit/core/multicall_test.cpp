#include "koord/core/multicall.h"

#include <catch2/catch.hpp>

using Kind = koord::DispatchDecision::Kind;

namespace {
int fakeMain(int, char**) {
  return 0;
}
const koord::RoleEntry kRoles[] = {
    {"manager", "koord-manager", "manager", &fakeMain},
    {"koordlet", "koordlet", "node agent", &fakeMain},
};
koord::DispatchDecision decide(std::vector<std::string> argv) {
  return koord::decideDispatch(kRoles, argv);
}
}  // namespace

TEST_CASE("argv[0] symlink names select the role", "[core][multicall]") {
  auto d = decide({"/usr/local/bin/koord-manager", "--metrics-addr=:1"});
  REQUIRE(d.kind == Kind::kRole);
  CHECK(d.role->name == "manager");
  CHECK(d.role_args == std::vector<std::string>{"koord-manager", "--metrics-addr=:1"});
  d = decide({"koordlet"});
  REQUIRE(d.kind == Kind::kRole);
  CHECK(d.role->name == "koordlet");
}

TEST_CASE("koord <role> shifts the role word off", "[core][multicall]") {
  auto d = decide({"./koord", "manager", "--help"});
  REQUIRE(d.kind == Kind::kRole);
  CHECK(d.role_args == std::vector<std::string>{"koord-manager", "--help"});
  d = decide({"koord", "help", "koordlet"});
  REQUIRE(d.kind == Kind::kRole);
  CHECK(d.role_args == std::vector<std::string>{"koordlet", "--help"});
}

TEST_CASE("help, version and bad words", "[core][multicall]") {
  CHECK(decide({"koord", "--help"}).kind == Kind::kListRoles);
  CHECK(decide({"koord", "-h"}).kind == Kind::kListRoles);
  CHECK(decide({"koord", "version"}).kind == Kind::kVersion);
  CHECK(decide({"koord"}).kind == Kind::kNoRole);
  auto d = decide({"koord", "bogus"});
  CHECK(d.kind == Kind::kUnknownRole);
  CHECK(d.offending == "bogus");
  // No guessing: a role's binary name is not a subcommand, a prefix is not a role.
  CHECK(decide({"koord", "koord-manager"}).kind == Kind::kUnknownRole);
  CHECK(decide({"koord", "man"}).kind == Kind::kUnknownRole);
  CHECK(decide({"koord", "help", "nope"}).kind == Kind::kUnknownRole);
}

TEST_CASE("the roles help lists every role with its summary", "[core][multicall]") {
  auto text = koord::rolesHelp(kRoles);
  CHECK(text.find("manager") != std::string::npos);
  CHECK(text.find("koord-manager") != std::string::npos);
  CHECK(text.find("node agent") != std::string::npos);
}
