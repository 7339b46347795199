#include "plugins/loadaware/estimator.h"

#include <boost/json.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "koord/core/log.h"
#include "koord/kube/decode.h"

namespace koord::roles::scheduler::loadaware {

namespace json = boost::json;
using apis::PriorityClass;

namespace {

// Koordinator's TranslateResourceNameByPriorityClass: prod and unclassified pods read the
// resource itself, batch and mid pods their extended resource; anything else (a free pod, or
// a batch pod's ephemeral-storage) has no such resource and reads "" (nothing).
std::string_view resourceToRead(PriorityClass priority, std::string_view resource) {
  if (priority == PriorityClass::kProd || priority == PriorityClass::kNone)
    return resource;
  return apis::extendedResourceFor(priority, resource);
}

// What a pod asking for none of `resource` is assumed to use.
std::int64_t defaultEstimate(std::string_view resource) {
  if (resource == kResourceCPU || resource == apis::kBatchCPU)
    return kDefaultEstimatedMilliCPU;
  if (resource == kResourceMemory || resource == apis::kBatchMemory)
    return kDefaultEstimatedMemory;
  return 0;
}

std::int64_t scaledEstimate(std::int64_t limit, std::int64_t request, std::int64_t factor,
                            std::int64_t if_none) {
  const std::int64_t quantity = std::max(limit, request);
  if (quantity == 0)
    return if_none;
  auto estimated = static_cast<std::int64_t>(
      std::round(static_cast<double>(quantity) * static_cast<double>(factor) / 100.0));
  if (limit > 0 && estimated > limit)
    estimated = limit;
  return estimated;
}

}  // namespace

apis::PriorityClass podPriorityWithDefault(const PodInfo& pod) {
  if (pod.priority_class != PriorityClass::kNone)
    return pod.priority_class;
  return apis::priorityClassForQoS(pod.qos);
}

std::optional<ResourceFactors> customScalingFactors(const kube::Labels& annotations) {
  auto it = annotations.find(kAnnotationCustomEstimatedScalingFactors);
  if (it == annotations.end() || it->second.empty())
    return std::nullopt;
  boost::system::error_code ec;
  json::value v = json::parse(it->second, ec);
  if (ec || !v.is_object()) {
    KOORD_VLOG(5, "annotation {}: not a JSON object, using the args' factors",
               kAnnotationCustomEstimatedScalingFactors);
    return std::nullopt;
  }
  ResourceFactors out;
  for (const auto& member : v.get_object()) {
    const auto& value = member.value();
    if (value.is_int64()) {
      out[std::string(member.key())] = value.get_int64();
    } else if (!value.is_null()) {
      KOORD_VLOG(5, "annotation {}[{}]: not an integer, using the args' factors",
                 kAnnotationCustomEstimatedScalingFactors, std::string_view(member.key()));
      return std::nullopt;
    } else {
      out[std::string(member.key())] = 0;
    }
  }
  return out;
}

std::int64_t customSeconds(const kube::Labels& annotations, std::string_view key) {
  auto it = annotations.find(key);
  if (it == annotations.end() || it->second.empty())
    return -1;
  std::int64_t n = 0;
  const auto& s = it->second;
  // strconv.ParseInt's syntax: an optional sign, then decimal digits.
  const char* begin = s.data() + (s.size() > 1 && s[0] == '+' && s[1] != '-' ? 1 : 0);
  auto [end, ec] = std::from_chars(begin, s.data() + s.size(), n);
  if (ec != std::errc() || end != s.data() + s.size()) {
    KOORD_VLOG(5, "annotation {}: \"{}\" is not an integer, ignored", key, s);
    return -1;
  }
  return n;
}

std::int64_t estimateResource(const Resource& requests, const Resource& limits,
                              std::string_view resource, std::int64_t factor) {
  if (resource.empty())
    return 0;
  return scaledEstimate(limits.get(resource), requests.get(resource), factor,
                        defaultEstimate(resource));
}

Estimator::Estimator(const LoadAwareSchedulingArgs& args)
    : factors_(args.estimated_scaling_factors), allow_customize_(args.allow_customize_estimation) {}

ResourceFactors Estimator::estimatePod(const PodInfo& pod) const {
  std::optional<ResourceFactors> custom;
  if (allow_customize_)
    custom = customScalingFactors(pod.annotations);
  const ResourceFactors* factors = &factors_;
  if (custom && !custom->empty()) {
    for (const auto& [name, factor] : factors_)
      custom->emplace(name, factor);  // the pod's own factor wins
    factors = &*custom;
  }
  const PriorityClass priority = podPriorityWithDefault(pod);
  ResourceFactors out;
  for (const auto& [name, factor] : *factors)
    out[name] = estimateResource(pod.requests, pod.limits, resourceToRead(priority, name), factor);
  return out;
}

static_assert(static_cast<std::size_t>(PriorityClass::kFree) == 4,
              "VectorEstimator's reads hold one entry per priority class");

VectorEstimator::Read VectorEstimator::Read::of(std::string_view resource) {
  Read r;
  if (resource.empty())
    r.field = Field::kNone;
  else if (resource == kResourceCPU)
    r.field = Field::kCPU;
  else if (resource == kResourceMemory)
    r.field = Field::kMemory;
  else if (resource == kResourceEphemeralStorage)
    r.field = Field::kEphemeralStorage;
  else if (resource == kResourcePods)
    r.field = Field::kPods;
  else
    r.scalar = std::string(resource);
  r.if_none = resource.empty() ? 0 : defaultEstimate(resource);
  return r;
}

// Resource::get without comparing names.
std::int64_t VectorEstimator::Read::from(const Resource& r) const {
  switch (field) {
    case Field::kCPU:
      return r.milli_cpu;
    case Field::kMemory:
      return r.memory;
    case Field::kEphemeralStorage:
      return r.ephemeral_storage;
    case Field::kPods:
      return r.allowed_pod_number;
    case Field::kScalar:
      return r.scalarValue(scalar);
    case Field::kNone:
      break;
  }
  return 0;
}

VectorEstimator::VectorEstimator(const LoadAwareSchedulingArgs& args,
                                 const ResourceVectorizer& vectorizer)
    : estimator_(args), vectorizer_(vectorizer), allow_customize_(args.allow_customize_estimation) {
  for (const auto& [name, factor] : args.estimated_scaling_factors) {
    const std::size_t i = vectorizer.indexOf(name);
    if (i >= vectorizer.size())
      continue;
    Slot slot;
    slot.index = i;
    slot.factor = factor;
    for (std::size_t p = 0; p < slot.reads.size(); ++p)
      slot.reads[p] = Read::of(resourceToRead(static_cast<PriorityClass>(p), name));
    slots_.push_back(std::move(slot));
  }
}

void VectorEstimator::estimate(const PodInfo& pod, std::int64_t* out) const {
  const std::size_t n = vectorizer_.size();
  if (allow_customize_ && pod.annotations.contains(kAnnotationCustomEstimatedScalingFactors)) {
    const ResourceVector v = vectorizer_.fromFactors(estimator_.estimatePod(pod));
    std::copy(v.begin(), v.end(), out);
    return;
  }
  std::fill(out, out + n, 0);
  const auto priority = static_cast<std::size_t>(podPriorityWithDefault(pod));
  for (const auto& s : slots_) {
    const Read& read = s.reads[priority];
    if (read.field != Field::kNone)
      out[s.index] =
          scaledEstimate(read.from(pod.limits), read.from(pod.requests), s.factor, read.if_none);
  }
}

ResourceVector Estimator::estimateNode(const Node& node,
                                       const ResourceVectorizer& vectorizer) const {
  ResourceVector allocatable = vectorizer.fromResource(node.allocatable);
  auto it = node.annotations.find(kAnnotationNodeRawAllocatable);
  if (it == node.annotations.end())
    return allocatable;
  boost::system::error_code ec;
  json::value v = json::parse(it->second, ec);
  if (ec) {
    KOORD_VLOG(5, "node {}: annotation {} is not JSON ({}), using status.allocatable", node.name,
               kAnnotationNodeRawAllocatable, ec.message());
    return allocatable;
  }
  auto raw = kube::decodeResourceList(v, kAnnotationNodeRawAllocatable);
  if (!raw) {
    KOORD_VLOG(5, "node {}: {}, using status.allocatable", node.name, raw.error().message);
    return allocatable;
  }
  for (const auto& [name, q] : *raw) {
    if (auto i = vectorizer.indexOf(name); i < vectorizer.size())
      allocatable[i] = resourceValue(name, q);
  }
  return allocatable;
}

}  // namespace koord::roles::scheduler::loadaware
