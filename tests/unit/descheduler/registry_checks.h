// Checks shared by the plugins' registry-entry tests: the entry under its name, args decoded from
// JSON, and what it builds with and without args.
#pragma once

#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <string_view>

#include "fake_handle.h"
#include "framework/plugin_registry.h"

namespace koord::roles::descheduler::testkit {

/// The entry `add` (a plugin's register function) puts under `name`, copied out of the registry.
inline PluginFactory registeredEntry(void (*add)(PluginRegistry&), std::string_view name) {
  PluginRegistry r;
  add(r);
  const PluginFactory* f = r.find(std::string(name));
  REQUIRE(f != nullptr);
  return *f;
}

/// The entry's decoder applied to `text` parsed as JSON.
inline Expected<std::shared_ptr<const PluginArgs>> decodeEntryArgs(const PluginFactory& f,
                                                                   std::string_view text) {
  const boost::json::value v = boost::json::parse(text);
  return f.decode_args(&v, "descheduler/v1alpha2");
}

/// The plugin `args` build is named `name` and implements each of `Kinds`.
template <typename... Kinds>
void checkBuilds(const PluginFactory& f, std::shared_ptr<const PluginArgs> args,
                 std::string_view name) {
  FakeHandle h;
  auto p = f.create(std::move(args), h);
  REQUIRE(p.has_value());
  CHECK((*p)->name() == name);
  ([&] { CHECK(dynamic_cast<Kinds*>(p->get()) != nullptr); }(), ...);
}

/// The entry has defaults: decoded from no args, and built from those or from no args at all.
template <typename... Kinds>
void checkBuildsWithDefaults(const PluginFactory& f, std::string_view name) {
  auto defaults = f.decode_args(nullptr, "descheduler/v1alpha2");
  REQUIRE(defaults.has_value());
  for (const auto& args : {*defaults, std::shared_ptr<const PluginArgs>()})
    checkBuilds<Kinds...>(f, args, name);
}

/// The entry has no defaults: no args are refused by the decoder and by create; `text` decodes
/// and builds.
template <typename... Kinds>
void checkNeedsArgs(const PluginFactory& f, std::string_view text, std::string_view name) {
  FakeHandle h;
  CHECK_FALSE(f.decode_args(nullptr, "descheduler/v1alpha2").has_value());
  CHECK_FALSE(f.create(nullptr, h).has_value());
  auto args = decodeEntryArgs(f, text);
  REQUIRE(args.has_value());
  checkBuilds<Kinds...>(f, *args, name);
}

}  // namespace koord::roles::descheduler::testkit
