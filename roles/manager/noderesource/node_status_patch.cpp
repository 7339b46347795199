#include "noderesource/node_status_patch.h"

#include <boost/json.hpp>

#include "koord/apis/extension.h"

namespace koord::roles::manager::noderesource {

boost::json::value buildNodeStatusPatch(const BatchValues& desired) {
  namespace json = boost::json;
  auto entry = [](const std::optional<kube::Quantity>& q) -> json::value {
    if (!q)
      return nullptr;
    return json::value(q->toString());
  };
  json::object resources;
  resources.reserve(2);
  resources.emplace(apis::kBatchCPU, entry(desired.cpu));
  resources.emplace(apis::kBatchMemory, entry(desired.memory));
  json::object status;
  status.reserve(2);
  status.emplace("capacity", resources);
  status.emplace("allocatable", std::move(resources));
  json::object patch;
  patch.emplace("status", std::move(status));
  return patch;
}

}  // namespace koord::roles::manager::noderesource
