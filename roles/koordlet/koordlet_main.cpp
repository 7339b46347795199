// koordlet: the node agent that measures usage and protects LS pods from BE pods.
#include <malloc.h>

#include <cstdlib>
#include <string_view>
#include <utility>

#include "audit/audit_setup.h"
#include "feature_probes.h"
#include "koord/apis/features.h"
#include "koord/app/role_app.h"
#include "koord/cgroup/cgroup_version.h"
#include "koord/core/log.h"
#include "koordlet.h"
#include "koordlet_inert_flags.h"
#include "koordlet_options.h"
#include "koordlet_startup.h"
#include "runtimehooks/groupidentity/group_identity_hook.h"

namespace koord::roles::koordlet {

namespace {

// The koordlet runs on every node within a memory budget. By default glibc raises its mmap
// threshold to the largest block freed so far (a /metrics exposition, a pod list), and from then
// on such blocks come from the heap and stay resident once freed; thread arenas add more heaps.
// Fixed thresholds hand large blocks back to the kernel when freed and trim the heap's top, and
// two arenas are plenty for the koordlet's few threads.
void boundHeapRetention() {
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);
  mallopt(M_TRIM_THRESHOLD, 256 * 1024);
  mallopt(M_ARENA_MAX, 2);
}

}  // namespace

int roleMain(int argc, char** argv) {
  boundHeapRetention();
  return app::runRole(argv[0], [&] {
    KoordletOptions o;
    FeatureGate gates(apis::koordletFeatures());
    FlagSet flags(argv[0]);
    const char* mode = std::getenv("agent_mode");
    registerFlags(flags, o, gates, mode != nullptr && std::string_view(mode) == "hostMode");
    if (app::parseOrHelp(flags, argc, argv))
      return 0;
    app::applyCommonOptions(o.common, &gates);
    if (const char* node = std::getenv("NODE_NAME"))
      o.node_name = node;
    validate(o);

    auto root = cgroupRoot(o);
    const cgroup::CgroupRoot probe_root = root;
    groupIdentityState().setProcRoot(o.proc_root_dir);
    auto topology = cpuTopology(o);
    KOORD_LOG_INFO("koordlet: node {}, cgroup {} ({} driver) at {}, {} CPUs", o.node_name,
                   cgroup::cgroupVersionName(root.version), cgroup::cgroupDriverName(root.driver),
                   root.root.string(), topology.cpus.size());

    app::RoleApp role("koordlet");
    // Before the server starts (it serves the audit log) and outliving the koordlet (whose
    // strategies record to it).
    auto auditor = audit::koordletAuditor(o, gates, flags);
    audit::DefaultAuditorScope audit_scope(auditor);
    role.serveOps(o.addr, app::OpsEndpoints::kAll, nullptr,
                  [&](http::Server& server) { audit::addAuditHandler(server, auditor, gates); });
    Koordlet koordlet(role, o, gates, flags,
                      {.cgroup_root = std::move(root),
                       .topology = std::move(topology),
                       .api_server = app::apiServerConfig(o.kubeconfig, o.kube_api_qps,
                                                          o.kube_api_burst, "koordlet")});
    koordlet.start();
    role.reactor().onShutdown([&] { koordlet.stop(); });
    warnInertFlags(flags);
    markUnavailableFeatures(gates, o, probe_root);
    app::reportGateEffects(gates, "koordlet", role.metrics(), "koordlet");
    return role.run();
  });
}

}  // namespace koord::roles::koordlet
