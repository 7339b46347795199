#include "plugins/nodenumaresource/args.h"

#include <boost/json.hpp>

#include <fmt/format.h>

#include "koord/kube/json_fields.h"
#include "plugins/upstream/args_decode.h"

namespace koord::roles::scheduler::nodenumaresource {

namespace json = boost::json;
namespace jf = kube::jsonfields;

config::KoordScoringStrategy defaultNUMAResourceScoring() {
  return {config::KoordScoringType::kLeastAllocated, {{"cpu", 1}, {"memory", 1}}};
}

kube::Expected<NodeNUMAResourceArgs> decodeNodeNUMAResourceArgs(const json::value* args,
                                                                std::string_view /*api_version*/) {
  NodeNUMAResourceArgs out;
  auto o = upstream::argsObject(args);
  if (!o)
    return o.error();
  if (*o == nullptr)
    return out;
  const json::object& a = **o;
  if (auto known = upstream::checkKnownFields(
          a,
          {"apiVersion", "kind", "defaultCPUBindPolicy", "scoringStrategy", "numaScoringStrategy"},
          "");
      !known)
    return known.error();
  // Absent keeps the default; present, even "", replaces it ("" binds no CPUs by default).
  if (const json::value* v = jf::field(a, "defaultCPUBindPolicy")) {
    if (!v->is_string())
      return jf::typeError("defaultCPUBindPolicy", "string", *v);
    const std::string_view text = v->get_string();
    auto policy = parseCpuBindPolicy(text);
    if (!policy || (*policy != CpuBindPolicy::kNone && *policy != CpuBindPolicy::kFullPCPUs &&
                    *policy != CpuBindPolicy::kSpreadByPCPUs))
      return kube::makeKubeError(
          fmt::format("defaultCPUBindPolicy: Invalid value: \"{}\": must specified CPU bind policy "
                      "FullPCPUs or SpreadByPCPUs",
                      text));
    out.default_cpu_bind_policy = *policy;
  }
  auto scoring = config::decodeKoordScoringStrategy(a, "scoringStrategy", out.scoring_strategy);
  if (!scoring)
    return scoring.error();
  out.scoring_strategy = std::move(*scoring);
  auto numa =
      config::decodeKoordScoringStrategy(a, "numaScoringStrategy", out.numa_scoring_strategy);
  if (!numa)
    return numa.error();
  out.numa_scoring_strategy = std::move(*numa);
  return out;
}

}  // namespace koord::roles::scheduler::nodenumaresource
