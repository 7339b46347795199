// Multi-call dispatch: `koord <role> ...` or a symlink named koord-<role> picks the role whose
// entry function runs. The role table itself lives in src/main.cpp (from roles/roles.def).
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace koord {

struct RoleEntry {
  std::string_view name;     // koord <name>
  std::string_view binary;   // argv[0] basename that selects it, e.g. koord-manager
  std::string_view summary;  // one line for `koord --help`
  int (*main)(int argc, char** argv);
  /// An operator command of the cli role (`koord top`): no binary of its own; main gets the
  /// command word as argv[0].
  bool command = false;
};

struct DispatchDecision {
  enum class Kind { kRole, kListRoles, kVersion, kNoRole, kUnknownRole };
  Kind kind = Kind::kNoRole;
  const RoleEntry* role = nullptr;
  /// Arguments for the role: [0] is the role's binary name, then its flags.
  std::vector<std::string> role_args;
  std::string offending;  // the unknown word, for kUnknownRole
};

/// Pure decision (tested directly): argv[0] basename first, then argv[1] as a role name,
/// then help/version words. No guessing beyond that.
DispatchDecision decideDispatch(std::span<const RoleEntry> roles,
                                const std::vector<std::string>& argv);

/// Decides, prints help/version/errors, runs the role; returns the process exit code
/// (0 ok, 2 usage error, otherwise the role's own code).
int runMulticall(std::span<const RoleEntry> roles, int argc, char** argv);

/// Replaces this process with the executable `binary` in the directory of this one (the
/// role's own executable), passing argv on; returns only on failure, with the exit code
/// after saying why: 127 when it is not there or is this very binary (a symlink to koord left
/// in its place by an older install), 126 when it cannot be run.
int execBesideSelf(std::string_view binary, int argc, char** argv);

/// `koord --help` text.
std::string rolesHelp(std::span<const RoleEntry> roles);

}  // namespace koord
