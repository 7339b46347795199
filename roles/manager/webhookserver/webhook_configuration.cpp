#include "webhook_configuration.h"

#include <boost/json.hpp>

#include <fmt/format.h>

#include "koord/core/log.h"
#include "koord/kube/kubeconfig.h"
#include "koord/kube/rest_client.h"

namespace koord::roles::manager {

namespace json = boost::json;

namespace {

constexpr const char* kTemplateAnnotation = "template";
constexpr int kTimeoutSeconds = 10;

json::object rule(const char* resource, std::initializer_list<const char*> operations) {
  json::array ops;
  for (const char* op : operations)
    ops.emplace_back(op);
  return json::object{{"apiGroups", json::array{""}},
                      {"apiVersions", json::array{"v1"}},
                      {"operations", std::move(ops)},
                      {"resources", json::array{resource}}};
}

json::object selectorNotExists(const char* key) {
  return json::object{
      {"matchExpressions", json::array{json::object{{"key", key}, {"operator", "DoesNotExist"}}}}};
}

json::object selectorIn(const char* key, const char* value) {
  return json::object{
      {"matchExpressions", json::array{json::object{
                               {"key", key}, {"operator", "In"}, {"values", json::array{value}}}}}};
}

json::object webhook(const char* name, const char* path, json::object rule_obj,
                     const char* failure_policy) {
  return json::object{
      {"name", name},
      {"admissionReviewVersions", json::array{"v1", "v1beta1"}},
      {"clientConfig",
       json::object{{"service", json::object{{"name", "koordinator-webhook-service"},
                                             {"namespace", "koordinator-system"},
                                             {"path", path}}}}},
      {"failurePolicy", failure_policy},
      {"rules", json::array{std::move(rule_obj)}},
      {"sideEffects", "None"},
      // The server answers a review that overruns at its 8 s deadline; the apiserver must still
      // be waiting then, and must not hold a pod creation much longer.
      {"timeoutSeconds", kTimeoutSeconds},
  };
}

// Koordinator's ElasticQuota webhooks: Fail, as its manifests register them; a quota that
// slipped past the tree's checks would corrupt the scheduler's view of every quota above it.
json::object elasticQuotaWebhook(const char* name, const char* path,
                                 std::initializer_list<const char*> operations) {
  auto wh = webhook(name, path, rule("elasticquotas", operations), "Fail");
  auto& r = wh["rules"].as_array().front().as_object();
  r["apiGroups"] = json::array{"scheduling.sigs.k8s.io"};
  r["apiVersions"] = json::array{"v1alpha1"};
  return wh;
}

kube::ResourceRef configRef(bool mutating, const std::string& name) {
  return {"admissionregistration.k8s.io",
          "v1",
          mutating ? "mutatingwebhookconfigurations" : "validatingwebhookconfigurations",
          "",
          name,
          ""};
}

std::string pathOf(const json::object& client_config) {
  if (auto* svc = client_config.if_contains("service"); svc && svc->is_object()) {
    if (auto* p = svc->as_object().if_contains("path"); p && p->is_string())
      return std::string(p->as_string());
    return "";
  }
  if (auto* url = client_config.if_contains("url"); url && url->is_string()) {
    std::string_view u = url->as_string();
    auto scheme = u.find("://");
    auto slash = u.find('/', scheme == std::string_view::npos ? 0 : scheme + 3);
    return slash == std::string_view::npos ? "/" : std::string(u.substr(slash));
  }
  return "";
}

bool coversPods(const json::object& webhook) {
  const json::value* rules = webhook.if_contains("rules");
  if (rules == nullptr || !rules->is_array())
    return false;
  for (const auto& rule : rules->as_array()) {
    const json::value* resources =
        rule.is_object() ? rule.as_object().if_contains("resources") : nullptr;
    if (resources == nullptr || !resources->is_array())
      continue;
    for (const auto& r : resources->as_array()) {
      if (r.is_string() && (r.as_string() == "pods" || r.as_string() == "*"))
        return true;
    }
  }
  return false;
}

// A configuration's template annotation, or null when it has none or an empty one (Koordinator
// treats "" as absent, and its chart writes that).
const json::string* templateAnnotation(const json::object& config) {
  const auto* meta = config.if_contains("metadata");
  const auto* ann =
      meta && meta->is_object() ? meta->as_object().if_contains("annotations") : nullptr;
  const auto* t =
      ann && ann->is_object() ? ann->as_object().if_contains(kTemplateAnnotation) : nullptr;
  return t && t->is_string() && !t->as_string().empty() ? &t->as_string() : nullptr;
}

// The templates a configuration carries: its template annotation, else its webhooks.
kube::Expected<json::array> templatesOf(const json::object& config, std::string_view what) {
  if (const json::string* t = templateAnnotation(config)) {
    boost::system::error_code ec;
    json::value parsed = json::parse(*t, ec);
    if (ec || !parsed.is_array())
      return kube::makeKubeError(
          fmt::format("{}: annotation template is not a JSON array of webhooks", what));
    return std::move(parsed.as_array());
  }
  if (auto* w = config.if_contains("webhooks"); w && w->is_array())
    return w->as_array();
  return json::array{};
}

bool isSubset(const json::value& want, const json::value& have) {
  if (want.is_object()) {
    if (!have.is_object())
      return false;
    for (const auto& [k, v] : want.as_object()) {
      const json::value* h = have.as_object().if_contains(k);
      if (h == nullptr || !isSubset(v, *h))
        return false;
    }
    return true;
  }
  if (want.is_array()) {
    if (!have.is_array() || have.as_array().size() != want.as_array().size())
      return false;
    for (std::size_t i = 0; i < want.as_array().size(); ++i) {
      if (!isSubset(want.as_array()[i], have.as_array()[i]))
        return false;
    }
    return true;
  }
  return want == have;
}

}  // namespace

json::array defaultWebhooks(bool mutating) {
  if (mutating) {
    auto create =
        webhook("mpod-create.koordinator.sh", "/mutate-pod", rule("pods", {"CREATE"}), "Fail");
    create["namespaceSelector"] = selectorNotExists("control-plane");
    auto update =
        webhook("mpod-update.koordinator.sh", "/mutate-pod", rule("pods", {"UPDATE"}), "Fail");
    update["namespaceSelector"] = selectorNotExists("control-plane");
    update["objectSelector"] = selectorIn("pod.koordinator.sh/mutating-update", "true");
    return json::array{
        std::move(create), std::move(update),
        elasticQuotaWebhook("melasticquota.koordinator.sh",
                            "/mutate-scheduling-sigs-k8s-io-v1alpha1-elasticquota", {"CREATE"})};
  }
  auto pod =
      webhook("vpod.koordinator.sh", "/validate-pod", rule("pods", {"CREATE", "UPDATE"}), "Fail");
  pod["namespaceSelector"] = selectorNotExists("control-plane");
  auto cm = webhook("vconfigmap.koordinator.sh", "/validate-configmap",
                    rule("configmaps", {"CREATE", "UPDATE", "DELETE"}), "Fail");
  cm["objectSelector"] = selectorIn("koordinator.sh/configmap-type", "slo-controller-config");
  // koord's own: each koordlet writes only its own node's objects. Ignore: a manager that is
  // down must not stop the kubelets' node status updates that go through the same rule.
  auto node_writes = webhook("vnode-writes.koordinator.sh", "/validate-node-writes",
                             rule("nodes", {"CREATE", "UPDATE", "DELETE"}), "Ignore");
  json::array rules = node_writes["rules"].as_array();
  rules.front().as_object()["resources"] = json::array{"nodes", "nodes/status"};
  rules.push_back(json::object{
      {"apiGroups", json::array{"slo.koordinator.sh", "scheduling.koordinator.sh"}},
      {"apiVersions", json::array{"v1alpha1"}},
      {"operations", json::array{"CREATE", "UPDATE", "DELETE"}},
      {"resources",
       json::array{"nodemetrics", "nodemetrics/status", "devices", "devices/status"}}});
  node_writes["rules"] = std::move(rules);
  // koord's own, behind Koordinator's reservation webhook gate; Fail, as Koordinator's
  // /mutate-reservation: a reservation that slipped past would hold a node's room for nobody.
  auto reservation = webhook("vreservation.koordinator.sh", "/validate-reservation",
                             rule("reservations", {"CREATE", "UPDATE"}), "Fail");
  auto& reservation_rule = reservation["rules"].as_array().front().as_object();
  reservation_rule["apiGroups"] = json::array{"scheduling.koordinator.sh"};
  reservation_rule["apiVersions"] = json::array{"v1alpha1"};
  return json::array{std::move(pod), std::move(cm), std::move(node_writes), std::move(reservation),
                     elasticQuotaWebhook("velasticquota.koordinator.sh",
                                         "/validate-scheduling-sigs-k8s-io-v1alpha1-elasticquota",
                                         {"CREATE", "UPDATE", "DELETE"})};
}

kube::Expected<json::array> renderWebhooks(const json::array& templates,
                                           const WebhookConfigurationOptions& options,
                                           const std::string& ca_pem) {
  json::array out;
  for (std::size_t i = 0; i < templates.size(); ++i) {
    const json::object* wh = templates[i].if_object();
    const json::object* cc = nullptr;
    if (wh != nullptr) {
      if (auto* c = wh->if_contains("clientConfig"); c && c->is_object())
        cc = &c->as_object();
    }
    if (cc == nullptr)
      return kube::makeKubeError(fmt::format("webhooks[{}]: no clientConfig", i));
    std::string path = pathOf(*cc);
    if (path.empty())
      return kube::makeKubeError(
          fmt::format("webhooks[{}].clientConfig: neither service.path nor url", i));
    if (!options.served_paths.count(path))
      continue;
    json::object rendered = *wh;
    json::object client;
    if (!options.host.empty() || !cc->contains("service")) {
      std::string host = options.host;
      if (host.empty())  // a URL template without WEBHOOK_HOST stays as the operator wrote it
        client["url"] = cc->at("url");
      else
        client["url"] = fmt::format("https://{}:{}{}",
                                    host.find(':') != std::string::npos ? "[" + host + "]" : host,
                                    options.port, path);
    } else {
      json::object svc = cc->at("service").as_object();
      svc["namespace"] = options.namespace_;
      svc["name"] = options.service_name;
      client["service"] = std::move(svc);
    }
    client["caBundle"] = kube::encodeBase64(ca_pem);
    rendered["clientConfig"] = std::move(client);
    if (!options.failure_policy_pods.empty() && coversPods(*wh))
      rendered["failurePolicy"] = options.failure_policy_pods;
    out.push_back(std::move(rendered));
  }
  return out;
}

kube::Expected<bool> ensureWebhookConfigurations(kube::RestClient& client,
                                                 const WebhookConfigurationOptions& options,
                                                 const std::string& ca_pem) {
  bool wrote = false;
  for (bool mutating : {true, false}) {
    const std::string& name = mutating ? options.mutating_name : options.validating_name;
    const char* kind = mutating ? "MutatingWebhookConfiguration" : "ValidatingWebhookConfiguration";
    const std::string what = fmt::format("{} {}", kind, name);
    auto current = client.getSync(configRef(mutating, name));
    json::object config;
    bool exists = true;
    if (!current) {
      if (!kube::isNotFound(current.error()))
        return kube::makeKubeError(
            fmt::format("reading {}: {} {}", what, current.error().code, current.error().message));
      exists = false;
      auto templates = defaultWebhooks(mutating);
      config = json::object{
          {"apiVersion", "admissionregistration.k8s.io/v1"},
          {"kind", kind},
          {"metadata", json::object{{"name", name},
                                    {"annotations", json::object{{kTemplateAnnotation,
                                                                  json::serialize(templates)}}}}},
          {"webhooks", json::array{}}};
    } else if (current->is_object()) {
      config = std::move(current->as_object());
    } else {
      return kube::makeKubeError(fmt::format("reading {}: not an object", what));
    }

    auto templates = templatesOf(config, what);
    if (!templates)
      return templates.error();
    auto rendered = renderWebhooks(*templates, options, ca_pem);
    if (!rendered)
      return kube::makeKubeError(fmt::format("{}: {}", what, rendered.error().message));

    // The first time koord sees an operator's configuration it keeps the webhooks as written
    // in the template annotation, as Koordinator does, so later renders start from them and not
    // from our own earlier output.
    const bool had_template = templateAnnotation(config) != nullptr;
    auto& meta = config["metadata"].as_object();
    if (!had_template) {
      if (!meta.contains("annotations") || !meta["annotations"].is_object())
        meta["annotations"] = json::object{};
      meta["annotations"].as_object()[kTemplateAnnotation] = json::serialize(*templates);
    }

    // The apiserver fills in what we leave out (timeoutSeconds, matchPolicy, rules[].scope, ...),
    // so "unchanged" means every field we set is there with our value.
    const json::value* old_webhooks = config.if_contains("webhooks");
    if (exists && had_template && old_webhooks != nullptr &&
        isSubset(json::value(*rendered), *old_webhooks))
      continue;
    config["webhooks"] = std::move(*rendered);
    auto r = exists ? client.updateSync(configRef(mutating, name), json::value(std::move(config)))
                    : client.createSync(configRef(mutating, ""), json::value(std::move(config)));
    if (!r) {
      // Another replica wrote first: the next pass reads what it wrote.
      if (kube::isConflict(r.error()) || kube::isAlreadyExists(r.error()))
        continue;
      return kube::makeKubeError(
          fmt::format("writing {}: {} {}", what, r.error().code, r.error().message));
    }
    KOORD_LOG_INFO("webhook configuration: {} {}", exists ? "updated" : "created", what);
    wrote = true;
  }
  return wrote;
}

}  // namespace koord::roles::manager
