#include "api_reservations.h"

#include <boost/json.hpp>

#include <chrono>
#include <ctime>
#include <unordered_map>

#include <fmt/format.h>

#include "api_common.h"

namespace koord::bench::scheduler_api {

namespace json = boost::json;
using namespace koord::kube;
using Clock = std::chrono::steady_clock;

std::string ownerValue(const std::string& run, int k) {
  return fmt::format("{}-r{:05d}", run, k);
}

int ownedReservation(int i, int count) {
  return count > 0 && i % 2 == 0 ? (i / 2) % count : -1;
}

namespace {

// A scheduler name no scheduler of the run serves (Availability::kWritten).
constexpr const char* kNobody = "koord-bench-nobody";

std::string nowRfc3339() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

json::object room(const ReservationPlan& p) {
  return json::object{{"cpu", fmt::format("{}m", p.cpu_milli)},
                      {"memory", fmt::format("{}", p.memory)}};
}

json::value reservationObject(const ReservationPlan& p, const std::string& run,
                              const std::string& scheduler_name) {
  return json::object{
      {"apiVersion", "scheduling.koordinator.sh/v1alpha1"},
      {"kind", "Reservation"},
      {"metadata", {{"name", p.name}, {"labels", {{"bench", "sched"}, {"bench-run", run}}}}},
      {"spec",
       {{"template",
         {{"metadata", json::object{}},
          {"spec",
           {{"nodeName", p.node},
            {"schedulerName", scheduler_name},
            {"containers", json::array{{{"name", "pause"},
                                        {"image", "k8s.gcr.io/pause:3.2"},
                                        {"resources", {{"requests", room(p)}}}}}},
            {"tolerations", json::array{{{"operator", "Exists"}}}}}}}},
        {"owners", json::array{{{"labelSelector", {{"matchLabels", {{kOwnerLabel, p.owner}}}}}}}},
        // Its owners share it: an allocate-once reservation would be spent by the first.
        {"allocateOnce", false}}}};
}

json::value availableStatus(const ReservationPlan& p) {
  const std::string now = nowRfc3339();
  auto condition = [&](const char* type, const char* reason) {
    return json::object{{"type", type},
                        {"status", "True"},
                        {"reason", reason},
                        {"lastProbeTime", now},
                        {"lastTransitionTime", now}};
  };
  return json::object{{"status",
                       {{"phase", "Available"},
                        {"nodeName", p.node},
                        {"allocatable", room(p)},
                        {"conditions", json::array{condition("Scheduled", "Scheduled"),
                                                   condition("Ready", "Available")}}}}};
}

// How many of the run's reservations the apiserver lists Available on their planned node; the
// first misplaced one is reported once.
std::size_t countAvailable(RestClient& c, const std::string& run,
                           const std::unordered_map<std::string, std::string>& node_of,
                           std::string& misplaced) {
  ListOptions o;
  o.label_selector = "bench-run=" + run;
  auto r = c.listSync(kReservations, o);
  if (!r)
    return 0;
  std::size_t n = 0;
  for (const auto& item : r->at("items").as_array()) {
    const auto* status = item.as_object().if_contains("status");
    if (status == nullptr || !status->is_object())
      continue;
    const auto* phase = status->as_object().if_contains("phase");
    const auto* node = status->as_object().if_contains("nodeName");
    if (phase == nullptr || !phase->is_string() || phase->as_string() != "Available")
      continue;
    const std::string name(item.at("metadata").at("name").as_string());
    const std::string on =
        node != nullptr && node->is_string() ? std::string(node->as_string()) : std::string();
    auto it = node_of.find(name);
    if (it != node_of.end() && it->second == on)
      ++n;
    else if (misplaced.empty())
      misplaced = fmt::format("{} is Available on \"{}\", planned for {}", name, on,
                              it == node_of.end() ? "-" : it->second);
  }
  return n;
}

}  // namespace

koord::kube::Expected<double> makeAvailable(RestClient& c, const std::vector<ReservationPlan>& plan,
                                            const std::string& run,
                                            const std::string& scheduler_name, Availability how,
                                            int inflight, double timeout_s) {
  const auto t0 = Clock::now();
  const std::string& template_scheduler =
      how == Availability::kScheduled ? scheduler_name : std::string(kNobody);
  std::string err;
  int failed = runWindowed(
      static_cast<int>(plan.size()), inflight,
      [&](int i, std::function<void(std::string)> done) {
        c.create(kReservations, reservationObject(plan[i], run, template_scheduler),
                 [done = std::move(done)](ApiResult<json::value> r) {
                   done(r ? std::string() : r.error().message);
                 });
      },
      &err);
  if (failed > 0)
    return invalidArgument(
        fmt::format("{} of {} reservation creates failed; first: {}", failed, plan.size(), err));
  if (how == Availability::kWritten) {
    failed = runWindowed(
        static_cast<int>(plan.size()), inflight,
        [&](int i, std::function<void(std::string)> done) {
          ResourceRef one = kReservations;
          one.name = plan[i].name;
          one.subresource = "status";
          c.patch(one, PatchType::kMergePatch, availableStatus(plan[i]),
                  [done = std::move(done)](ApiResult<json::value> r) {
                    done(r ? std::string() : r.error().message);
                  });
        },
        &err);
    if (failed > 0)
      return invalidArgument(fmt::format("{} of {} reservation status writes failed; first: {}",
                                         failed, plan.size(), err));
  }
  std::unordered_map<std::string, std::string> node_of;
  for (const auto& p : plan)
    node_of.emplace(p.name, p.node);
  std::size_t available = 0;
  std::string misplaced;
  auto last_report = Clock::now();
  const bool all = pollUntil(timeout_s, [&] {
    available = countAvailable(c, run, node_of, misplaced);
    if (Clock::now() - last_report > std::chrono::seconds(10)) {
      say(fmt::format("{} of {} reservations Available", available, plan.size()));
      last_report = Clock::now();
    }
    return available == plan.size() || !misplaced.empty();
  });
  if (!misplaced.empty())
    return invalidArgument(misplaced);
  if (!all)
    return invalidArgument(fmt::format("only {} of {} reservations Available after {} s", available,
                                       plan.size(), timeout_s));
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

bool deleteReservations(RestClient& c, int window, std::size_t& deleted) {
  deleted = 0;
  for (int round = 0; round < 5; ++round) {
    ListOptions o;
    o.label_selector = "bench=sched";
    auto r = c.listSync(kReservations, o);
    if (!r)
      return isNotFound(r.error());  // no Reservation API: nothing to delete
    std::vector<std::string> names;
    for (const auto& item : r->at("items").as_array())
      names.emplace_back(item.at("metadata").at("name").as_string());
    if (names.empty())
      return true;
    deleted += names.size();
    std::string err;
    const int failed = runWindowed(
        static_cast<int>(names.size()), window,
        [&](int i, std::function<void(std::string)> done) {
          ResourceRef one = kReservations;
          one.name = names[static_cast<std::size_t>(i)];
          c.remove(one, DeleteOptions{}, [done = std::move(done)](ApiResult<json::value> res) {
            done(res || isNotFound(res.error()) ? std::string() : res.error().message);
          });
        },
        &err);
    if (failed > 0)
      say(fmt::format("{} reservation deletes failed; first: {}", failed, err));
  }
  say("bench reservations still listed after 5 rounds of deletes");
  return false;
}

}  // namespace koord::bench::scheduler_api
