#include "extender_config.h"

#include <boost/json.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <utility>

#include "koord/kube/json_fields.h"
#include "koord/kube/kubeconfig.h"
#include "koord/kube/labels.h"
#include "koord/kube/strict_fields.h"

namespace koord::roles::scheduler::config {

namespace {

namespace json = boost::json;
namespace jf = kube::jsonfields;
using namespace kube::strict;
using kube::Expected;

// Bounds on what the file may list: each extender costs HTTP calls in every cycle, so a list
// longer than this is a mistake, not a configuration.
constexpr std::size_t kMaxExtenders = 32;
constexpr std::size_t kMaxManagedResources = 256;

// v1helper.IsExtendedResourceName: a domain-prefixed name outside kubernetes.io, not a quota's
// "requests." name, that stays a qualified name with "requests." in front.
bool isExtendedResourceName(std::string_view name) {
  const bool native = name.find('/') == std::string_view::npos ||
                      name.find("kubernetes.io/") != std::string_view::npos;
  if (native || name.starts_with("requests."))
    return false;
  return !kube::validateLabelKey("requests." + std::string(name)).has_value();
}

Expected<std::string> stringOrEmpty(const json::object& o, std::string_view name,
                                    std::string_view path) {
  auto s = stringField(o, name, path);
  if (!s)
    return s.error();
  return s->value_or("");
}

Expected<bool> boolOrFalse(const json::object& o, std::string_view name, std::string_view path) {
  auto b = boolField(o, name, path);
  if (!b)
    return b.error();
  return b->value_or(false);
}

// []byte in Go's JSON: standard base64 of the PEM text.
Expected<std::string> bytesField(const json::object& o, std::string_view name,
                                 std::string_view path) {
  auto s = stringField(o, name, path);
  if (!s)
    return s.error();
  if (!*s)
    return std::string();
  auto decoded = kube::decodeBase64(**s);
  if (!decoded)
    return fieldError(jf::childPath(path, name),
                      fmt::format("not base64 data: {}", decoded.error().message));
  return std::move(*decoded);
}

Expected<ExtenderTlsConfig> parseTls(const json::object& o, const std::string& path) {
  if (auto r = rejectUnknownFields(o,
                                   {"insecure", "serverName", "certFile", "keyFile", "caFile",
                                    "certData", "keyData", "caData"},
                                   path);
      !r)
    return r.error();
  ExtenderTlsConfig out;
  auto insecure = boolOrFalse(o, "insecure", path);
  if (!insecure)
    return insecure.error();
  out.insecure = *insecure;
  const std::pair<std::string_view, std::string*> strings[] = {{"serverName", &out.server_name},
                                                               {"certFile", &out.cert_file},
                                                               {"keyFile", &out.key_file},
                                                               {"caFile", &out.ca_file}};
  for (const auto& [name, dst] : strings) {
    auto s = stringOrEmpty(o, name, path);
    if (!s)
      return s.error();
    *dst = std::move(*s);
  }
  const std::pair<std::string_view, std::string*> bytes[] = {
      {"certData", &out.cert_data}, {"keyData", &out.key_data}, {"caData", &out.ca_data}};
  for (const auto& [name, dst] : bytes) {
    auto s = bytesField(o, name, path);
    if (!s)
      return s.error();
    *dst = std::move(*s);
  }
  // client-go refuses both when it builds the transport; kube-scheduler then fails to start.
  const bool has_ca = !out.ca_file.empty() || !out.ca_data.empty();
  if (out.insecure && has_ca)
    return fieldError(path,
                      "specifying a root certificates file with the insecure flag is not "
                      "allowed");
  const bool has_cert = !out.cert_file.empty() || !out.cert_data.empty();
  const bool has_key = !out.key_file.empty() || !out.key_data.empty();
  if (has_cert != has_key)
    return fieldError(path,
                      "a client certificate (certFile or certData) and its key (keyFile "
                      "or keyData) must be given together");
  return out;
}

Expected<std::vector<ExtenderManagedResource>> parseManagedResources(const json::object& o,
                                                                     const std::string& path) {
  std::vector<ExtenderManagedResource> out;
  auto list = arrayField(o, "managedResources", path);
  if (!list)
    return list.error();
  if (*list == nullptr)
    return out;
  const std::string list_path = jf::childPath(path, "managedResources");
  if ((*list)->size() > kMaxManagedResources)
    return fieldError(list_path, fmt::format("{} entries, at most {} allowed", (*list)->size(),
                                             kMaxManagedResources));
  for (std::size_t j = 0; j < (*list)->size(); ++j) {
    const std::string item_path = jf::indexPath(list_path, j);
    auto item = asObject((**list)[j], item_path);
    if (!item)
      return item.error();
    if (auto r = rejectUnknownFields(**item, {"name", "ignoredByScheduler"}, item_path); !r)
      return r.error();
    ExtenderManagedResource r;
    auto name = stringOrEmpty(**item, "name", item_path);
    if (!name)
      return name.error();
    r.name = std::move(*name);
    auto ignored = boolOrFalse(**item, "ignoredByScheduler", item_path);
    if (!ignored)
      return ignored.error();
    r.ignored_by_scheduler = *ignored;
    out.push_back(std::move(r));
  }
  return out;
}

Expected<Extender> parseExtender(const json::value& v, const std::string& path) {
  auto obj = asObject(v, path);
  if (!obj)
    return obj.error();
  const json::object& o = **obj;
  if (auto r = rejectUnknownFields(o,
                                   {"urlPrefix", "filterVerb", "preemptVerb", "prioritizeVerb",
                                    "weight", "bindVerb", "enableHTTPS", "tlsConfig", "httpTimeout",
                                    "nodeCacheCapable", "managedResources", "ignorable"},
                                   path);
      !r)
    return r.error();
  Extender out;
  const std::pair<std::string_view, std::string*> strings[] = {
      {"urlPrefix", &out.url_prefix},
      {"filterVerb", &out.filter_verb},
      {"preemptVerb", &out.preempt_verb},
      {"prioritizeVerb", &out.prioritize_verb},
      {"bindVerb", &out.bind_verb}};
  for (const auto& [name, dst] : strings) {
    auto s = stringOrEmpty(o, name, path);
    if (!s)
      return s.error();
    *dst = std::move(*s);
  }
  // kube-scheduler does not check it and fails every call instead; a clear startup error is
  // kinder.
  if (!out.url_prefix.starts_with("http://") && !out.url_prefix.starts_with("https://"))
    return fieldError(jf::childPath(path, "urlPrefix"),
                      fmt::format("must be an http:// or https:// URL, got {:?}", out.url_prefix));
  auto weight = int64Field(o, "weight", path);
  if (!weight)
    return weight.error();
  out.weight = weight->value_or(0);
  const std::pair<std::string_view, bool*> flags[] = {{"enableHTTPS", &out.enable_https},
                                                      {"nodeCacheCapable", &out.node_cache_capable},
                                                      {"ignorable", &out.ignorable}};
  for (const auto& [name, dst] : flags) {
    auto b = boolOrFalse(o, name, path);
    if (!b)
      return b.error();
    *dst = *b;
  }
  auto tls = objectField(o, "tlsConfig", path);
  if (!tls)
    return tls.error();
  if (*tls != nullptr) {
    auto parsed = parseTls(**tls, jf::childPath(path, "tlsConfig"));
    if (!parsed)
      return parsed.error();
    out.tls_config = std::move(*parsed);
  }
  auto timeout = durationField(o, "httpTimeout", path);
  if (!timeout)
    return timeout.error();
  if (*timeout && **timeout < std::chrono::nanoseconds::zero())
    return fieldError(jf::childPath(path, "httpTimeout"), "must not be negative");
  if (*timeout && **timeout > std::chrono::nanoseconds::zero())
    out.http_timeout = **timeout;
  auto managed = parseManagedResources(o, path);
  if (!managed)
    return managed.error();
  out.managed_resources = std::move(*managed);
  return out;
}

// Upstream's validateExtenders, which runs once the whole list is decoded.
Expected<void> validateExtenders(const std::vector<Extender>& extenders) {
  std::size_t binders = 0;
  std::set<std::string, std::less<>> managed;
  for (std::size_t i = 0; i < extenders.size(); ++i) {
    const Extender& e = extenders[i];
    const std::string path = jf::indexPath("extenders", i);
    if (!e.prioritize_verb.empty() && e.weight <= 0)
      return fieldError(jf::childPath(path, "weight"),
                        fmt::format("must have a positive weight applied to it, got {}", e.weight));
    if (!e.bind_verb.empty())
      ++binders;
    for (std::size_t j = 0; j < e.managed_resources.size(); ++j) {
      const std::string& name = e.managed_resources[j].name;
      const std::string name_path =
          jf::childPath(jf::indexPath(jf::childPath(path, "managedResources"), j), "name");
      if (auto why = kube::validateLabelKey(name))
        return fieldError(name_path, fmt::format("{:?}: {}", name, *why));
      if (!isExtendedResourceName(name))
        return fieldError(name_path,
                          fmt::format("{:?} is an invalid extended resource name", name));
      if (!managed.insert(name).second)
        return fieldError(name_path,
                          fmt::format("duplicate extender managed resource name {:?}", name));
    }
  }
  if (binders > 1)
    return fieldError("extenders",
                      fmt::format("only one extender can implement bind, found {}", binders));
  return {};
}

}  // namespace

Expected<std::vector<Extender>> parseExtenders(const json::object& config) {
  std::vector<Extender> out;
  auto list = arrayField(config, "extenders", "");
  if (!list)
    return list.error();
  if (*list == nullptr)
    return out;
  if ((*list)->size() > kMaxExtenders)
    return fieldError(
        "extenders", fmt::format("{} entries, at most {} allowed", (*list)->size(), kMaxExtenders));
  for (std::size_t i = 0; i < (*list)->size(); ++i) {
    auto e = parseExtender((**list)[i], jf::indexPath("extenders", i));
    if (!e)
      return e.error();
    out.push_back(std::move(*e));
  }
  if (auto r = validateExtenders(out); !r)
    return r.error();
  return out;
}

std::vector<std::string> ignoredExtenderResources(const std::vector<Extender>& extenders) {
  std::vector<std::string> out;
  for (const Extender& e : extenders) {
    for (const ExtenderManagedResource& r : e.managed_resources) {
      if (r.ignored_by_scheduler && std::find(out.begin(), out.end(), r.name) == out.end())
        out.push_back(r.name);
    }
  }
  return out;
}

}  // namespace koord::roles::scheduler::config
