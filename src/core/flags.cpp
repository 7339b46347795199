#include "koord/core/flags.h"

#include <fmt/format.h>

#include <boost/program_options.hpp>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <functional>
#include <map>
#include <set>

#include "koord/core/duration.h"
#include "koord/core/strconv.h"

namespace po = boost::program_options;

namespace koord {
namespace {

constexpr const char* kPositional = "__positional";

template <typename T>
bool parseInteger(std::string_view v, T* out) {
  if (!v.empty() && v.front() == '+')
    v.remove_prefix(1);
  auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), *out);
  return ec == std::errc() && ptr == v.data() + v.size() && !v.empty();
}

std::vector<std::string> splitComma(std::string_view v) {
  std::vector<std::string> out;
  if (v.empty())
    return out;
  while (true) {
    size_t comma = v.find(',');
    out.emplace_back(v.substr(0, comma));
    if (comma == std::string_view::npos)
      break;
    v.remove_prefix(comma + 1);
  }
  return out;
}

std::string quoteIfString(const std::string& type, const std::string& def) {
  return type == "string" ? fmt::format("\"{}\"", def) : def;
}

}  // namespace

struct FlagSet::Impl {
  struct Flag {
    std::string name;
    std::string type;  // shown in usage: bool, int, float, string, duration, strings
    std::string help;
    std::string def_text;
    bool is_bool = false;
    bool is_list = false;
    // Applies the raw command-line values (all occurrences, in order); throws FlagError.
    std::function<void(const std::vector<std::string>&)> apply;
    std::function<void()> reset;
    std::vector<std::string> env;  // set by bindEnv after add
  };
  std::string program;
  std::map<std::string, Flag> flags;
  std::vector<std::pair<std::string, std::vector<std::string>>> sections;
  std::set<std::string> changed;

  static Flag makeFlag(std::string name, std::string type, std::string help, std::string def_text,
                       bool is_bool, bool is_list) {
    Flag f;
    f.name = std::move(name);
    f.type = std::move(type);
    f.help = std::move(help);
    f.def_text = std::move(def_text);
    f.is_bool = is_bool;
    f.is_list = is_list;
    return f;
  }

  void add(Flag f) {
    if (f.name.empty() || f.name.front() == '-' || flags.count(f.name) || f.name == "help" ||
        f.name == "h") {
      throw std::logic_error(fmt::format("{}: bad or duplicate flag name {:?}", program, f.name));
    }
    f.reset();
    std::string name = f.name;
    flags.emplace(std::move(name), std::move(f));
  }

  template <typename T>
  void addInteger(std::string name, T* target, T def, std::string help);

  [[noreturn]] void badValue(const Flag& f, const std::string& v, std::string_view why) const {
    throw FlagError(fmt::format("invalid argument {:?} for \"--{}\" flag: {}", v, f.name, why));
  }
};

FlagSet::FlagSet(std::string program) : impl_(std::make_unique<Impl>()) {
  impl_->program = std::move(program);
}
FlagSet::~FlagSet() = default;

const std::string& FlagSet::program() const {
  return impl_->program;
}

void FlagSet::addBool(std::string name, bool* target, bool def, std::string help) {
  Impl::Flag f = Impl::makeFlag(name, "bool", std::move(help), def ? "true" : "false", true, false);
  Impl* impl = impl_.get();
  f.apply = [impl, target, name](const std::vector<std::string>& values) {
    const std::string& v = values.back();
    std::optional<bool> b = parseGoBool(v);
    if (!b)
      impl->badValue(impl->flags.at(name), v, "parse error");
    *target = *b;
  };
  f.reset = [target, def] { *target = def; };
  impl_->add(std::move(f));
}

template <typename T>
void FlagSet::Impl::addInteger(std::string name, T* target, T def, std::string help) {
  Flag f = makeFlag(name, "int", std::move(help), std::to_string(def), false, false);
  f.apply = [this, target, name](const std::vector<std::string>& values) {
    const std::string& v = values.back();
    if (!parseInteger(v, target))
      badValue(flags.at(name), v, "not an integer");
  };
  f.reset = [target, def] { *target = def; };
  add(std::move(f));
}

void FlagSet::addInt(std::string name, int* target, int def, std::string help) {
  impl_->addInteger(std::move(name), target, def, std::move(help));
}

void FlagSet::addInt64(std::string name, int64_t* target, int64_t def, std::string help) {
  impl_->addInteger(std::move(name), target, def, std::move(help));
}

void FlagSet::addDouble(std::string name, double* target, double def, std::string help) {
  Impl::Flag f =
      Impl::makeFlag(name, "float", std::move(help), fmt::format("{}", def), false, false);
  Impl* impl = impl_.get();
  f.apply = [impl, target, name](const std::vector<std::string>& values) {
    const std::string& v = values.back();
    double d = 0;
    auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), d);
    if (ec != std::errc() || ptr != v.data() + v.size() || v.empty()) {
      impl->badValue(impl->flags.at(name), v, "not a number");
    }
    *target = d;
  };
  f.reset = [target, def] { *target = def; };
  impl_->add(std::move(f));
}

void FlagSet::addString(std::string name, std::string* target, std::string def, std::string help) {
  Impl::Flag f = Impl::makeFlag(name, "string", std::move(help), def, false, false);
  f.apply = [target](const std::vector<std::string>& values) { *target = values.back(); };
  f.reset = [target, def] { *target = def; };
  impl_->add(std::move(f));
}

void FlagSet::addDuration(std::string name, std::chrono::milliseconds* target,
                          std::chrono::milliseconds def, std::string help) {
  Impl::Flag f =
      Impl::makeFlag(name, "duration", std::move(help), formatGoDuration(def), false, false);
  Impl* impl = impl_.get();
  f.apply = [impl, target, name](const std::vector<std::string>& values) {
    const std::string& v = values.back();
    auto d = parseGoDuration(v);
    if (!d)
      impl->badValue(impl->flags.at(name), v, "not a duration (e.g. 10s, 1m30s)");
    *target = std::chrono::duration_cast<std::chrono::milliseconds>(*d);
  };
  f.reset = [target, def] { *target = def; };
  impl_->add(std::move(f));
}

void FlagSet::addStringList(std::string name, std::vector<std::string>* target,
                            std::vector<std::string> def, std::string help) {
  std::string def_text = "[";
  for (size_t i = 0; i < def.size(); ++i)
    def_text += (i ? "," : "") + def[i];
  def_text += "]";
  Impl::Flag f = Impl::makeFlag(name, "strings", std::move(help), def_text, false, true);
  f.apply = [target](const std::vector<std::string>& values) {
    target->clear();
    for (const auto& v : values) {
      auto parts = splitComma(v);
      target->insert(target->end(), parts.begin(), parts.end());
    }
  };
  f.reset = [target, def] { *target = def; };
  impl_->add(std::move(f));
}

void FlagSet::bindEnv(std::string_view name, std::vector<std::string> env_vars) {
  auto it = impl_->flags.find(std::string(name));
  if (it == impl_->flags.end()) {
    throw std::logic_error(fmt::format("{}: bindEnv for unknown flag {}", impl_->program, name));
  }
  it->second.env = std::move(env_vars);
}

void FlagSet::addHelpSection(std::string title, std::vector<std::string> lines) {
  impl_->sections.emplace_back(std::move(title), std::move(lines));
}

bool FlagSet::changed(std::string_view name) const {
  return impl_->changed.count(std::string(name)) > 0;
}

FlagSet::Outcome FlagSet::parse(int argc, const char* const* argv) {
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i)
    args.emplace_back(argv[i]);
  return parse(args);
}

FlagSet::Outcome FlagSet::parse(const std::vector<std::string>& args) {
  po::options_description desc;
  auto values = [] { return po::value<std::vector<std::string>>(); };
  desc.add_options()("help", values());
  desc.add_options()("h", values());
  desc.add_options()(kPositional, values());
  for (const auto& [name, f] : impl_->flags) {
    auto* sem = values();
    desc.add_options()(name.c_str(), sem);
  }
  po::positional_options_description positional;
  positional.add(kPositional, -1);

  // Long options only, in both "--x" and Go's "-x" spelling; no prefix guessing, so a typo is
  // an error rather than a silent match of some other flag.
  int style = po::command_line_style::allow_long | po::command_line_style::long_allow_adjacent |
              po::command_line_style::long_allow_next | po::command_line_style::allow_long_disguise;
  // Go never lets a bool flag take the next word as its value ("-x false" is -x plus a stray
  // argument); Program_options would, so spell bare bools out as "--x=true" first.
  std::vector<std::string> words;
  words.reserve(args.size());
  bool options_ended = false;
  for (const auto& a : args) {
    if (!options_ended && a == "--")
      options_ended = true;
    // "--x=" gives x the empty value, as Go's flag packages do (Koordinator's manifests pass
    // "--feature-gates="); Program_options refuses an empty adjacent value, so pass it as the
    // next word instead.
    if (!options_ended && a.size() > 2 && a[0] == '-' && a.back() == '=' &&
        a.find('=') == a.size() - 1) {
      std::string bare = a.substr(a.find_first_not_of('-'));
      bare.pop_back();
      auto it = impl_->flags.find(bare);
      if (it == impl_->flags.end())
        throw FlagError(fmt::format("unknown flag: {}", a.substr(0, a.size() - 1)));
      words.push_back("--" + bare);
      words.emplace_back();
      continue;
    }
    if (!options_ended && a.size() > 1 && a[0] == '-' && a.find('=') == std::string::npos) {
      std::string bare = a.substr(a.find_first_not_of('-'));
      auto it = impl_->flags.find(bare);
      if ((it != impl_->flags.end() && it->second.is_bool) || bare == "help" || bare == "h") {
        words.push_back("--" + bare + "=true");
        continue;
      }
    }
    words.push_back(a);
  }
  po::variables_map vm;
  try {
    po::store(
        po::command_line_parser(words).options(desc).positional(positional).style(style).run(), vm);
  } catch (const po::unknown_option& e) {
    std::string name = e.get_option_name();
    // Echo the word as typed: "-bogus=1" and "--bogus" both arrive as "bogus".
    std::string bare = name;
    bare.erase(0, bare.find_first_not_of('-'));
    for (const auto& a : args) {
      std::string_view w(a);
      w = w.substr(0, w.find('='));
      std::string_view stripped = w;
      stripped.remove_prefix(std::min(stripped.find_first_not_of('-'), stripped.size()));
      if (!w.empty() && w.front() == '-' && stripped == bare) {
        name = std::string(w);
        break;
      }
    }
    throw FlagError(fmt::format("unknown flag: {}", name));
  } catch (const po::invalid_command_line_syntax& e) {
    std::string name = e.get_option_name();
    if (e.kind() == po::invalid_command_line_syntax::missing_parameter) {
      throw FlagError(fmt::format("flag needs an argument: {}", name));
    }
    throw FlagError(fmt::format("bad flag syntax: {}", name.empty() ? e.what() : name));
  } catch (const po::error& e) {
    throw FlagError(e.what());
  }

  if (vm.count("help") || vm.count("h"))
    return Outcome::kHelp;
  if (vm.count(kPositional)) {
    const std::string& first = vm[kPositional].as<std::vector<std::string>>().front();
    // Program_options passes an unknown Go-style "-name" through as a positional word.
    if (first.size() > 1 && first[0] == '-' && !options_ended) {
      throw FlagError(fmt::format("unknown flag: {}", first.substr(0, first.find('='))));
    }
    throw FlagError(fmt::format("unexpected argument {:?}", first));
  }
  // Apply all values only after the whole line parsed, so a bad value leaves no half state.
  for (auto& [name, f] : impl_->flags)
    f.reset();
  impl_->changed.clear();
  try {
    for (auto& [name, f] : impl_->flags) {
      auto it = vm.find(name);
      if (it == vm.end())
        continue;
      f.apply(it->second.as<std::vector<std::string>>());
      impl_->changed.insert(name);
    }
    for (auto& [name, f] : impl_->flags) {
      if (impl_->changed.count(name))
        continue;
      for (const auto& var : f.env) {
        const char* v = std::getenv(var.c_str());
        if (v == nullptr)
          continue;
        try {
          f.apply({v});
        } catch (const FlagError& e) {
          throw FlagError(fmt::format("${}: {}", var, e.what()));
        }
        impl_->changed.insert(name);
        break;
      }
    }
  } catch (...) {
    for (auto& [name, f] : impl_->flags)
      f.reset();
    impl_->changed.clear();
    throw;
  }
  return Outcome::kRun;
}

std::string FlagSet::usage() const {
  std::vector<std::pair<std::string, std::string>> rows;
  // pflag layout: "  -h, --help" for the one flag with a shorthand, "      --name" otherwise.
  rows.emplace_back("  -h, --help", fmt::format("help for {}", impl_->program));
  size_t width = rows.front().first.size();
  for (const auto& [name, f] : impl_->flags) {
    std::string left =
        f.is_bool ? fmt::format("      --{}", name) : fmt::format("      --{} {}", name, f.type);
    std::string right = f.help;
    bool zero_default = f.def_text.empty() || f.def_text == "false" || f.def_text == "[]" ||
                        (f.def_text == "0" && f.type != "duration") || f.def_text == "0s";
    if (!zero_default) {
      right += fmt::format(" (default {})", quoteIfString(f.type, f.def_text));
    }
    if (!f.env.empty()) {
      std::string vars;
      for (const auto& e : f.env) {
        vars += (vars.empty() ? "$" : ", $") + e;
      }
      right += fmt::format(" [{}]", vars);
    }
    width = std::max(width, left.size());
    rows.emplace_back(std::move(left), std::move(right));
  }
  std::string out = fmt::format("Usage:\n  {} [flags]\n\nFlags:\n", impl_->program);
  for (const auto& [left, right] : rows) {
    out += fmt::format("{:<{}}   {}\n", left, width, right);
  }
  out += "\nFlags are accepted as --name=value, --name value or -name=value.\n";
  for (const auto& [title, lines] : impl_->sections) {
    out += fmt::format("\n{}:\n", title);
    for (const auto& l : lines) {
      out += fmt::format("  {}\n", l);
    }
  }
  return out;
}

}  // namespace koord
