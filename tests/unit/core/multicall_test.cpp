#include "koord/core/multicall.h"

#include <catch2/catch.hpp>

using Kind = koord::DispatchDecision::Kind;

namespace {
int fakeMain(int, char**) {
  return 0;
}
const koord::RoleEntry kRoles[] = {
    {"manager", "koord-manager", "manager", &fakeMain, false},
    {"koordlet", "koordlet", "node agent", &fakeMain, false},
    {"cli", "kubectl-koord", "operator commands", &fakeMain, false},
    {"top", "", "usage per node", &fakeMain, true},
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

TEST_CASE("operator commands run the cli role with the command word first", "[core][multicall]") {
  auto d = decide({"koord", "top", "nodes", "-o", "json"});
  REQUIRE(d.kind == Kind::kRole);
  CHECK(d.role->name == "top");
  CHECK(d.role_args == std::vector<std::string>{"top", "nodes", "-o", "json"});
  d = decide({"koord", "help", "top"});
  REQUIRE(d.kind == Kind::kRole);
  CHECK(d.role_args == std::vector<std::string>{"top", "--help"});
  // kubectl runs the plugin by its file name, the command word after it.
  d = decide({"/usr/local/bin/kubectl-koord", "top", "pods"});
  REQUIRE(d.kind == Kind::kRole);
  CHECK(d.role->name == "cli");
  CHECK(d.role_args == std::vector<std::string>{"kubectl-koord", "top", "pods"});
  // A command has no binary of its own: an empty argv[0] does not select it.
  CHECK(decide({"", "bogus"}).kind == Kind::kUnknownRole);
  auto text = koord::rolesHelp(kRoles);
  auto commands = text.find("Commands");
  REQUIRE(commands != std::string::npos);
  CHECK(text.find("usage per node") > commands);
}
