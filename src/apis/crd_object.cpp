// The out-of-line parts of crd_object.h.
#include "crd_object.h"

namespace koord::apis::detail {

kube::Expected<ObjectReference> decodeObjectReference(const boost::json::object& o,
                                                      std::string_view path) {
  ObjectReference out;
  if (auto ok = readStrings(o, path,
                            {{"apiVersion", &out.api_version},
                             {"kind", &out.kind},
                             {"namespace", &out.namespace_},
                             {"name", &out.name},
                             {"uid", &out.uid}});
      !ok) {
    return ok.error();
  }
  return out;
}

kube::Expected<StatusCondition> decodeCondition(const boost::json::object& o,
                                                std::string_view path) {
  StatusCondition out;
  if (auto ok = readStrings(o, path,
                            {{"type", &out.type},
                             {"status", &out.status},
                             {"reason", &out.reason},
                             {"message", &out.message}});
      !ok) {
    return ok.error();
  }
  auto probe = kube::jsonfields::timeField(o, "lastProbeTime", path);
  if (!probe)
    return probe.error();
  out.last_probe_time = *probe;
  auto transition = kube::jsonfields::timeField(o, "lastTransitionTime", path);
  if (!transition)
    return transition.error();
  out.last_transition_time = *transition;
  return out;
}

}  // namespace koord::apis::detail
