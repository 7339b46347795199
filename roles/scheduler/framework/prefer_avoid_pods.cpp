#include "prefer_avoid_pods.h"

#include <boost/json.hpp>

namespace koord::roles::scheduler {
namespace {

namespace json = boost::json;

// The member's string, or "" when it is absent or not a string.
std::string_view stringAt(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr || !v->is_string())
    return {};
  return v->get_string();
}

const json::object* objectAt(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v != nullptr && v->is_object() ? &v->get_object() : nullptr;
}

}  // namespace

std::vector<AvoidedController> parsePreferAvoidPods(std::string_view annotation) {
  std::vector<AvoidedController> out;
  boost::system::error_code ec;
  // The annotation is bounded by the API server's limit on all of a node's annotations.
  json::value doc = json::parse(annotation, ec);
  if (ec || !doc.is_object())
    return out;
  const json::value* list = doc.get_object().if_contains("preferAvoidPods");
  if (list == nullptr || !list->is_array())
    return out;
  for (const json::value& entry : list->get_array()) {
    if (out.size() == kMaxAvoidedControllers)
      break;
    if (!entry.is_object())
      continue;
    const json::object* signature = objectAt(entry.get_object(), "podSignature");
    const json::object* controller =
        signature != nullptr ? objectAt(*signature, "podController") : nullptr;
    if (controller == nullptr)
      continue;
    out.push_back(
        {std::string(stringAt(*controller, "kind")), std::string(stringAt(*controller, "uid"))});
  }
  return out;
}

}  // namespace koord::roles::scheduler
