// Command-line flags for every role, parsed with Boost.Program_options but accepted the way
// Koordinator's Go binaries accept them: --name=v, --name v, and Go's single-dash -name=v.
#pragma once

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace koord {

/// A bad command line: unknown flag, missing or malformed value, stray argument. The message is
/// one line that names the offending word; the role exits 2 with it.
class FlagError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class FlagSet {
 public:
  /// `program` is what usage and errors call the command, e.g. "koord-manager".
  explicit FlagSet(std::string program);
  ~FlagSet();
  FlagSet(const FlagSet&) = delete;
  FlagSet& operator=(const FlagSet&) = delete;

  // Each add* stores the default into *target now and the parsed value on parse(). Names are
  // given without dashes. Bools follow Go: "-x" means true, "-x=false" sets false; a separate
  // "false" word is not consumed.
  void addBool(std::string name, bool* target, bool def, std::string help);
  void addInt(std::string name, int* target, int def, std::string help);
  void addInt64(std::string name, int64_t* target, int64_t def, std::string help);
  void addDouble(std::string name, double* target, double def, std::string help);
  void addString(std::string name, std::string* target, std::string def, std::string help);
  /// Go duration syntax ("1s", "5m"); stored with millisecond resolution.
  void addDuration(std::string name, std::chrono::milliseconds* target,
                   std::chrono::milliseconds def, std::string help);
  /// Comma-separated, repeatable (pflag's StringSlice): "--x=a,b --x=c" gives {a,b,c}.
  void addStringList(std::string name, std::vector<std::string>* target,
                     std::vector<std::string> def, std::string help);

  /// Environment variables consulted, in order, for a flag not given on the command line
  /// (urfave/cli's EnvVars). A bad value there is a FlagError naming the variable.
  void bindEnv(std::string_view name, std::vector<std::string> env_vars);

  /// Extra text printed after the flags in --help (e.g. feature gate list, environment).
  void addHelpSection(std::string title, std::vector<std::string> lines);

  enum class Outcome { kRun, kHelp };
  /// Parses argv[1..]. Returns kHelp for -h/--help/-help (usage() should be printed, exit 0).
  /// Throws FlagError otherwise-bad input; targets are left at defaults in that case.
  Outcome parse(int argc, const char* const* argv);
  Outcome parse(const std::vector<std::string>& args);  // args exclude the program name

  /// True if the flag was given on the command line (not just defaulted).
  bool changed(std::string_view name) const;

  std::string usage() const;
  const std::string& program() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace koord
