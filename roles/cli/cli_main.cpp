// koord's operator commands as one role: `kubectl koord <command>` (argv[0] kubectl-koord),
// `koord cli <command>`, and `koord <command>` for the commands roles.def lists.
#include <fmt/format.h>

#include <array>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <stdexcept>

#include "cli_commands.h"
#include "koord/core/flags.h"

namespace koord::roles::cli {
namespace {

constexpr std::array<CliCommand, 3> kCommands = {{
    {"top", "nodes|pods: each node's co-location state, each pod's usage against its requests",
     &runTop},
    {"explain", "pod NS/NAME: what koord-scheduler's plugins make of the pod on each node",
     &runExplain},
    {"snapshot", "writes the cluster's scheduling objects to a file the other commands read",
     &runSnapshot},
}};

const CliCommand* find(std::string_view name) {
  for (const auto& c : kCommands) {
    if (c.name == name)
      return &c;
  }
  return nullptr;
}

std::string commandsHelp(std::string_view self, std::string_view program) {
  std::string out = fmt::format(
      "Operator commands for Koordinator clusters.\n\nUsage:\n  {} <command> [flags]\n", self);
  if (self != program)
    out += fmt::format("  {} <command> [flags]\n", program);
  out += "\nCommands:\n";
  for (const auto& c : kCommands)
    out += fmt::format("  {:<10}  {}\n", c.name, c.summary);
  out += fmt::format("\nRun '{} <command> --help' for a command's flags.\n", program);
  return out;
}

}  // namespace

std::span<const CliCommand> cliCommands() {
  return kCommands;
}

int roleMain(int argc, char** argv) {
  std::vector<std::string> args(argv + std::min(argc, 1), argv + argc);
  const std::string self =
      argc > 0 ? std::filesystem::path(argv[0]).filename().string() : std::string("koord");
  // `koord top ...` arrives with the command word as argv[0]; kubectl-koord with it after.
  const CliCommand* command = find(self);
  std::string program = "koord " + self;
  if (command == nullptr) {
    const std::string parent = self == "kubectl-koord" ? "kubectl koord" : "koord cli";
    if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
      std::fputs(commandsHelp(self, parent).c_str(), args.empty() ? stderr : stdout);
      return args.empty() ? 2 : 0;
    }
    command = find(args[0]);
    if (command == nullptr) {
      std::fputs(fmt::format("{}: unknown command {:?} (run '{} --help' for the list)\n", parent,
                             args[0], parent)
                     .c_str(),
                 stderr);
      return 2;
    }
    program = parent + " " + std::string(command->name);
    args.erase(args.begin());
  }
  try {
    return command->run(program, std::move(args));
  } catch (const FlagError& e) {
    std::fputs(fmt::format("{}: {}\n", program, e.what()).c_str(), stderr);
    return 2;
  } catch (const std::invalid_argument& e) {
    std::fputs(fmt::format("{}: {}\n", program, e.what()).c_str(), stderr);
    return 2;
  } catch (const std::exception& e) {
    std::fputs(fmt::format("{}: {}\n", program, e.what()).c_str(), stderr);
    return 1;
  }
}

}  // namespace koord::roles::cli
