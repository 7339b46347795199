#include "plugins/upstream/noderesources/fit.h"

#include <boost/json.hpp>

#include <algorithm>

#include <fmt/format.h>

#include "koord/kube/json_fields.h"
#include "koord/kube/labels.h"
#include "plugins/upstream/args_decode.h"
#include "plugins/upstream/noderesources/resource_args.h"

namespace koord::roles::scheduler::upstream {

namespace {

namespace json = boost::json;
using kube::jsonfields::childPath;
using kube::jsonfields::field;
using kube::jsonfields::indexPath;

constexpr std::string_view kPreFilterStateKey = "PreFilterNodeResourcesFit";
const StateKey kPreFilterState{kPreFilterStateKey};

struct FitState final : StateData {
  Resource request;
  /// What Filter compares on every node, worked out once per pod: whether the pod requests
  /// anything at all, and its scalar requests less the ignored ones.
  bool requests_nothing = false;
  std::vector<std::pair<std::string, std::int64_t>> checked_scalars;
  std::unique_ptr<StateData> clone() const override { return std::make_unique<FitState>(*this); }
};

kube::Expected<ScoringStrategyType> strategyType(std::string_view s, std::string_view path) {
  if (s == "LeastAllocated")
    return ScoringStrategyType::kLeastAllocated;
  if (s == "MostAllocated")
    return ScoringStrategyType::kMostAllocated;
  if (s == "RequestedToCapacityRatio")
    return ScoringStrategyType::kRequestedToCapacityRatio;
  return kube::makeKubeError(
      fmt::format("{}: Unsupported value: \"{}\": supported values: \"LeastAllocated\", "
                  "\"MostAllocated\", \"RequestedToCapacityRatio\"",
                  path, s));
}

kube::Expected<ScoringStrategy> decodeScoringStrategy(const json::value& v, std::string_view path) {
  if (!v.is_object())
    return kube::jsonfields::typeError(path, "object", v);
  const json::object& o = v.get_object();
  if (auto known = checkKnownFields(o, {"type", "resources", "requestedToCapacityRatio"}, path);
      !known)
    return known.error();
  ScoringStrategy out;
  auto type_name = kube::jsonfields::stringField(o, "type", path);
  if (!type_name)
    return type_name.error();
  auto type = strategyType(*type_name, childPath(path, "type"));
  if (!type)
    return type.error();
  out.type = *type;
  if (const json::value* r = field(o, "resources")) {
    auto resources = decodeResourceSpecs(*r, childPath(path, "resources"));
    if (!resources)
      return resources.error();
    if (!resources->empty()) {
      for (auto& spec : *resources) {
        if (spec.weight == 0)
          spec.weight = 1;
      }
      out.resources = std::move(*resources);
    }
  }
  if (auto valid = validateResourceWeights(out.resources, childPath(path, "resources")); !valid)
    return valid.error();
  const std::string rp = childPath(path, "requestedToCapacityRatio");
  if (const json::value* rtcr = field(o, "requestedToCapacityRatio")) {
    auto shape = decodeRequestedToCapacityRatio(*rtcr, rp);
    if (!shape)
      return shape.error();
    out.shape = std::move(*shape);
  } else if (out.type == ScoringStrategyType::kRequestedToCapacityRatio) {
    return kube::makeKubeError(
        fmt::format("{}: Required value: required when type is RequestedToCapacityRatio", rp));
  }
  return out;
}

kube::Expected<void> validateNames(const std::vector<std::string>& names, std::string_view path,
                                   bool groups) {
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::string ip = indexPath(path, i);
    if (groups && names[i].find('/') != std::string::npos)
      return kube::makeKubeError(fmt::format(
          "{}: Invalid value: \"{}\": resource group name can't contain '/'", ip, names[i]));
    if (auto why = kube::validateLabelKey(names[i]))
      return kube::makeKubeError(fmt::format("{}: Invalid value: \"{}\": {}", ip, names[i], *why));
  }
  return {};
}

bool ignored(std::string_view name, const NodeResourcesFitArgs& args) {
  if (!isExtendedResourceName(name))
    return false;
  if (std::find(args.ignored_resources.begin(), args.ignored_resources.end(), name) !=
      args.ignored_resources.end())
    return true;
  if (args.ignored_resource_groups.empty())
    return false;
  const std::string_view group = name.substr(0, name.find('/'));
  return std::find(args.ignored_resource_groups.begin(), args.ignored_resource_groups.end(),
                   group) != args.ignored_resource_groups.end();
}

}  // namespace

kube::Expected<std::shared_ptr<const NodeResourcesFitArgs>> decodeNodeResourcesFitArgs(
    const json::value* args, std::string_view api_version) {
  auto out = std::make_shared<NodeResourcesFitArgs>();
  const bool v1beta1 = isV1beta1OrOlder(api_version);
  if (!v1beta1)
    out->scoring_strategy = ScoringStrategy{};
  auto o = argsObject(args);
  if (!o)
    return o.error();
  if (*o == nullptr)
    return std::shared_ptr<const NodeResourcesFitArgs>(std::move(out));
  auto known = v1beta1
                   ? checkKnownFields(**o, {"ignoredResources", "ignoredResourceGroups"}, "")
                   : checkKnownFields(
                         **o, {"ignoredResources", "ignoredResourceGroups", "scoringStrategy"}, "");
  if (!known)
    return known.error();
  if (const json::value* v = field(**o, "ignoredResources")) {
    auto names = stringList(*v, "ignoredResources");
    if (!names)
      return names.error();
    out->ignored_resources = std::move(*names);
  }
  if (const json::value* v = field(**o, "ignoredResourceGroups")) {
    auto names = stringList(*v, "ignoredResourceGroups");
    if (!names)
      return names.error();
    out->ignored_resource_groups = std::move(*names);
  }
  if (auto valid = validateNames(out->ignored_resources, "ignoredResources", false); !valid)
    return valid.error();
  if (auto valid = validateNames(out->ignored_resource_groups, "ignoredResourceGroups", true);
      !valid)
    return valid.error();
  if (const json::value* v = field(**o, "scoringStrategy")) {
    auto strategy = decodeScoringStrategy(*v, "scoringStrategy");
    if (!strategy)
      return strategy.error();
    out->scoring_strategy = std::move(*strategy);
  }
  return std::shared_ptr<const NodeResourcesFitArgs>(std::move(out));
}

std::vector<InsufficientResource> fitsRequest(const Resource& pod_request, const NodeInfo& node,
                                              const NodeResourcesFitArgs& args) {
  std::vector<InsufficientResource> out;
  const Resource& alloc = node.node->allocatable;
  const Resource& used = node.requested;
  const auto pod_count = static_cast<std::int64_t>(node.pods.size());
  if (pod_count + 1 > alloc.allowed_pod_number) {
    out.push_back(
        {std::string(kResourcePods), "Too many pods", 1, pod_count, alloc.allowed_pod_number});
  }
  if (pod_request.milli_cpu == 0 && pod_request.memory == 0 && pod_request.ephemeral_storage == 0 &&
      pod_request.scalar.empty())
    return out;
  auto check = [&](std::string_view name, std::int64_t want, std::int64_t in_use,
                   std::int64_t capacity) {
    if (capacity < want + in_use)
      out.push_back(
          {std::string(name), fmt::format("Insufficient {}", name), want, in_use, capacity});
  };
  check(kResourceCPU, pod_request.milli_cpu, used.milli_cpu, alloc.milli_cpu);
  check(kResourceMemory, pod_request.memory, used.memory, alloc.memory);
  check(kResourceEphemeralStorage, pod_request.ephemeral_storage, used.ephemeral_storage,
        alloc.ephemeral_storage);
  for (const auto& [name, want] : pod_request.scalar) {
    if (ignored(name, args))
      continue;
    check(name, want, used.scalarValue(name), alloc.scalarValue(name));
  }
  return out;
}

NodeResourcesFit::NodeResourcesFit(std::shared_ptr<const NodeResourcesFitArgs> args)
    : args_(args ? std::move(args) : std::make_shared<const NodeResourcesFitArgs>()) {}

Status NodeResourcesFit::preFilter(CycleState& state, const PodInfo& pod) {
  auto data = std::make_unique<FitState>();
  data->request = pod.requests;
  const Resource& r = data->request;
  data->requests_nothing =
      r.milli_cpu == 0 && r.memory == 0 && r.ephemeral_storage == 0 && r.scalar.empty();
  for (const auto& scalar : r.scalar) {
    if (!ignored(scalar.first, *args_))
      data->checked_scalars.push_back(scalar);
  }
  state.write(kPreFilterState, std::move(data));
  return Status::success();
}

Status NodeResourcesFit::filter(const CycleState& state, const PodInfo&,
                                const NodeInfo& node) const {
  const auto* s = state.read<FitState>(kPreFilterState);
  if (s == nullptr)
    return Status::error(
        fmt::format("error reading \"{}\" from cycleState: not found", kPreFilterStateKey));
  if (!node.node)
    return Status::error("node not found");
  // The common verdict, fits, without building the list of what is short (the same checks as
  // fitsRequest, which runs only for a node that fails to word the reasons).
  const Resource& alloc = node.node->allocatable;
  const Resource& used = node.requested;
  const Resource& want = s->request;
  bool fits = static_cast<std::int64_t>(node.pods.size()) + 1 <= alloc.allowed_pod_number;
  if (fits && !s->requests_nothing) {
    fits = want.milli_cpu + used.milli_cpu <= alloc.milli_cpu &&
           want.memory + used.memory <= alloc.memory &&
           want.ephemeral_storage + used.ephemeral_storage <= alloc.ephemeral_storage;
    for (std::size_t i = 0; fits && i < s->checked_scalars.size(); ++i) {
      const auto& [name, amount] = s->checked_scalars[i];
      fits = amount + used.scalarValue(name) <= alloc.scalarValue(name);
    }
  }
  if (fits)
    return Status::success();
  const auto insufficient = fitsRequest(s->request, node, *args_);
  if (insufficient.empty())
    return Status::success();
  std::vector<std::string> reasons;
  reasons.reserve(insufficient.size());
  for (const auto& r : insufficient)
    reasons.push_back(r.reason);
  return Status(Code::kUnschedulable, std::move(reasons));
}

ScoringNodeResourcesFit::ScoringNodeResourcesFit(std::shared_ptr<const NodeResourcesFitArgs> args)
    : NodeResourcesFit(std::move(args)) {
  if (args_->scoring_strategy)
    resources_ = resolveResources(args_->scoring_strategy->resources);
}

Status ScoringNodeResourcesFit::score(const CycleState&, const PodInfo& pod, const NodeInfo& node,
                                      std::int64_t& score) const {
  if (!node.node)
    return Status::error("node not found");
  if (!args_->scoring_strategy)
    return Status::error("NodeResourcesFit: no scoringStrategy");
  const ScoringStrategy& s = *args_->scoring_strategy;
  switch (s.type) {
    case ScoringStrategyType::kLeastAllocated:
      score = leastAllocatedScore(node, pod, resources_, ScorerRules::kScoringStrategy);
      break;
    case ScoringStrategyType::kMostAllocated:
      score = mostAllocatedScore(node, pod, resources_, ScorerRules::kScoringStrategy);
      break;
    case ScoringStrategyType::kRequestedToCapacityRatio:
      score = requestedToCapacityRatioScore(node, pod, resources_, s.shape);
      break;
  }
  return Status::success();
}

}  // namespace koord::roles::scheduler::upstream
