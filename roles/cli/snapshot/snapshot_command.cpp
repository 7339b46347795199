// `koord snapshot`: the cluster's scheduling objects into one file (or stdout) that top,
// explain and simulate read with --snapshot.
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "cli_commands.h"
#include "cli_options.h"

namespace koord::roles::cli {
namespace {

// Written beside the target and renamed over it: an interrupted run leaves the old file whole.
void writeFile(const std::string& path, const std::string& text) {
  const std::string temp = path + ".tmp";
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out)
      throw std::runtime_error(fmt::format("{}: cannot create", temp));
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.flush();
    if (!out)
      throw std::runtime_error(fmt::format("{}: write failed", temp));
  }
  std::error_code ec;
  std::filesystem::rename(temp, path, ec);
  if (ec)
    throw std::runtime_error(fmt::format("{}: {}", path, ec.message()));
}

}  // namespace

int runSnapshot(const std::string& program, std::vector<std::string> args) {
  CliOptions o;
  std::string file;
  FlagSet flags(program);
  registerCliFlags(flags, o);
  flags.addString("file", &file, "", "Write here instead of standard output.");
  std::string short_f;
  flags.addString("f", &short_f, "", "Shorthand for --file.");
  std::vector<std::string> words = takeLeadingWords(args);
  if (flags.parse(args) == FlagSet::Outcome::kHelp) {
    std::fputs(flags.usage().c_str(), stdout);
    return 0;
  }
  resolveShorthands(o);
  if (file.empty())
    file = short_f;
  if (!words.empty())
    throw FlagError(fmt::format("{:?}: koord snapshot takes no arguments", words[0]));
  if (!o.output.empty() && o.output != "json")
    throw FlagError(fmt::format("--output {:?}: snapshots are written as json", o.output));
  // Re-reading a snapshot file and writing it again normalizes it (order, kinds).
  ClusterSnapshot snapshot = loadSnapshot(o);
  const std::string text = formatSnapshot(snapshot);
  if (file.empty() || file == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
  } else {
    writeFile(file, text);
  }
  std::string counts;
  for (const auto& kind : snapshotKinds()) {
    const auto n = snapshot.of(kind.kind).size();
    if (n > 0)
      counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", n, kind.resource);
  }
  std::fputs(fmt::format("{}: {} from {}{}\n", program, counts.empty() ? "no objects" : counts,
                         snapshot.server.empty() ? "a file" : snapshot.server,
                         file.empty() || file == "-" ? "" : " written to " + file)
                 .c_str(),
             stderr);
  return 0;
}

}  // namespace koord::roles::cli
