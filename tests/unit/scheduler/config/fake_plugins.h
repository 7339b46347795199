// Fake plugin factories for the configuration tests: registries that know plugin names and
// decode args, and tables of the extension points each fake plugin implements.
#pragma once

#include <boost/json/value.hpp>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "config/plugin_set.h"
#include "framework/plugin_registry.h"

namespace koord::roles::scheduler::configtest {

/// What a fake decoder saw: its x (7 unless given), the apiVersion it was told, and the args.
struct FakeArgs : PluginArgs {
  std::int64_t x = 7;
  std::string api_version;
  boost::json::value raw;  // null when decoded from no args
};

enum class Decoder {
  /// Accepts {"x": <integer>} and refuses any other field.
  kStrictX,
  /// Accepts any object (Koordinator's real args shapes).
  kAnyObject,
};

/// A registry with one fake factory per name; create() is never called by these tests.
PluginRegistry fakeRegistry(const std::vector<std::string_view>& names,
                            Decoder decoder = Decoder::kStrictX);

/// The upstream plugins koord has (the default sets less the volume and image ones), plus
/// NodeResourcesLeastAllocated for v1beta1.
std::vector<std::string_view> koordUpstreamPlugins();

/// Extension points per fake plugin, modelled on the real plugins of that name.
using PointTable = std::map<std::string, std::set<config::ExtensionPoint>, std::less<>>;
const PointTable& realPointTable();
/// An ImplementsFn-compatible lookup in `table`.
bool implementsIn(const PointTable& table, std::string_view plugin, config::ExtensionPoint p);

}  // namespace koord::roles::scheduler::configtest
