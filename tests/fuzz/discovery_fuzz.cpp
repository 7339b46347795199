// API discovery answers (APIGroup from /apis/<group>, APIResourceList from /api/v1 and
// /apis/<group>/<version>): components pick the API version they talk in from them, so whatever
// answers on the API server's address decides this text. Each input goes to both parsers. What
// they accept must write back out in the API's shape and parse to the same value, and the
// lookups must find what the answer lists.
#include <boost/json.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "koord/kube/discovery.h"
#include "koord/kube/json_limits.h"

namespace {

namespace json = boost::json;
using namespace koord::kube;

void check(bool ok) {
  if (!ok)
    std::abort();
}

json::value groupJson(const ServedGroup& g) {
  json::array versions;
  for (const auto& v : g.versions)
    versions.push_back(json::object{{"groupVersion", groupVersion(g.name, v)}, {"version", v}});
  return json::object{{"kind", "APIGroup"},
                      {"name", g.name},
                      {"versions", std::move(versions)},
                      {"preferredVersion", json::object{{"version", g.preferred_version}}}};
}

json::value resourcesJson(const ServedResources& list) {
  json::array resources;
  for (const auto& r : list.resources)
    resources.push_back(json::object{{"name", r.name},
                                     {"kind", r.kind},
                                     {"group", r.group},
                                     {"version", r.version},
                                     {"namespaced", r.namespaced}});
  return json::object{{"kind", "APIResourceList"},
                      {"groupVersion", list.group_version},
                      {"resources", std::move(resources)}};
}

bool sameResource(const ServedResource& a, const ServedResource& b) {
  return a.name == b.name && a.kind == b.kind && a.group == b.group && a.version == b.version &&
         a.namespaced == b.namespaced;
}

void checkGroup(const json::value& v) {
  auto g = parseApiGroup(v);
  if (!g)
    return;
  for (const auto& version : g->versions)
    check(!version.empty() && g->serves(version));
  auto again = parseApiGroup(groupJson(*g));
  check(again && again->name == g->name && again->versions == g->versions &&
        again->preferred_version == g->preferred_version);
}

void checkResources(const json::value& v) {
  auto list = parseApiResourceList(v);
  if (!list)
    return;
  for (const auto& r : list->resources) {
    const ServedResource* found = list->find(r.name);
    check(!r.name.empty() && found != nullptr && found->name == r.name);
  }
  auto again = parseApiResourceList(resourcesJson(*list));
  check(again && again->group_version == list->group_version &&
        again->resources.size() == list->resources.size());
  for (std::size_t i = 0; i < list->resources.size(); ++i)
    check(sameResource(again->resources[i], list->resources[i]));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  boost::system::error_code ec;
  // The REST client's parse options, which discovery's GETs go through.
  const json::value v = json::parse(text, ec, json::storage_ptr(), apiObjectParseOptions());
  if (ec)
    return 0;
  checkGroup(v);
  checkResources(v);
  return 0;
}
