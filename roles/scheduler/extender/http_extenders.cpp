#include "extender/http_extenders.h"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <latch>
#include <limits>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <utility>

#include "extender/extender_json.h"
#include "koord/core/log.h"
#include "koord/http/client.h"

namespace koord::roles::scheduler {

namespace {

namespace json = boost::json;
using kube::Expected;

// A filter answer may carry back every Node sent; this is far above what thousands of nodes
// take and still a bound on what a broken extender can make the scheduler hold.
constexpr std::size_t kMaxAnswerBytes = 64 << 20;

std::int64_t saturatingAdd(std::int64_t a, std::int64_t b) {
  std::int64_t out = 0;
  if (__builtin_add_overflow(a, b, &out))
    return b > 0 ? std::numeric_limits<std::int64_t>::max()
                 : std::numeric_limits<std::int64_t>::min();
  return out;
}

std::int64_t saturatingMul(std::int64_t a, std::int64_t b) {
  std::int64_t out = 0;
  if (__builtin_mul_overflow(a, b, &out))
    return (a < 0) != (b < 0) ? std::numeric_limits<std::int64_t>::min()
                              : std::numeric_limits<std::int64_t>::max();
  return out;
}

std::chrono::milliseconds timeoutOf(const config::Extender& e) {
  using std::chrono::milliseconds;
  const auto ms = std::chrono::ceil<milliseconds>(e.http_timeout);
  return std::max(ms, milliseconds(1));
}

http::ClientOptions clientOptions(const config::Extender& e) {
  http::ClientOptions o;
  o.connect_timeout = timeoutOf(e);
  o.request_timeout = timeoutOf(e);
  o.response_body_limit = kMaxAnswerBytes;
  o.user_agent = "koord-scheduler";
  if (e.tls_config) {
    const config::ExtenderTlsConfig& t = *e.tls_config;
    o.insecure_skip_verify = t.insecure;
    o.server_name = t.server_name;
    // Data takes precedence over its file, as client-go reads them.
    if (!t.ca_data.empty())
      o.ca_pem = t.ca_data;
    else
      o.ca_file = t.ca_file;
    if (!t.cert_data.empty())
      o.client_cert_pem = t.cert_data;
    else
      o.client_cert_file = t.cert_file;
    if (!t.key_data.empty())
      o.client_key_pem = t.key_data;
    else
      o.client_key_file = t.key_file;
  }
  // kube-scheduler's makeTransport: HTTPS without a CA to check against does not verify.
  if (e.enable_https && o.ca_pem.empty() && o.ca_file.empty())
    o.insecure_skip_verify = true;
  return o;
}

struct Entry {
  config::Extender config;
  std::string base;  // urlPrefix without its trailing slashes
  std::unique_ptr<http::Client> client;

  std::string url(std::string_view verb) const { return base + "/" + std::string(verb); }
  http::ClientRequest request(std::string_view verb, std::string body) const {
    http::ClientRequest req;
    req.method = "POST";
    req.url = url(verb);
    req.headers.emplace_back("Content-Type", "application/json");
    req.headers.emplace_back("Accept", "application/json");
    req.body = std::move(body);
    req.timeout = timeoutOf(config);
    return req;
  }
};

// kube-scheduler's send(): anything but a 200 is the call's failure, worded as upstream words it.
Expected<std::string> answerBody(const Entry& e, std::string_view verb,
                                 const koord::Result<http::Response>& r) {
  if (!r)
    return kube::makeKubeError(fmt::format("Post {:?}: {}", e.url(verb), r.error().message()));
  if (r->status != 200)
    return kube::makeKubeError(
        fmt::format("Failed {} with extender at URL {}, code {}", verb, e.url(verb), r->status));
  return r->body;
}

}  // namespace

struct HttpExtenders::Impl {
  boost::asio::io_context io;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work{
      boost::asio::make_work_guard(io)};
  std::thread thread;
  std::vector<Entry> entries;
  HttpExtendersOptions options;

  // The last pod sent, by UID and resourceVersion: filter and prioritize of one cycle (and the
  // cycles of a retried pod that did not change) fetch it once.
  std::mutex pod_mu;
  std::string pod_uid;
  std::string pod_version;
  std::string pod_json;

  ~Impl() {
    for (auto& e : entries) {
      if (e.client)
        e.client->closeIdleConnections();
    }
    work.reset();
    if (thread.joinable())
      thread.join();
  }

  Expected<std::string> podJson(const PodInfo& pod) {
    std::lock_guard lock(pod_mu);
    if (!pod_json.empty() && pod_uid == pod.uid && pod_version == pod.resource_version)
      return pod_json;
    std::string text;
    if (pod.reserve_pod || !options.fetch_pod) {
      text = json::serialize(extender::podFromProjection(pod));
    } else {
      auto fetched = options.fetch_pod(pod);
      if (!fetched)
        return kube::makeKubeError(
            fmt::format("getting pod {} to send: {}", pod.key(), fetched.error().message));
      // A Pod's schema bounds its nesting, so serializing the API's object is safe.
      text = json::serialize(*fetched);
    }
    pod_uid = pod.uid;
    pod_version = pod.resource_version;
    pod_json = text;
    return text;
  }

  Expected<extender::FilterAnswer> callFilter(const Entry& e, const PodInfo& pod,
                                              const std::vector<const NodeInfo*>& nodes) {
    auto pod_text = podJson(pod);
    if (!pod_text)
      return pod_text.error();
    const std::string& verb = e.config.filter_verb;
    auto r = e.client->sendSync(
        e.request(verb, extender::extenderArgs(*pod_text, nodes, e.config.node_cache_capable)));
    auto body = answerBody(e, verb, r);
    if (!body)
      return body.error();
    auto answer =
        extender::parseFilterResult(*body, nodes, e.config.node_cache_capable, e.config.url_prefix);
    if (!answer)
      return answer.error();
    if (!answer->error.empty())
      return kube::makeKubeError(answer->error);
    return answer;
  }

  Expected<std::vector<PreemptionCandidate>> callPreempt(
      const Entry& e, const PodInfo& pod, const Snapshot& snapshot,
      const std::vector<PreemptionCandidate>& candidates) {
    auto pod_text = podJson(pod);
    if (!pod_text)
      return pod_text.error();
    const std::string& verb = e.config.preempt_verb;
    auto r = e.client->sendSync(e.request(
        verb, extender::preemptionArgs(*pod_text, candidates, e.config.node_cache_capable)));
    auto body = answerBody(e, verb, r);
    if (!body)
      return body.error();
    return extender::parsePreemptionResult(*body, snapshot, candidates, e.config.url_prefix);
  }
};

HttpExtenders::HttpExtenders(const std::vector<config::Extender>& extenders,
                             HttpExtendersOptions options)
    : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  for (std::size_t i = 0; i < extenders.size(); ++i) {
    const config::Extender& c = extenders[i];
    Entry e;
    e.config = c;
    e.base = c.url_prefix;
    while (!e.base.empty() && e.base.back() == '/')
      e.base.pop_back();
    try {
      e.client = std::make_unique<http::Client>(impl_->io, clientOptions(c));
    } catch (const std::exception& ex) {
      throw std::invalid_argument(
          fmt::format("extenders[{}] ({}): {}", i, c.url_prefix, ex.what()));
    }
    impl_->entries.push_back(std::move(e));
  }
  impl_->thread = std::thread([impl = impl_.get()] { impl->io.run(); });
}

HttpExtenders::~HttpExtenders() = default;

bool HttpExtenders::interested(std::size_t i, const PodInfo& pod) const {
  const auto& managed = impl_->entries[i].config.managed_resources;
  if (managed.empty())
    return true;
  // The projection sums requests and limits over containers and init containers, keeping every
  // non-zero scalar resource by name.
  for (const auto& r : managed) {
    if (pod.requests.scalarValue(r.name) != 0 || pod.limits.scalarValue(r.name) != 0)
      return true;
  }
  return false;
}

Status HttpExtenders::filter(const PodInfo& pod, std::vector<const NodeInfo*>& feasible,
                             NodeStatusMap& failed) {
  for (std::size_t i = 0; i < impl_->entries.size() && !feasible.empty(); ++i) {
    const Entry& e = impl_->entries[i];
    if (e.config.filter_verb.empty() || !interested(i, pod))
      continue;
    auto answer = impl_->callFilter(e, pod, feasible);
    if (!answer) {
      if (e.config.ignorable) {
        KOORD_LOG_WARNING("scheduler: skipping ignorable extender {} for {}: {}",
                          e.config.url_prefix, pod.key(), answer.error().message);
        continue;
      }
      return Status::error(answer.error().message);
    }
    std::vector<char> unresolvable(feasible.size(), 0);
    for (auto& [index, message] : answer->unresolvable) {
      unresolvable[index] = 1;
      const std::string& name = feasible[index]->name();
      std::vector<std::string> reasons;
      if (auto it = failed.find(name); it != failed.end())
        reasons = it->second.reasons();
      reasons.push_back(std::move(message));
      failed.insert_or_assign(name,
                              Status(Code::kUnschedulableAndUnresolvable, std::move(reasons)));
    }
    for (auto& [index, message] : answer->failed) {
      if (unresolvable[index])
        continue;
      const std::string& name = feasible[index]->name();
      auto it = failed.find(name);
      if (it == failed.end()) {
        failed.emplace(name, Status::unschedulable(std::move(message)));
      } else {
        std::vector<std::string> reasons = it->second.reasons();
        reasons.push_back(std::move(message));
        it->second = Status(it->second.code(), std::move(reasons));
      }
    }
    std::vector<const NodeInfo*> passed;
    passed.reserve(answer->passed.size());
    for (std::size_t index : answer->passed)
      passed.push_back(feasible[index]);
    feasible = std::move(passed);
  }
  return Status::success();
}

void HttpExtenders::prioritize(const PodInfo& pod, const std::vector<const NodeInfo*>& nodes,
                               std::vector<NodeScore>& scores) {
  std::vector<std::size_t> asked;
  for (std::size_t i = 0; i < impl_->entries.size(); ++i) {
    if (!impl_->entries[i].config.prioritize_verb.empty() && interested(i, pod))
      asked.push_back(i);
  }
  if (asked.empty() || nodes.empty())
    return;
  auto pod_text = impl_->podJson(pod);
  if (!pod_text) {
    KOORD_LOG_WARNING("scheduler: no extender scores for {}: {}", pod.key(),
                      pod_text.error().message);
    return;
  }
  // Both bodies at most (names, or whole nodes), each built once for every extender asking.
  std::optional<std::string> with_names;
  std::optional<std::string> with_nodes;
  std::vector<std::optional<koord::Result<http::Response>>> answers(asked.size());
  std::latch pending(static_cast<std::ptrdiff_t>(asked.size()));
  for (std::size_t k = 0; k < asked.size(); ++k) {
    const Entry& e = impl_->entries[asked[k]];
    std::optional<std::string>& body = e.config.node_cache_capable ? with_names : with_nodes;
    if (!body)
      body = extender::extenderArgs(*pod_text, nodes, e.config.node_cache_capable);
    // As kube-scheduler's goroutine per extender: the calls overlap, the cycle waits for all.
    e.client->send(e.request(e.config.prioritize_verb, *body),
                   [&answers, &pending, k](koord::Result<http::Response> r) {
                     answers[k] = std::move(r);
                     pending.count_down();
                   });
  }
  pending.wait();
  std::vector<std::int64_t> combined(nodes.size(), 0);
  for (std::size_t k = 0; k < asked.size(); ++k) {
    const Entry& e = impl_->entries[asked[k]];
    auto body = answerBody(e, e.config.prioritize_verb, *answers[k]);
    auto list = body ? extender::parseHostPriorities(*body, nodes)
                     : Expected<std::vector<std::pair<std::size_t, std::int64_t>>>(body.error());
    if (!list) {
      // Upstream only logs it: the plugins' and other extenders' scores decide.
      KOORD_LOG_WARNING("scheduler: extender {} gave no scores for {}: {}", e.config.url_prefix,
                        pod.key(), list.error().message);
      continue;
    }
    for (const auto& [index, score] : *list)
      combined[index] = saturatingAdd(combined[index], saturatingMul(score, e.config.weight));
  }
  constexpr std::int64_t kScale = kMaxNodeScore / extender::kMaxExtenderPriority;
  for (std::size_t i = 0; i < nodes.size() && i < scores.size(); ++i)
    scores[i].score = saturatingAdd(scores[i].score, saturatingMul(combined[i], kScale));
}

bool HttpExtenders::bindsPod(const PodInfo& pod) const {
  for (std::size_t i = 0; i < impl_->entries.size(); ++i) {
    if (!impl_->entries[i].config.bind_verb.empty() && interested(i, pod))
      return true;
  }
  return false;
}

bool HttpExtenders::preemptsFor(const PodInfo& pod) const {
  for (std::size_t i = 0; i < impl_->entries.size(); ++i) {
    if (!impl_->entries[i].config.preempt_verb.empty() && interested(i, pod))
      return true;
  }
  return false;
}

Status HttpExtenders::processPreemption(const PodInfo& pod, const Snapshot& snapshot,
                                        std::vector<PreemptionCandidate>& candidates) {
  for (std::size_t i = 0; i < impl_->entries.size() && !candidates.empty(); ++i) {
    const Entry& e = impl_->entries[i];
    if (e.config.preempt_verb.empty() || !interested(i, pod))
      continue;
    auto answer = impl_->callPreempt(e, pod, snapshot, candidates);
    if (!answer) {
      if (e.config.ignorable) {
        KOORD_LOG_WARNING("scheduler: skipping ignorable extender {} in preemption for {}: {}",
                          e.config.url_prefix, pod.key(), answer.error().message);
        continue;
      }
      return Status::error(answer.error().message);
    }
    candidates = std::move(*answer);
  }
  return Status::success();
}

void HttpExtenders::bind(const PodInfo& pod, const std::string& node, StatusCallback done) {
  for (std::size_t i = 0; i < impl_->entries.size(); ++i) {
    const Entry& e = impl_->entries[i];
    if (e.config.bind_verb.empty() || !interested(i, pod))
      continue;
    e.client->send(e.request(e.config.bind_verb, extender::bindingArgs(pod, node)),
                   [&e, done = std::move(done)](koord::Result<http::Response> r) {
                     auto body = answerBody(e, e.config.bind_verb, r);
                     if (!body) {
                       done(Status::error(body.error().message));
                       return;
                     }
                     auto error = extender::parseBindingResult(*body);
                     if (!error)
                       done(Status::error(error.error().message));
                     else if (!error->empty())
                       done(Status::error(*error));
                     else
                       done(Status::success());
                   });
    return;
  }
  done(Status::error("no extender binds the pod"));
}

}  // namespace koord::roles::scheduler
