// SchedulerApi over the real cluster: objects from the scheduler's informers, nominations from
// its queue, and bindings, victim deletions, Events and pod status patches through the REST client.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "scheduler_api.h"

namespace boost::asio {
class io_context;
}
namespace koord::kube {
class RestClient;
class EventRecorder;
}  // namespace koord::kube

namespace koord::roles::scheduler {

struct SchedulerInformers;
class SchedulingQueue;

class KubeSchedulerApi final : public SchedulerApi {
 public:
  /// `host` names this replica in Events' source. Everything passed must outlive this.
  KubeSchedulerApi(kube::RestClient& client, boost::asio::io_context& io,
                   const SchedulerInformers& informers, std::string host);
  ~KubeSchedulerApi() override;

  /// The queue whose nominations nominatedPodsForNode answers (set once it exists).
  void setQueue(const SchedulingQueue* queue) { queue_ = queue; }
  /// Forgets what was last written for a pod that left the queue (bound or deleted).
  void forgetPod(const std::string& uid);

  // ClusterView
  const AnyObjectSource* objectSource(std::string_view key) const override;
  std::vector<DisruptionBudget> disruptionBudgets(std::string_view namespace_) const override;
  std::vector<std::shared_ptr<const PodInfo>> nominatedPodsForNode(
      std::string_view node) const override;
  bool anyNominatedPods() const override;
  void bindPod(std::shared_ptr<const PodInfo> pod, const std::string& node,
               ApiCallback done) const override;
  kube::Expected<void> deletePod(const PodInfo& pod) const override;
  kube::Expected<void> evictPod(const PodInfo& pod) const override;
  kube::Expected<void> clearNominatedNodeName(const PodInfo& pod) const override;
  void patchPod(std::shared_ptr<const PodInfo> pod, boost::json::value patch,
                ApiCallback done) const override;
  void mergePatch(const kube::ResourceRef& ref, boost::json::value patch,
                  ApiCallback done) const override;
  bool runAfter(std::chrono::milliseconds delay, std::function<void()> fn) const override;

  // SchedulerApi
  std::shared_ptr<const PodInfo> currentPod(const std::string& key) const override;
  kube::Expected<boost::json::value> getPod(const PodInfo& pod) const override;
  void reportScheduled(const PodInfo& pod, const std::string& node,
                       const std::string& profile) override;
  void reportFailure(const PodInfo& pod, const std::string& profile, std::string_view reason,
                     const std::string& message, const std::string& nominated_node) override;
  std::shared_ptr<const ReservationState> currentReservation(
      const std::string& name) const override;
  std::vector<std::shared_ptr<const ReservationState>> reservations() const override;
  void patchReservation(const apis::Reservation& r, boost::json::value patch,
                        ApiCallback done) override;
  void patchReservationStatus(const apis::Reservation& r, boost::json::value patch,
                              ApiCallback done) override;
  void deleteReservation(const apis::Reservation& r, ApiCallback done) override;
  void reservationEvent(const apis::Reservation& r, const std::string& component, bool warning,
                        std::string_view reason, const std::string& message) override;

 private:
  kube::EventRecorder& recorderFor(const std::string& profile);

  kube::RestClient& client_;
  boost::asio::io_context& io_;
  const SchedulerInformers& informers_;
  const SchedulingQueue* queue_ = nullptr;
  const std::string host_;
  std::mutex mu_;
  /// Events come from the profile's schedulerName, as upstream's per-profile recorders.
  std::map<std::string, std::unique_ptr<kube::EventRecorder>> recorders_;
  /// The PodScheduled=False condition last written per pod UID (reason, message, nomination).
  std::unordered_map<std::string, std::string> last_condition_;
};

/// The strategic-merge patch for pods/status that records a failed attempt.
boost::json::value podScheduledFalsePatch(std::string_view reason, const std::string& message,
                                          const std::string& nominated_node,
                                          std::chrono::system_clock::time_point now);
/// The Binding object POSTed to pods/{name}/binding.
boost::json::value bindingBody(const PodInfo& pod, const std::string& node);

}  // namespace koord::roles::scheduler
