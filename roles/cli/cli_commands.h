// The operator commands (koord top, koord snapshot, ...): `koord <command>` and
// `kubectl koord <command>` (the kubectl-koord link) run the same entry in this table.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace koord::roles::cli {

struct CliCommand {
  std::string_view name;
  std::string_view summary;
  /// `program` is what help and errors call it ("koord top"); args follow the command word.
  /// Returns the exit code: 0 done, 1 the cluster or a file failed, 2 a bad command line.
  int (*run)(const std::string& program, std::vector<std::string> args);
};

std::span<const CliCommand> cliCommands();

int runTop(const std::string& program, std::vector<std::string> args);
int runSnapshot(const std::string& program, std::vector<std::string> args);
int runExplain(const std::string& program, std::vector<std::string> args);

}  // namespace koord::roles::cli
