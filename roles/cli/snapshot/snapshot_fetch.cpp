#include "snapshot/snapshot_fetch.h"

#include <fmt/format.h>
#include <boost/json.hpp>

#include <algorithm>
#include <chrono>

namespace koord::roles::cli {
namespace json = boost::json;
namespace {

constexpr std::int64_t kPageSize = 500;

kube::ResourceRef refOf(const SnapshotKind& kind, const std::string& koord_namespace) {
  kube::ResourceRef ref;
  const std::string_view api_version = kind.api_version;
  if (auto slash = api_version.find('/'); slash != std::string_view::npos) {
    ref.group = std::string(api_version.substr(0, slash));
    ref.version = std::string(api_version.substr(slash + 1));
  } else {
    ref.version = std::string(api_version);
  }
  ref.resource = std::string(kind.resource);
  if (kind.koord_namespace_only)
    ref.namespace_ = koord_namespace;
  return ref;
}

// Every page of one kind; the error of the page that failed.
kube::ApiResult<std::vector<json::value>> listAll(kube::RestClient& client,
                                                  const SnapshotKind& kind,
                                                  const kube::ResourceRef& ref,
                                                  std::size_t budget) {
  std::vector<json::value> out;
  kube::ListOptions options;
  options.limit = kPageSize;
  options.field_selector = std::string(kind.field_selector);
  while (true) {
    auto page = client.listSync(ref, options);
    if (!page)
      return page.error();
    if (!page->is_object())
      return kube::ApiError{0, "", "the list is not an object", {}, {}};
    json::object& list = page->get_object();
    if (json::value* items = list.if_contains("items"); items && items->is_array()) {
      for (json::value& item : items->get_array()) {
        if (!item.is_object())
          continue;
        if (out.size() >= budget)
          return kube::ApiError{0, "", fmt::format("more than {} objects", budget), {}, {}};
        normalizeItem(item, kind);
        out.push_back(std::move(item));
      }
    }
    std::string next;
    if (const json::value* meta = list.if_contains("metadata"); meta && meta->is_object()) {
      if (const json::value* c = meta->get_object().if_contains("continue"); c && c->is_string())
        next = std::string(c->get_string());
    }
    if (next.empty())
      return out;
    options.continue_ = std::move(next);
  }
}

}  // namespace

kube::Expected<ClusterSnapshot> takeSnapshot(kube::RestClient& client,
                                             const FetchOptions& options) {
  ClusterSnapshot snapshot;
  snapshot.taken_at = std::chrono::system_clock::now();
  snapshot.server = client.config().host;
  std::size_t total = 0;
  for (const SnapshotKind& kind : snapshotKinds()) {
    if (!options.kinds.empty() &&
        std::find(options.kinds.begin(), options.kinds.end(), kind.kind) == options.kinds.end())
      continue;
    if (options.on_kind)
      options.on_kind(kind);
    auto items =
        listAll(client, kind, refOf(kind, options.koord_namespace), kMaxSnapshotObjects - total);
    if (!items) {
      const kube::ApiError& e = items.error();
      std::string why = fmt::format("cannot list {} ({}): {}", kind.resource, kind.api_version,
                                    e.message.empty() ? e.reason : e.message);
      if (kind.required)
        return kube::makeKubeError(std::move(why));
      if (options.warn)
        options.warn(why + (e.code == 404 ? " (not installed?)" : "") + "; left out");
      snapshot.missing_kinds.emplace_back(kind.kind);
      continue;
    }
    total += items->size();
    if (!items->empty())
      snapshot.objects[std::string(kind.kind)] = std::move(*items);
  }
  return snapshot;
}

}  // namespace koord::roles::cli
