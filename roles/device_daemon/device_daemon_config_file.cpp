#include "device_daemon_config_file.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

#include "koord/app/role_app.h"
#include "koord/core/duration.h"
#include "koord/core/flags.h"
#include "koord/http/file_util.h"

namespace koord::roles::device_daemon {

namespace {

constexpr std::string_view kVersion = "v1";

class Reader {
 public:
  explicit Reader(std::string_view where) : where_(where) {}

  [[noreturn]] void fail(const YAML::Node& at, std::string_view key, std::string_view why) const {
    const auto mark = at.Mark();
    if (mark.is_null())
      throw app::ConfigError(fmt::format("--config-file {}: {}: {}", where_, key, why));
    throw app::ConfigError(
        fmt::format("--config-file {}:{}: {}: {}", where_, mark.line + 1, key, why));
  }

  // A map whose keys are all among `known`; null (an empty section) reads as an empty map.
  YAML::Node mapping(const YAML::Node& node, std::string_view key,
                     std::initializer_list<std::string_view> known) const {
    if (node.IsNull())
      return YAML::Node(YAML::NodeType::Map);
    if (!node.IsMap())
      fail(node, key, "must be a mapping");
    std::set<std::string> seen;
    for (const auto& kv : node) {
      if (!kv.first.IsScalar())
        fail(kv.first, key, "keys must be strings");
      const std::string name = kv.first.Scalar();
      const std::string path = key.empty() ? name : fmt::format("{}.{}", key, name);
      if (std::find(known.begin(), known.end(), name) == known.end())
        fail(kv.first, path, "unknown key");
      if (!seen.insert(name).second)
        fail(kv.first, path, "given twice");
    }
    return node;
  }

  std::string string(const YAML::Node& node, std::string_view key) const {
    if (!node.IsScalar())
      fail(node, key, "must be a string");
    return node.Scalar();
  }

  // YAML 1.1's booleans, as sigs.k8s.io/yaml reads them.
  bool boolean(const YAML::Node& node, std::string_view key) const {
    static const std::set<std::string> yes = {"y",    "Y",    "yes", "Yes", "YES", "true",
                                              "True", "TRUE", "on",  "On",  "ON"};
    static const std::set<std::string> no = {"n",     "N",     "no",  "No",  "NO", "false",
                                             "False", "FALSE", "off", "Off", "OFF"};
    if (node.IsScalar() && node.Tag() != "!") {
      if (yes.count(node.Scalar()))
        return true;
      if (no.count(node.Scalar()))
        return false;
    }
    fail(node, key, "must be true or false");
  }

  // Koordinator's Duration: a Go duration string, or a JSON number of nanoseconds.
  std::chrono::milliseconds duration(const YAML::Node& node, std::string_view key) const {
    if (!node.IsScalar())
      fail(node, key, "must be a duration such as \"60s\"");
    const std::string& text = node.Scalar();
    if (node.Tag() != "!") {  // plain: a number of nanoseconds is allowed
      double ns = 0;
      std::istringstream in(text);
      if (in >> ns && in.eof() && std::isfinite(ns)) {
        // A Go Duration is int64 nanoseconds, and the timer converts the interval back to them:
        // a larger count would overflow there (or, far enough out, already in the cast below).
        constexpr double kLimit = 9223372036854775808.0;  // 2^63
        if (ns >= kLimit || ns < -kLimit)
          fail(node, key, fmt::format("{} nanoseconds is beyond a duration's range", text));
        return std::chrono::duration_cast<std::chrono::milliseconds>(
            std::chrono::duration<double, std::nano>(ns));
      }
    }
    auto parsed = parseGoDuration(text);
    if (!parsed)
      fail(node, key, fmt::format("{:?} is not a duration such as \"60s\"", text));
    return std::chrono::duration_cast<std::chrono::milliseconds>(*parsed);
  }

 private:
  std::string_view where_;
};

}  // namespace

DeviceDaemonFileSettings parseDeviceDaemonConfig(std::string_view text, std::string_view where) {
  Reader r(where);
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    throw app::ConfigError(
        fmt::format("--config-file {}:{}: not YAML: {}", where, e.mark.line + 1, e.msg));
  }
  DeviceDaemonFileSettings out;
  if (root.IsNull())
    return out;  // an empty file sets nothing
  r.mapping(root, "", {"version", "flags"});
  if (root["version"] && !root["version"].IsNull()) {
    auto version = r.string(root["version"], "version");
    if (!version.empty() && version != kVersion)
      r.fail(root["version"], "version", fmt::format("unknown version {:?} (want v1)", version));
  }
  if (!root["flags"])
    return out;
  auto flags = r.mapping(root["flags"], "flags", {"kdd"});
  if (!flags["kdd"])
    return out;
  auto kdd = r.mapping(flags["kdd"], "flags.kdd", {"oneshot", "sleepInterval", "printsOutputFile"});
  if (kdd["oneshot"])
    out.oneshot = r.boolean(kdd["oneshot"], "flags.kdd.oneshot");
  if (kdd["sleepInterval"]) {
    out.sleep_interval = r.duration(kdd["sleepInterval"], "flags.kdd.sleepInterval");
    if (out.sleep_interval->count() <= 0)
      r.fail(kdd["sleepInterval"], "flags.kdd.sleepInterval", "must be positive");
  }
  if (kdd["printsOutputFile"]) {
    out.prints_output_file = r.string(kdd["printsOutputFile"], "flags.kdd.printsOutputFile");
    if (out.prints_output_file->empty())
      r.fail(kdd["printsOutputFile"], "flags.kdd.printsOutputFile", "must not be empty");
  }
  return out;
}

DeviceDaemonFileSettings loadDeviceDaemonConfig(const std::string& path) {
  auto text = http::readFile(path);
  if (!text)
    throw app::ConfigError(fmt::format("--config-file {}: {}", path, text.error().message()));
  return parseDeviceDaemonConfig(*text, path);
}

void applyFileSettings(const DeviceDaemonFileSettings& s, const FlagSet& flags,
                       DeviceDaemonOptions& o) {
  if (s.oneshot && !flags.changed("oneshot"))
    o.oneshot = *s.oneshot;
  if (s.sleep_interval && !flags.changed("sleep-interval"))
    o.sleep_interval = *s.sleep_interval;
  if (s.prints_output_file && !flags.changed("prints-output-file"))
    o.prints_output_file = *s.prints_output_file;
}

DeviceDaemonOptions withConfigFile(const DeviceDaemonOptions& from_flags, const FlagSet& flags) {
  DeviceDaemonOptions o = from_flags;
  if (!o.config_file.empty())
    applyFileSettings(loadDeviceDaemonConfig(o.config_file), flags, o);
  validate(o);
  return o;
}

}  // namespace koord::roles::device_daemon
