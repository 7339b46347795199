#include "admission_handlers.h"

#include <fmt/format.h>

#include "koord/core/feature_gate.h"
#include "manager_informers.h"
#include "manager_options.h"
#include "webhook/admission_review.h"
#include "webhook/configmap_validating.h"
#include "webhook/elastic_quota_mutating.h"
#include "webhook/elastic_quota_validating.h"
#include "webhook/node_writer_validating.h"
#include "webhook/pod_mutating.h"
#include "webhook/pod_validating.h"
#include "webhook/reservation_validating.h"

namespace koord::roles::manager {

namespace wh = koord::manager::webhook;

namespace {

AdmissionHandler bind(wh::Handler handler) {
  return [handler = std::move(handler)](std::string_view body) {
    auto r = wh::serve(body, handler);
    return AdmissionAnswer{r.http_status, std::move(r.body), std::move(r.outcome)};
  };
}

// The quota tree both ElasticQuota webhooks and the pod check judge by, fed by the ElasticQuota
// informer (Koordinator feeds its tree only with its validating webhook on; koord feeds it
// whenever a webhook reads it, so the mutating one alone still finds parents).
std::shared_ptr<wh::QuotaTopology> quotaTopology(ManagerInformers& informers,
                                                 const FeatureGate& gates) {
  wh::QuotaTopologyOptions qo;
  qo.guarantee_usage = gates.enabled("ElasticQuotaGuaranteeUsage");
  qo.parent_quota_submit_pod = gates.enabled("SupportParentQuotaSubmitPod");
  qo.disable_default_quota = gates.enabled("DisableDefaultQuota");
  qo.has_labelled_pods = [&informers](std::string_view quota) {
    return !informers.pods.store().byIndex(kPodQuotaIndex, std::string(quota)).empty();
  };
  qo.has_pods_in_namespace = [&informers](std::string_view ns) {
    return !informers.pods.store().byIndex(kube::indexes::kNamespace, std::string(ns)).empty();
  };
  auto topology = std::make_shared<wh::QuotaTopology>(std::move(qo));
  informers.elastic_quotas.addHandlers(
      {[topology](const std::string&, const apis::ElasticQuota& q) { topology->onAdd(q); },
       [topology](const std::string&, const apis::ElasticQuota& a, const apis::ElasticQuota& b) {
         topology->onUpdate(a, b);
       },
       [topology](const std::string&, const apis::ElasticQuota& q) { topology->onDelete(q); }});
  return topology;
}

}  // namespace

std::map<std::string, AdmissionHandler> admissionHandlers(ManagerInformers& informers,
                                                          const FeatureGate& gates,
                                                          const ManagerOptions& options) {
  std::map<std::string, AdmissionHandler> out;
  const bool quota_mutating = gates.enabled("ElasticMutatingWebhook");
  const bool quota_validating = gates.enabled("ElasticValidatingWebhook");
  std::shared_ptr<wh::QuotaTopology> topology;
  if (quota_mutating || quota_validating || gates.enabled("PodValidatingWebhook"))
    topology = quotaTopology(informers, gates);
  if (quota_mutating)
    out[std::string(wh::kElasticQuotaMutatingPath)] =
        bind(wh::elasticQuotaMutatingHandler(topology));
  if (quota_validating)
    out[std::string(wh::kElasticQuotaValidatingPath)] =
        bind(wh::elasticQuotaValidatingHandler(topology));
  if (gates.enabled("PodMutatingWebhook")) {
    wh::PodMutatingContext ctx;
    ctx.profiles = [&informers] { return informers.profiles.store().list(); };
    ctx.namespace_labels = [&informers](std::string_view name) -> std::optional<kube::Labels> {
      auto ns = informers.namespaces.store().get(std::string(name));
      if (!ns)
        return std::nullopt;
      return ns->labels;
    };
    ctx.priority_class =
        [&informers](std::string_view name) -> std::optional<wh::PriorityClassInfo> {
      auto pc = informers.priority_classes.store().get(std::string(name));
      if (!pc)
        return std::nullopt;
      return wh::PriorityClassInfo{pc->value, pc->preemption_policy};
    };
    ctx.skip_mutating_resources = gates.enabled("ColocationProfileSkipMutatingResources");
    out["/mutate-pod"] = bind(wh::podMutatingHandler(std::move(ctx)));
  }
  if (gates.enabled("PodValidatingWebhook")) {
    wh::PodValidatingOptions vo;
    vo.skip_validating_priority = gates.enabled("ColocationProfileSkipValidatingPriority");
    vo.scheduler_usernames = schedulerUsernames(options);
    vo.quota_topology = topology;
    out["/validate-pod"] = bind(wh::podValidatingHandler(vo));
  }
  // Served beside /validate-pod: a manager with every admission gate off runs no webhook server.
  if (gates.enabled("PodValidatingWebhook")) {
    wh::NodeWriterOptions no;
    no.koordlet_usernames = koordletUsernames(options);
    no.pod = [&informers](std::string_view ns,
                          std::string_view name) -> std::optional<wh::PodPlacement> {
      auto pod = informers.pods.store().get(fmt::format("{}/{}", ns, name));
      if (!pod)
        return std::nullopt;
      return wh::PodPlacement{pod->uid, pod->node_name};
    };
    out["/validate-node-writes"] = bind(wh::nodeWriterHandler(std::move(no)));
  }
  if (gates.enabled("ConfigMapValidatingWebhook")) {
    wh::ConfigMapValidatingOptions co;
    co.namespace_name = options.config_namespace;
    co.name = options.slo_config_name;
    co.nodes = [&informers] {
      std::vector<std::pair<std::string, kube::Labels>> nodes;
      for (const auto& n : informers.nodes.store().list())
        nodes.emplace_back(n->view.name, n->view.labels);
      return nodes;
    };
    out["/validate-configmap"] = bind(wh::configMapValidatingHandler(std::move(co)));
  }
  // Koordinator gates its one Reservation webhook (/mutate-reservation) on
  // ReservationMutatingWebhook and has no validating one; koord's validation rides on that gate
  // rather than on a gate of its own, which Koordinator's --feature-gates would refuse.
  if (gates.enabled("ReservationMutatingWebhook"))
    out["/validate-reservation"] = bind(wh::reservationValidatingHandler());
  return out;
}

}  // namespace koord::roles::manager
