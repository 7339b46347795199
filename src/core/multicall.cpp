#include "koord/core/multicall.h"

#include <fmt/format.h>

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "koord/core/version.h"

namespace koord {
namespace {

std::string_view baseName(std::string_view path) {
  auto slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

const RoleEntry* findByName(std::span<const RoleEntry> roles, std::string_view word) {
  for (const auto& r : roles) {
    if (r.name == word)
      return &r;
  }
  return nullptr;
}

}  // namespace

DispatchDecision decideDispatch(std::span<const RoleEntry> roles,
                                const std::vector<std::string>& argv) {
  DispatchDecision d;
  std::string_view self = argv.empty() ? std::string_view("koord") : baseName(argv[0]);
  for (const auto& r : roles) {
    if (!r.command && r.binary == self) {
      d.kind = DispatchDecision::Kind::kRole;
      d.role = &r;
      d.role_args.assign(argv.begin(), argv.end());
      d.role_args[0] = std::string(r.binary);
      return d;
    }
  }
  if (argv.size() < 2) {
    d.kind = DispatchDecision::Kind::kNoRole;
    return d;
  }
  std::string_view word = argv[1];
  if (word == "--help" || word == "-h" || word == "-help" || word == "help") {
    // `koord help <role>` is the role's --help.
    if (word == "help" && argv.size() >= 3) {
      if (const RoleEntry* r = findByName(roles, argv[2])) {
        d.kind = DispatchDecision::Kind::kRole;
        d.role = r;
        d.role_args = {std::string(r->command ? r->name : r->binary), "--help"};
        return d;
      }
      d.kind = DispatchDecision::Kind::kUnknownRole;
      d.offending = argv[2];
      return d;
    }
    d.kind = DispatchDecision::Kind::kListRoles;
    return d;
  }
  if (word == "version" || word == "--version" || word == "-version") {
    d.kind = DispatchDecision::Kind::kVersion;
    return d;
  }
  if (const RoleEntry* r = findByName(roles, word)) {
    d.kind = DispatchDecision::Kind::kRole;
    d.role = r;
    d.role_args.emplace_back(r->command ? r->name : r->binary);
    d.role_args.insert(d.role_args.end(), argv.begin() + 2, argv.end());
    return d;
  }
  d.kind = DispatchDecision::Kind::kUnknownRole;
  d.offending = std::string(word);
  return d;
}

int execBesideSelf(std::string_view binary, int argc, char** argv) {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) {
    std::fputs(
        fmt::format("koord: cannot find this executable (/proc/self/exe): {}\n", ec.message())
            .c_str(),
        stderr);
    return 127;
  }
  const std::filesystem::path target = self.parent_path() / binary;
  std::error_code missing;
  const auto resolved = std::filesystem::canonical(target, missing);
  std::error_code ignored;
  const bool is_self = !missing && resolved == std::filesystem::canonical(self, ignored);
  if (missing || is_self) {
    std::fputs(
        fmt::format("koord: {} runs as its own executable, {}, which {}; install it beside "
                    "koord (ninja builds both)\n",
                    binary, target.string(), is_self ? "is a link to koord itself" : "is not there")
            .c_str(),
        stderr);
    return 127;
  }
  (void)argc;
  ::execv(target.c_str(), argv);
  const int err = errno;
  std::fputs(fmt::format("koord: cannot run {}: {}\n", target.string(), std::strerror(err)).c_str(),
             stderr);
  return 126;
}

std::string rolesHelp(std::span<const RoleEntry> roles) {
  std::string out =
      "koord: Koordinator QoS-based co-location for Kubernetes, as one binary.\n\n"
      "Usage:\n  koord <role> [flags]      or run a symlink named after the role\n"
      "  koord <role> --help       flags of one role\n"
      "  koord version             version and git commit\n\nRoles:\n";
  size_t width = 0;
  for (const auto& r : roles)
    width = std::max(width, r.name.size());
  for (const auto& r : roles) {
    if (!r.command)
      out += fmt::format("  {:<{}}  {:<20}  {}\n", r.name, width, r.binary, r.summary);
  }
  bool any = false;
  for (const auto& r : roles) {
    if (!r.command)
      continue;
    if (!any)
      out += "\nCommands (also `kubectl koord <command>`):\n";
    any = true;
    out += fmt::format("  {:<{}}  {}\n", r.name, width, r.summary);
  }
  return out;
}

int runMulticall(std::span<const RoleEntry> roles, int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  DispatchDecision d = decideDispatch(roles, args);
  switch (d.kind) {
    case DispatchDecision::Kind::kListRoles:
      std::fputs(rolesHelp(roles).c_str(), stdout);
      return 0;
    case DispatchDecision::Kind::kVersion:
      std::fputs(
          fmt::format("koord version {} (git commit {})\n", versionString(), gitCommit()).c_str(),
          stdout);
      return 0;
    case DispatchDecision::Kind::kNoRole:
      std::fputs(rolesHelp(roles).c_str(), stderr);
      std::fputs("koord: no role given\n", stderr);
      return 2;
    case DispatchDecision::Kind::kUnknownRole:
      std::fputs(
          fmt::format("koord: unknown role {:?} (run 'koord --help' for the list)\n", d.offending)
              .c_str(),
          stderr);
      return 2;
    case DispatchDecision::Kind::kRole:
      break;
  }
  std::vector<char*> role_argv;
  role_argv.reserve(d.role_args.size() + 1);
  for (auto& a : d.role_args)
    role_argv.push_back(a.data());
  role_argv.push_back(nullptr);
  return d.role->main(static_cast<int>(d.role_args.size()), role_argv.data());
}

}  // namespace koord
