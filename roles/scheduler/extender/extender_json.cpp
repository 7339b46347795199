#include "extender/extender_json.h"

#include <boost/json.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "framework/snapshot.h"
#include "koord/kube/json_fields.h"
#include "koord/kube/quantity.h"

namespace koord::roles::scheduler::extender {

namespace {

namespace json = boost::json;
namespace jf = kube::jsonfields;
using kube::Expected;

// Answers are shallow (a NodeList's Node objects at most); this leaves room and stops a hostile
// peer's nesting long before the stack would care.
constexpr std::size_t kMaxAnswerDepth = 64;

bool equalFold(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c; };
           return lower(x) == lower(y);
         });
}

// Go's decoder: the exactly named member, else one whose name matches ignoring case; null is
// absent.
const json::value* member(const json::object& o, std::string_view name) {
  const json::value* found = nullptr;
  if (auto it = o.find(name); it != o.end()) {
    found = &it->value();
  } else {
    for (const auto& kv : o) {
      if (equalFold(std::string_view(kv.key().data(), kv.key().size()), name)) {
        found = &kv.value();
        break;
      }
    }
  }
  return found != nullptr && !found->is_null() ? found : nullptr;
}

Expected<json::value> parseAnswer(std::string_view body) {
  json::parse_options options;
  options.max_depth = kMaxAnswerDepth;
  boost::system::error_code ec;
  json::value v = json::parse(body, ec, {}, options);
  if (ec)
    return kube::makeKubeError(fmt::format("malformed answer: {}", ec.message()));
  return v;
}

kube::Error answerError(std::string_view path, std::string_view want, const json::value& got) {
  return kube::makeKubeError(
      fmt::format("malformed answer: {}", jf::typeError(path, want, got).message));
}

json::object labelsJson(const kube::Labels& labels) {
  json::object o;
  for (const auto& [k, v] : labels)
    o[k] = v;
  return o;
}

json::object resourceJson(const Resource& r) {
  using kube::Quantity;
  json::object o;
  if (r.milli_cpu != 0)
    o[kResourceCPU] = Quantity::fromMilli(r.milli_cpu).toString();
  if (r.memory != 0)
    o[kResourceMemory] = Quantity::fromInt(r.memory, Quantity::Format::kBinarySI).toString();
  if (r.ephemeral_storage != 0)
    o[kResourceEphemeralStorage] =
        Quantity::fromInt(r.ephemeral_storage, Quantity::Format::kBinarySI).toString();
  if (r.allowed_pod_number != 0)
    o[kResourcePods] = Quantity::fromInt(r.allowed_pod_number).toString();
  for (const auto& [name, value] : r.scalar)
    o[name] = Quantity::fromInt(value).toString();
  return o;
}

using NameIndex = std::unordered_map<std::string_view, std::size_t>;

NameIndex indexByName(const std::vector<const NodeInfo*>& sent) {
  NameIndex index;
  index.reserve(sent.size());
  for (std::size_t i = 0; i < sent.size(); ++i)
    index.emplace(sent[i]->name(), i);
  return index;
}

// FailedNodesMap: node name -> message; names that were not sent are dropped.
Expected<std::vector<std::pair<std::size_t, std::string>>> failedNodes(const json::object& o,
                                                                       std::string_view name,
                                                                       const NameIndex& index) {
  std::vector<std::pair<std::size_t, std::string>> out;
  const json::value* v = member(o, name);
  if (v == nullptr)
    return out;
  if (!v->is_object())
    return answerError(name, "object", *v);
  for (const auto& kv : v->get_object()) {
    const std::string_view node(kv.key().data(), kv.key().size());
    if (!kv.value().is_string())
      return answerError(jf::childPath(name, node), "string", kv.value());
    auto it = index.find(node);
    if (it == index.end())
      continue;
    out.emplace_back(it->second, std::string(kv.value().get_string()));
  }
  return out;
}

}  // namespace

json::value podFromProjection(const PodInfo& pod) {
  json::object meta{{"name", pod.name}, {"namespace", pod.namespace_}, {"uid", pod.uid}};
  if (!pod.resource_version.empty())
    meta["resourceVersion"] = pod.resource_version;
  if (!pod.labels.empty())
    meta["labels"] = labelsJson(pod.labels);
  if (!pod.annotations.empty())
    meta["annotations"] = labelsJson(pod.annotations);
  json::object resources;
  if (auto requests = resourceJson(pod.requests); !requests.empty())
    resources["requests"] = std::move(requests);
  if (auto limits = resourceJson(pod.limits); !limits.empty())
    resources["limits"] = std::move(limits);
  json::object container{{"name", "requests"}, {"resources", std::move(resources)}};
  json::object spec{{"schedulerName", pod.scheduler_name},
                    {"priority", pod.priority},
                    {"containers", json::array{std::move(container)}}};
  if (!pod.node_name.empty())
    spec["nodeName"] = pod.node_name;
  if (!pod.node_selector.empty())
    spec["nodeSelector"] = labelsJson(pod.node_selector);
  return json::object{{"apiVersion", "v1"},
                      {"kind", "Pod"},
                      {"metadata", std::move(meta)},
                      {"spec", std::move(spec)}};
}

json::value nodeFromProjection(const Node& node) {
  json::object meta{{"name", node.name}};
  if (!node.uid.empty())
    meta["uid"] = node.uid;
  if (!node.labels.empty())
    meta["labels"] = labelsJson(node.labels);
  if (!node.annotations.empty())
    meta["annotations"] = labelsJson(node.annotations);
  json::object spec;
  if (node.unschedulable)
    spec["unschedulable"] = true;
  if (!node.taints.empty()) {
    json::array taints;
    for (const auto& t : node.taints) {
      json::object taint{{"key", t.key}, {"effect", kube::toString(t.effect)}};
      if (!t.value.empty())
        taint["value"] = t.value;
      taints.push_back(std::move(taint));
    }
    spec["taints"] = std::move(taints);
  }
  return json::object{{"metadata", std::move(meta)},
                      {"spec", std::move(spec)},
                      {"status", json::object{{"capacity", resourceJson(node.capacity)},
                                              {"allocatable", resourceJson(node.allocatable)}}}};
}

std::string extenderArgs(std::string_view pod_json, const std::vector<const NodeInfo*>& nodes,
                         bool node_cache_capable) {
  std::string out = "{\"Pod\":";
  out += pod_json;
  if (node_cache_capable) {
    json::array names;
    names.reserve(nodes.size());
    for (const NodeInfo* n : nodes)
      names.emplace_back(n->name());
    out += ",\"Nodes\":null,\"NodeNames\":";
    out += json::serialize(names);
  } else {
    out += ",\"Nodes\":{\"metadata\":{},\"items\":[";
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      if (i != 0)
        out += ',';
      // A snapshot's nodes always have their Node (the cache lists no other).
      out += json::serialize(nodes[i]->node ? nodeFromProjection(*nodes[i]->node)
                                            : json::value(json::object{}));
    }
    out += "]},\"NodeNames\":null";
  }
  out += '}';
  return out;
}

std::string bindingArgs(const PodInfo& pod, const std::string& node) {
  return json::serialize(json::object{{"PodName", pod.name},
                                      {"PodNamespace", pod.namespace_},
                                      {"PodUID", pod.uid},
                                      {"Node", node}});
}

Expected<FilterAnswer> parseFilterResult(std::string_view body,
                                         const std::vector<const NodeInfo*>& sent,
                                         bool node_cache_capable, std::string_view extender) {
  auto parsed = parseAnswer(body);
  if (!parsed)
    return parsed.error();
  FilterAnswer out;
  if (parsed->is_null())
    return out;
  if (!parsed->is_object())
    return answerError("", "an ExtenderFilterResult object", *parsed);
  const json::object& o = parsed->get_object();
  if (const json::value* e = member(o, "Error")) {
    if (!e->is_string())
      return answerError("Error", "string", *e);
    out.error = std::string(e->get_string());
    if (!out.error.empty())
      return out;
  }
  const NameIndex index = indexByName(sent);
  std::vector<char> seen(sent.size(), 0);
  auto pass = [&](std::string_view name) -> Expected<void> {
    auto it = index.find(name);
    if (it == index.end())
      return kube::makeKubeError(fmt::format(
          "extender {:?} claims a filtered node {:?} which is not found in the input node list",
          extender, name));
    if (!seen[it->second]) {
      seen[it->second] = 1;
      out.passed.push_back(it->second);
    }
    return {};
  };
  const json::value* names = node_cache_capable ? member(o, "NodeNames") : nullptr;
  if (names != nullptr) {
    if (!names->is_array())
      return answerError("NodeNames", "array", *names);
    for (std::size_t i = 0; i < names->get_array().size(); ++i) {
      const json::value& n = names->get_array()[i];
      if (!n.is_string())
        return answerError(jf::indexPath("NodeNames", i), "string", n);
      if (auto r = pass(std::string_view(n.get_string().data(), n.get_string().size())); !r)
        return r.error();
    }
  } else if (const json::value* list = member(o, "Nodes")) {
    if (!list->is_object())
      return answerError("Nodes", "object", *list);
    if (const json::value* items = member(list->get_object(), "items")) {
      if (!items->is_array())
        return answerError("Nodes.items", "array", *items);
      for (std::size_t i = 0; i < items->get_array().size(); ++i) {
        const std::string path = jf::indexPath("Nodes.items", i);
        const json::value& item = items->get_array()[i];
        if (!item.is_object())
          return answerError(path, "object", item);
        const json::value* meta = member(item.get_object(), "metadata");
        const json::value* name =
            meta != nullptr && meta->is_object() ? member(meta->get_object(), "name") : nullptr;
        if (name == nullptr || !name->is_string())
          return answerError(path + ".metadata.name", "string",
                             name != nullptr ? *name : json::value(nullptr));
        if (auto r = pass(std::string_view(name->get_string().data(), name->get_string().size()));
            !r)
          return r.error();
      }
    }
  }
  auto failed = failedNodes(o, "FailedNodes", index);
  if (!failed)
    return failed.error();
  out.failed = std::move(*failed);
  auto unresolvable = failedNodes(o, "FailedAndUnresolvableNodes", index);
  if (!unresolvable)
    return unresolvable.error();
  out.unresolvable = std::move(*unresolvable);
  return out;
}

Expected<std::vector<std::pair<std::size_t, std::int64_t>>> parseHostPriorities(
    std::string_view body, const std::vector<const NodeInfo*>& sent) {
  auto parsed = parseAnswer(body);
  if (!parsed)
    return parsed.error();
  std::vector<std::pair<std::size_t, std::int64_t>> out;
  if (parsed->is_null())
    return out;
  if (!parsed->is_array())
    return answerError("", "a HostPriorityList array", *parsed);
  const NameIndex index = indexByName(sent);
  const json::array& list = parsed->get_array();
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string path = jf::indexPath("", i);
    if (!list[i].is_object())
      return answerError(path, "object", list[i]);
    const json::object& entry = list[i].get_object();
    const json::value* host = member(entry, "Host");
    if (host != nullptr && !host->is_string())
      return answerError(path + ".Host", "string", *host);
    std::int64_t score = 0;
    if (const json::value* s = member(entry, "Score")) {
      auto v = jf::intValue(*s, path + ".Score");
      if (!v)
        return kube::makeKubeError("malformed answer: " + v.error().message);
      score = std::clamp<std::int64_t>(*v, 0, kMaxExtenderPriority);
    }
    if (host == nullptr)
      continue;
    auto it = index.find(std::string_view(host->get_string().data(), host->get_string().size()));
    if (it != index.end())
      out.emplace_back(it->second, score);
  }
  return out;
}

Expected<std::string> parseBindingResult(std::string_view body) {
  auto parsed = parseAnswer(body);
  if (!parsed)
    return parsed.error();
  if (parsed->is_null())
    return std::string();
  if (!parsed->is_object())
    return answerError("", "an ExtenderBindingResult object", *parsed);
  const json::value* e = member(parsed->get_object(), "Error");
  if (e == nullptr)
    return std::string();
  if (!e->is_string())
    return answerError("Error", "string", *e);
  return std::string(e->get_string());
}

std::string preemptionArgs(std::string_view pod_json,
                           const std::vector<PreemptionCandidate>& candidates,
                           bool node_cache_capable) {
  json::object victims_by_node;
  victims_by_node.reserve(candidates.size());
  for (const PreemptionCandidate& c : candidates) {
    json::array pods;
    pods.reserve(c.victims.size());
    for (const auto& v : c.victims) {
      if (node_cache_capable)
        pods.push_back(json::object{{"UID", v->uid}});
      else
        pods.push_back(podFromProjection(*v));
    }
    victims_by_node[c.node] =
        json::object{{"Pods", std::move(pods)}, {"NumPDBViolations", c.num_pdb_violations}};
  }
  std::string out = "{\"Pod\":";
  out += pod_json;
  const std::string victims = json::serialize(victims_by_node);
  if (node_cache_capable) {
    out += ",\"NodeNameToVictims\":null,\"NodeNameToMetaVictims\":";
    out += victims;
  } else {
    out += ",\"NodeNameToVictims\":";
    out += victims;
    out += ",\"NodeNameToMetaVictims\":null";
  }
  out += '}';
  return out;
}

Expected<std::vector<PreemptionCandidate>> parsePreemptionResult(
    std::string_view body, const Snapshot& snapshot, const std::vector<PreemptionCandidate>& sent,
    std::string_view extender) {
  auto parsed = parseAnswer(body);
  if (!parsed)
    return parsed.error();
  std::vector<PreemptionCandidate> out;
  if (parsed->is_null())
    return out;
  if (!parsed->is_object())
    return answerError("", "an ExtenderPreemptionResult object", *parsed);
  const json::value* by_node = member(parsed->get_object(), "NodeNameToMetaVictims");
  if (by_node == nullptr)
    return out;
  if (!by_node->is_object())
    return answerError("NodeNameToMetaVictims", "object", *by_node);
  // Every node named must be in the snapshot, so the answer holds at most its nodes.
  std::unordered_set<std::string_view> seen_nodes;
  for (const auto& kv : by_node->get_object()) {
    const std::string_view node(kv.key().data(), kv.key().size());
    const std::string path = jf::childPath("NodeNameToMetaVictims", node);
    if (!seen_nodes.insert(node).second)
      continue;
    if (!kv.value().is_object())
      return answerError(path, "object", kv.value());
    const NodeInfo* info = snapshot.get(node);
    if (info == nullptr || !info->node)
      return kube::makeKubeError(fmt::format("nodeinfo not found for node name {:?}", node));
    const json::object& meta = kv.value().get_object();
    PreemptionCandidate c;
    c.node = std::string(node);
    if (const json::value* pods = member(meta, "Pods")) {
      if (!pods->is_array())
        return answerError(path + ".Pods", "array", *pods);
      std::unordered_map<std::string_view, const std::shared_ptr<const PodInfo>*> on_node;
      on_node.reserve(info->pods.size());
      for (const auto& p : info->pods)
        on_node.emplace(p->uid, &p);
      std::unordered_set<std::string_view> seen_uids;
      for (std::size_t i = 0; i < pods->get_array().size(); ++i) {
        const std::string pod_path = jf::indexPath(path + ".Pods", i);
        const json::value& item = pods->get_array()[i];
        if (!item.is_object())
          return answerError(pod_path, "object", item);
        std::string_view uid;
        if (const json::value* u = member(item.get_object(), "UID")) {
          if (!u->is_string())
            return answerError(pod_path + ".UID", "string", *u);
          uid = std::string_view(u->get_string().data(), u->get_string().size());
        }
        auto it = on_node.find(uid);
        if (it == on_node.end())
          return kube::makeKubeError(
              fmt::format("extender: {} claims to preempt pod (UID: {}) on node: {}, but the pod "
                          "is not found on that node",
                          extender, uid, node));
        if (seen_uids.insert(uid).second)
          c.victims.push_back(*it->second);
      }
    }
    if (const json::value* n = member(meta, "NumPDBViolations")) {
      auto v = jf::intValue(*n, path + ".NumPDBViolations");
      if (!v)
        return kube::makeKubeError("malformed answer: " + v.error().message);
      c.num_pdb_violations =
          std::clamp<std::int64_t>(*v, 0, static_cast<std::int64_t>(c.victims.size()));
    }
    out.push_back(std::move(c));
  }
  // The candidates' own order (the dry run's: nodes without PDB violations first), so that the
  // pick's last tie-break does not depend on how the extender ordered its map.
  std::unordered_map<std::string_view, std::size_t> rank;
  rank.reserve(sent.size());
  for (std::size_t i = 0; i < sent.size(); ++i)
    rank.emplace(sent[i].node, i);
  std::stable_sort(out.begin(), out.end(), [&](const auto& a, const auto& b) {
    auto ra = rank.find(a.node);
    auto rb = rank.find(b.node);
    const std::size_t ia = ra == rank.end() ? sent.size() : ra->second;
    const std::size_t ib = rb == rank.end() ? sent.size() : rb->second;
    return ia < ib;
  });
  return out;
}

}  // namespace koord::roles::scheduler::extender
