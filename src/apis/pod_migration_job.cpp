// decodePodMigrationJob (the PodMigrationJob JSON -> PodMigrationJob projection), its enums'
// spellings, and the bodies the MigrationController sends: status patches, new jobs, and the
// Reservation a ReservationFirst job creates.
#include "koord/apis/pod_migration_job.h"

#include <boost/json.hpp>

#include <utility>

#include <fmt/format.h>

#include "crd_object.h"
#include "enum_names.h"
#include "koord/core/duration.h"
#include "koord/kube/json_fields.h"
#include "koord/kube/time.h"
#include "object_fields.h"

namespace koord::apis {

namespace json = boost::json;
using namespace koord::kube::jsonfields;
using kube::Expected;
using kube::makeKubeError;

namespace {

using detail::EnumName;

constexpr EnumName<PodMigrationJobMode> kModes[] = {
    {PodMigrationJobMode::kReservationFirst, "ReservationFirst"},
    {PodMigrationJobMode::kEvictDirectly, "EvictDirectly"},
};
// An empty phase is a job no controller has looked at yet: Pending (printed by its name, the
// first entry).
constexpr EnumName<PodMigrationJobPhase> kPhases[] = {
    {PodMigrationJobPhase::kPending, "Pending"}, {PodMigrationJobPhase::kPending, ""},
    {PodMigrationJobPhase::kRunning, "Running"}, {PodMigrationJobPhase::kSucceeded, "Succeeded"},
    {PodMigrationJobPhase::kFailed, "Failed"},   {PodMigrationJobPhase::kAborted, "Aborted"},
};

// Each object of the job's list `name` (all bounded alike) through decode(object, path).
template <typename T, typename Fn>
Expected<std::vector<T>> listOf(const json::object& o, std::string_view name, std::string_view path,
                                Fn&& decode) {
  return detail::objectsOf<T>(o, name, path, kMaxPodMigrationJobListItems,
                              std::forward<Fn>(decode));
}

Expected<std::optional<ObjectReference>> optionalReference(const json::object& o,
                                                           std::string_view name,
                                                           std::string_view path) {
  return detail::optionalObject<ObjectReference>(o, name, path, detail::decodeObjectReference);
}

Expected<PreemptedPodReservation> preemptedReservation(const json::object& o,
                                                       std::string_view path) {
  PreemptedPodReservation out;
  if (auto ok = detail::readStrings(o, path,
                                    {{"namespace", &out.namespace_},
                                     {"name", &out.name},
                                     {"nodeName", &out.node_name},
                                     {"phase", &out.phase}});
      !ok) {
    return ok.error();
  }
  auto preempted = optionalReference(o, "preemptedPodRef", path);
  if (!preempted)
    return preempted.error();
  out.preempted_pod_ref = std::move(*preempted);
  auto pods = listOf<ObjectReference>(o, "podsRef", path, detail::decodeObjectReference);
  if (!pods)
    return pods.error();
  out.pods_ref = std::move(*pods);
  return out;
}

Expected<void> decodeReservationOptions(const json::object& o, PodMigrationJob& out) {
  constexpr std::string_view kPath = "spec.reservationOptions";
  out.has_reservation_options = true;
  auto ref = optionalReference(o, "reservationRef", kPath);
  if (!ref)
    return ref.error();
  out.reservation_ref = std::move(*ref);
  auto tmpl = detail::objectCopy(o, "template", kPath);
  if (!tmpl)
    return tmpl.error();
  out.reservation_template = std::move(*tmpl);
  auto preemption = objectField(o, "preemptionOptions", kPath);
  if (!preemption)
    return preemption.error();
  out.preemption_allowed = *preemption != nullptr;
  return {};
}

Expected<void> decodeSpec(const json::object& spec, PodMigrationJob& out) {
  constexpr std::string_view kPath = "spec";
  auto paused = boolField(spec, "paused", kPath);
  if (!paused)
    return paused.error();
  out.paused = *paused;
  auto ttl = detail::durationField(spec, "ttl", kPath);
  if (!ttl)
    return ttl.error();
  out.ttl = *ttl;
  auto mode = detail::enumField(spec, "mode", kPath, kModes);
  if (!mode)
    return mode.error();
  out.mode = *mode;
  auto pod_ref = optionalReference(spec, "podRef", kPath);
  if (!pod_ref)
    return pod_ref.error();
  out.pod_ref = std::move(*pod_ref);
  if (auto ok =
          detail::decodeMember(spec, "reservationOptions", kPath, decodeReservationOptions, out);
      !ok) {
    return ok.error();
  }
  if (const json::value* del = field(spec, "deleteOptions")) {
    auto decoded = decodeDeleteOptions(*del, "spec.deleteOptions");
    if (!decoded)
      return decoded.error();
    out.delete_options = std::move(*decoded);
  }
  return {};
}

Expected<void> decodeStatus(const json::object& status, PodMigrationJob& job) {
  constexpr std::string_view kPath = "status";
  PodMigrationJobStatus& out = job.status;
  auto phase = detail::enumField(status, "phase", kPath, kPhases);
  if (!phase)
    return phase.error();
  out.phase = phase->value_or(PodMigrationJobPhase::kPending);
  if (auto ok = detail::readStrings(status, kPath,
                                    {{"status", &out.status},
                                     {"reason", &out.reason},
                                     {"message", &out.message},
                                     {"nodeName", &out.node_name}});
      !ok) {
    return ok.error();
  }
  auto conditions =
      listOf<PodMigrationJobCondition>(status, "conditions", kPath, detail::decodeCondition);
  if (!conditions)
    return conditions.error();
  out.conditions = std::move(*conditions);
  auto pod_ref = optionalReference(status, "podRef", kPath);
  if (!pod_ref)
    return pod_ref.error();
  out.pod_ref = std::move(*pod_ref);
  auto preempted =
      listOf<ObjectReference>(status, "preemptedPodsRef", kPath, detail::decodeObjectReference);
  if (!preempted)
    return preempted.error();
  out.preempted_pods_ref = std::move(*preempted);
  auto reservations = listOf<PreemptedPodReservation>(status, "preemptedPodsReservation", kPath,
                                                      preemptedReservation);
  if (!reservations)
    return reservations.error();
  out.preempted_pods_reservations = std::move(*reservations);
  return {};
}

// "" and empty lists as null: in a merge patch that removes what an earlier step wrote.
json::value stringOrNull(const std::string& s) {
  return s.empty() ? json::value(nullptr) : json::value(s);
}

json::value timeOrNull(const std::optional<std::chrono::system_clock::time_point>& t) {
  return t ? json::value(kube::formatTime(*t)) : json::value(nullptr);
}

json::value refsOrNull(const std::vector<ObjectReference>& refs) {
  if (refs.empty())
    return nullptr;
  json::array out;
  for (const auto& r : refs)
    out.push_back(toJson(r));
  return out;
}

// Members of a template (or pod) object, erroring with `path` when one has the wrong type.
Expected<json::object*> childObject(json::object& o, std::string_view name, std::string_view path,
                                    bool create) {
  json::value* v = o.if_contains(name);
  if (v == nullptr || v->is_null()) {
    if (!create)
      return static_cast<json::object*>(nullptr);
    o[name] = json::object();
    return &o[name].get_object();
  }
  if (!v->is_object())
    return typeError(childPath(path, name), "object", *v);
  return &v->get_object();
}

// The pod template's metadata: what describes the pod rather than the object the API server
// stored (uid, resourceVersion, times, managedFields mean nothing for a pod yet to be made).
json::object templateMetadata(const json::object& pod_meta) {
  json::object out;
  for (std::string_view key :
       {"name", "generateName", "namespace", "labels", "annotations", "ownerReferences"}) {
    if (const json::value* v = pod_meta.if_contains(key); v != nullptr && !v->is_null())
      out[key] = *v;
  }
  return out;
}

// Koordinator's GenerateReserveResourceOwners: a pending pod the scheduler could not place
// reserves for itself, any other for its controller's pods.
Expected<json::array> reserveOwners(const json::object& pod) {
  const json::object* status = nullptr;
  if (auto s = objectField(pod, "status", "pod"); !s)
    return s.error();
  else
    status = *s;
  const json::object* meta = nullptr;
  if (auto m = objectField(pod, "metadata", "pod"); !m)
    return m.error();
  else
    meta = *m;
  static const json::object kEmpty;
  if (meta == nullptr)
    meta = &kEmpty;
  if (status != nullptr) {
    auto phase = stringField(*status, "phase", "pod.status");
    if (!phase)
      return phase.error();
    if (*phase == "Pending") {
      auto conditions = objectList(*status, "conditions", "pod.status");
      if (!conditions)
        return conditions.error();
      for (const json::object* c : *conditions) {
        auto type = stringField(*c, "type", "pod.status.conditions[]");
        auto value = stringField(*c, "status", "pod.status.conditions[]");
        if (!type)
          return type.error();
        if (!value)
          return value.error();
        if (*type != "PodScheduled")
          continue;
        if (*value != "False")
          break;
        json::object object;
        for (std::string_view key : {"uid", "name", "namespace"}) {
          auto s = stringField(*meta, key, "pod.metadata");
          if (!s)
            return s.error();
          if (!s->empty())
            object[key] = *s;
        }
        object["kind"] = "Pod";
        return json::array{json::object{{"object", std::move(object)}}};
      }
    }
  }
  auto refs = objectList(*meta, "ownerReferences", "pod.metadata");
  if (!refs)
    return refs.error();
  for (const json::object* ref : *refs) {
    auto controller = optionalBoolField(*ref, "controller", "pod.metadata.ownerReferences[]");
    if (!controller)
      return controller.error();
    if (!controller->value_or(false))
      continue;
    json::object owner = *ref;
    auto ns = stringField(*meta, "namespace", "pod.metadata");
    if (!ns)
      return ns.error();
    if (!ns->empty())
      owner["namespace"] = *ns;
    return json::array{json::object{{"controller", std::move(owner)}}};
  }
  return makeKubeError(
      "pod: neither pending unschedulable nor owned by a controller, so a Reservation for it "
      "would have no owner");
}

// Koordinator's appendSkipNodeAffinity: every required term also asks for a node other than the
// pod's current one (a term list that is empty gets one term saying only that).
Expected<void> avoidNode(json::object& pod_spec, const std::string& node) {
  constexpr std::string_view kPath = "spec.template.spec";
  auto affinity = childObject(pod_spec, "affinity", kPath, true);
  if (!affinity)
    return affinity.error();
  auto node_affinity = childObject(**affinity, "nodeAffinity", childPath(kPath, "affinity"), true);
  if (!node_affinity)
    return node_affinity.error();
  auto required = childObject(**node_affinity, "requiredDuringSchedulingIgnoredDuringExecution",
                              "spec.template.spec.affinity.nodeAffinity", true);
  if (!required)
    return required.error();
  const std::string terms_path =
      "spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
      "nodeSelectorTerms";
  json::value skip = json::object{
      {"key", "metadata.name"}, {"operator", "NotIn"}, {"values", json::array{json::value(node)}}};
  json::value& terms = (**required)["nodeSelectorTerms"];
  if (terms.is_null())
    terms = json::array();
  if (!terms.is_array())
    return typeError(terms_path, "array", terms);
  json::array& list = terms.get_array();
  if (list.empty()) {
    list.push_back(json::object{{"matchFields", json::array{skip}}});
    return {};
  }
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_object())
      return typeError(indexPath(terms_path, i), "object", list[i]);
    json::value& fields = list[i].get_object()["matchFields"];
    if (fields.is_null())
      fields = json::array();
    if (!fields.is_array())
      return typeError(indexPath(terms_path, i) + ".matchFields", "array", fields);
    fields.get_array().push_back(skip);
  }
  return {};
}

void dropPvcVolumes(json::object& pod_spec) {
  json::value* volumes = pod_spec.if_contains("volumes");
  if (volumes == nullptr || !volumes->is_array())
    return;
  json::array kept;
  for (const json::value& v : volumes->get_array()) {
    const bool claim =
        v.is_object() && ((field(v.get_object(), "persistentVolumeClaim") != nullptr) ||
                          (field(v.get_object(), "ephemeral") != nullptr));
    if (!claim)
      kept.push_back(v);
  }
  if (kept.empty())
    pod_spec.erase("volumes");
  else
    *volumes = std::move(kept);
}

}  // namespace

bool PodMigrationJob::passedArbitration() const {
  auto it = annotations.find(std::string(kAnnotationPassedArbitration));
  return it != annotations.end() && it->second == "true";
}

const PodMigrationJobCondition* PodMigrationJob::condition(std::string_view type) const {
  for (const auto& c : status.conditions) {
    if (c.type == type)
      return &c;
  }
  return nullptr;
}

Expected<DeleteOptions> decodeDeleteOptions(const json::value& v, std::string_view path) {
  if (!v.is_object())
    return typeError(path, "object", v);
  const json::object& o = v.get_object();
  DeleteOptions out;
  if (const json::value* grace = field(o, "gracePeriodSeconds")) {
    auto seconds = intValue(*grace, childPath(path, "gracePeriodSeconds"));
    if (!seconds)
      return seconds.error();
    out.grace_period_seconds = *seconds;
  }
  auto preconditions = objectField(o, "preconditions", path);
  if (!preconditions)
    return preconditions.error();
  if (*preconditions != nullptr) {
    if (auto ok = detail::readStrings(**preconditions, childPath(path, "preconditions"),
                                      {{"uid", &out.precondition_uid},
                                       {"resourceVersion", &out.precondition_resource_version}});
        !ok) {
      return ok.error();
    }
  }
  auto orphan = optionalBoolField(o, "orphanDependents", path);
  if (!orphan)
    return orphan.error();
  out.orphan_dependents = *orphan;
  auto policy = stringField(o, "propagationPolicy", path);
  if (!policy)
    return policy.error();
  if (!policy->empty() && *policy != "Orphan" && *policy != "Background" &&
      *policy != "Foreground") {
    return makeKubeError(
        fmt::format("{}: unsupported value \"{}\": supported values: \"Orphan\", \"Background\", "
                    "\"Foreground\"",
                    childPath(path, "propagationPolicy"), *policy));
  }
  out.propagation_policy = std::move(*policy);
  auto dry_run = detail::boundedArray(o, "dryRun", path, kMaxPodMigrationJobListItems);
  if (!dry_run)
    return dry_run.error();
  auto values = stringList(o, "dryRun", path);
  if (!values)
    return values.error();
  out.dry_run = std::move(*values);
  return out;
}

Expected<PodMigrationJob> decodePodMigrationJob(const json::value& v) {
  return detail::decodeCrd<PodMigrationJob>(v, "PodMigrationJob", decodeSpec, decodeStatus);
}

std::string_view toString(PodMigrationJobMode mode) {
  return detail::nameOf(kModes, mode);
}

std::string_view toString(PodMigrationJobPhase phase) {
  return detail::nameOf(kPhases, phase);
}

std::optional<PodMigrationJobMode> podMigrationJobModeByName(std::string_view name) {
  return detail::valueOf(kModes, name);
}

json::value toJson(const ObjectReference& ref) {
  json::object out;
  for (const auto& [key, value] :
       {std::pair<std::string_view, const std::string*>{"apiVersion", &ref.api_version},
        {"kind", &ref.kind},
        {"namespace", &ref.namespace_},
        {"name", &ref.name},
        {"uid", &ref.uid}}) {
    if (!value->empty())
      out[key] = *value;
  }
  return out;
}

json::value toJson(const DeleteOptions& options) {
  json::object out;
  if (options.grace_period_seconds)
    out["gracePeriodSeconds"] = *options.grace_period_seconds;
  if (!options.precondition_uid.empty() || !options.precondition_resource_version.empty()) {
    json::object pre;
    if (!options.precondition_uid.empty())
      pre["uid"] = options.precondition_uid;
    if (!options.precondition_resource_version.empty())
      pre["resourceVersion"] = options.precondition_resource_version;
    out["preconditions"] = std::move(pre);
  }
  if (options.orphan_dependents)
    out["orphanDependents"] = *options.orphan_dependents;
  if (!options.propagation_policy.empty())
    out["propagationPolicy"] = options.propagation_policy;
  if (!options.dry_run.empty()) {
    json::array dry;
    for (const auto& d : options.dry_run)
      dry.push_back(json::value(d));
    out["dryRun"] = std::move(dry);
  }
  return out;
}

json::value podMigrationJobStatusPatch(const PodMigrationJobStatus& status,
                                       std::string_view resource_version) {
  json::object s;
  s["phase"] = toString(status.phase);
  s["status"] = stringOrNull(status.status);
  s["reason"] = stringOrNull(status.reason);
  s["message"] = stringOrNull(status.message);
  if (status.conditions.empty()) {
    s["conditions"] = nullptr;
  } else {
    json::array conditions;
    for (const auto& c : status.conditions) {
      conditions.push_back(
          json::object{{"type", c.type},
                       {"status", c.status},
                       {"reason", stringOrNull(c.reason)},
                       {"message", stringOrNull(c.message)},
                       {"lastProbeTime", timeOrNull(c.last_probe_time)},
                       {"lastTransitionTime", timeOrNull(c.last_transition_time)}});
    }
    s["conditions"] = std::move(conditions);
  }
  s["nodeName"] = stringOrNull(status.node_name);
  s["podRef"] = status.pod_ref ? toJson(*status.pod_ref) : json::value(nullptr);
  s["preemptedPodsRef"] = refsOrNull(status.preempted_pods_ref);
  if (status.preempted_pods_reservations.empty()) {
    s["preemptedPodsReservation"] = nullptr;
  } else {
    json::array list;
    for (const auto& r : status.preempted_pods_reservations) {
      json::object item;
      for (const auto& [key, value] :
           {std::pair<std::string_view, const std::string*>{"namespace", &r.namespace_},
            {"name", &r.name},
            {"nodeName", &r.node_name},
            {"phase", &r.phase}}) {
        if (!value->empty())
          item[key] = *value;
      }
      if (r.preempted_pod_ref)
        item["preemptedPodRef"] = toJson(*r.preempted_pod_ref);
      if (!r.pods_ref.empty())
        item["podsRef"] = refsOrNull(r.pods_ref);
      list.push_back(std::move(item));
    }
    s["preemptedPodsReservation"] = std::move(list);
  }
  json::object patch{{"status", std::move(s)}};
  if (!resource_version.empty())
    patch["metadata"] = json::object{{"resourceVersion", resource_version}};
  return patch;
}

json::value newPodMigrationJobBody(const NewPodMigrationJob& job) {
  json::object annotations{{kAnnotationEvictReason, job.reason},
                           {kAnnotationEvictTrigger, job.trigger}};
  for (const auto& [k, v] : job.annotations)
    annotations[k] = v;
  json::object meta{{"name", job.name}, {"annotations", std::move(annotations)}};
  if (!job.labels.empty()) {
    json::object labels;
    for (const auto& [k, v] : job.labels)
      labels[k] = v;
    meta["labels"] = std::move(labels);
  }
  json::object pod_ref;
  if (!job.pod_namespace.empty())
    pod_ref["namespace"] = job.pod_namespace;
  if (!job.pod_name.empty())
    pod_ref["name"] = job.pod_name;
  if (!job.pod_uid.empty())
    pod_ref["uid"] = job.pod_uid;
  json::object spec{{"podRef", std::move(pod_ref)}, {"mode", toString(job.mode)}};
  if (job.ttl)
    spec["ttl"] = formatGoDuration(*job.ttl);
  if (job.delete_options)
    spec["deleteOptions"] = toJson(*job.delete_options);
  return json::object{{"apiVersion", fmt::format("{}/{}", kReservationGroup, kReservationVersion)},
                      {"kind", kPodMigrationJobKind},
                      {"metadata", std::move(meta)},
                      {"spec", std::move(spec)}};
}

Expected<json::value> migrationReservationBody(const MigrationReservationInput& in) {
  if (in.job == nullptr || in.pod == nullptr)
    return makeKubeError("migrationReservationBody: a job and its pod are required");
  if (!in.pod->is_object())
    return typeError("pod", "object", *in.pod);
  const json::object& pod = in.pod->get_object();
  const PodMigrationJob& job = *in.job;
  auto pod_meta = objectField(pod, "metadata", "pod");
  if (!pod_meta)
    return pod_meta.error();
  auto pod_spec = objectField(pod, "spec", "pod");
  if (!pod_spec)
    return pod_spec.error();
  std::string pod_node;
  if (*pod_spec != nullptr) {
    auto node = stringField(**pod_spec, "nodeName", "pod.spec");
    if (!node)
      return node.error();
    pod_node = std::move(*node);
  }

  json::object reservation;
  if (job.reservation_template && job.reservation_template->is_object())
    reservation = job.reservation_template->get_object();

  // A pointer to a member's object stays valid only until its parent gains a member (the parent
  // may rehash), so each level is filled completely before the next is entered.
  constexpr std::string_view kTemplatePath = "spec.reservationOptions.template";
  const std::string meta_path = std::string(kTemplatePath) + ".metadata";
  const std::string spec_path = std::string(kTemplatePath) + ".spec";
  for (std::string_view member : {"metadata", "spec"}) {
    if (auto ok = childObject(reservation, member, kTemplatePath, true); !ok)
      return ok.error();
  }
  json::object& meta = reservation["metadata"].get_object();
  json::object& spec = reservation["spec"].get_object();

  auto name = stringField(meta, "name", meta_path);
  if (!name)
    return name.error();
  if (name->empty())
    meta["name"] = job.uid;
  auto labels = childObject(meta, "labels", meta_path, true);
  if (!labels)
    return labels.error();
  (**labels)[kLabelCreatedBy] = kMigrationCreator;
  const auto millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(in.now.time_since_epoch()).count();
  (**labels)[kLabelReservationOrder] = std::to_string(millis);

  auto pod_template = childObject(spec, "template", spec_path, false);
  if (!pod_template)
    return pod_template.error();
  if (*pod_template == nullptr) {
    json::object tmpl;
    tmpl["metadata"] = *pod_meta ? templateMetadata(**pod_meta) : json::object();
    tmpl["spec"] = *pod_spec ? json::object(**pod_spec) : json::object();
    spec["template"] = std::move(tmpl);
  }
  const json::value* owners = spec.if_contains("owners");
  const bool has_owners = owners != nullptr && owners->is_array() && !owners->get_array().empty();
  if (!has_owners) {
    auto generated = reserveOwners(pod);
    if (!generated)
      return generated.error();
    spec["owners"] = std::move(*generated);
  }
  // A migration's reservation is used once, then done.
  spec["allocateOnce"] = true;
  const bool has_lifetime = field(spec, "ttl") != nullptr || field(spec, "expires") != nullptr;
  if (!has_lifetime && job.ttl && job.ttl->count() > 0)
    spec["ttl"] = formatGoDuration(*job.ttl);

  json::object& tmpl = spec["template"].get_object();
  auto template_spec = childObject(tmpl, "spec", spec_path + ".template", true);
  if (!template_spec)
    return template_spec.error();
  // The pod's node is what it is moving off; the reservation must find another.
  (**template_spec).erase("nodeName");
  if (!pod_node.empty()) {
    if (auto ok = avoidNode(**template_spec, pod_node); !ok)
      return ok.error();
  }
  if (in.drop_pvc_volumes)
    dropPvcVolumes(**template_spec);

  reservation["apiVersion"] = fmt::format("{}/{}", kReservationGroup, kReservationVersion);
  reservation["kind"] = kReservationKind;
  return json::value(std::move(reservation));
}

ObjectReference reservationRefFor(std::string_view name, std::string_view uid) {
  ObjectReference ref;
  ref.api_version = std::string(kReservationVersion);
  ref.kind = std::string(kReservationKind);
  ref.name = std::string(name);
  ref.uid = std::string(uid);
  return ref;
}

}  // namespace koord::apis
