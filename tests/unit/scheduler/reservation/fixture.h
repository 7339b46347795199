// Reservations, owner pods and nodes as the Reservation tables write them.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "framework/node_info.h"
#include "framework/reservation_info.h"
#include "koord/apis/reservation.h"

namespace reservation_test {

using namespace koord::roles::scheduler;
namespace apis = koord::apis;
namespace kube = koord::kube;

inline apis::ReservationOwner ownerByLabel(std::string key, std::string value) {
  apis::ReservationOwner o;
  kube::LabelSelector ls;
  ls.match_labels[key] = value;
  o.label_selector = ls;
  o.selector = kube::Selector::fromSet(ls.match_labels);
  return o;
}

inline apis::ReservationOwner ownerByObject(std::string ns, std::string name) {
  apis::ReservationOwner o;
  o.object = apis::ObjectReference{"", "", std::move(ns), std::move(name), ""};
  return o;
}

inline apis::ReservationOwner ownerByController(std::string kind, std::string name) {
  apis::ReservationOwner o;
  o.controller = apis::ReservationControllerReference{"", std::move(kind), std::move(name),
                                                      "", std::nullopt,    ""};
  return o;
}

/// An Available reservation of `milli_cpu` and `memory` on `node` (empty: pending), owned by
/// pods labelled app=web unless owners are given.
inline std::shared_ptr<apis::Reservation> makeReservation(std::string name, std::string node,
                                                          std::int64_t milli_cpu,
                                                          std::int64_t memory = 0) {
  auto r = std::make_shared<apis::Reservation>();
  r->name = name;
  r->uid = "uid-" + name;
  r->owners.push_back(ownerByLabel("app", "web"));
  r->node_name = std::move(node);
  r->phase =
      r->node_name.empty() ? apis::ReservationPhase::kPending : apis::ReservationPhase::kAvailable;
  if (milli_cpu > 0)
    r->allocatable["cpu"] = kube::Quantity::fromMilli(milli_cpu);
  if (memory > 0)
    r->allocatable["memory"] = kube::Quantity::fromInt(memory);
  return r;
}

inline ReservationState stateOf(std::shared_ptr<const apis::Reservation> r) {
  ReservationState s;
  s.reserve_pod = std::make_shared<const PodInfo>(reservePodOf(*r).value());
  s.object = std::move(r);
  return s;
}

inline std::shared_ptr<const ReservationInfo> infoOf(std::shared_ptr<const apis::Reservation> r) {
  return reservationInfoOf(stateOf(std::move(r)));
}

inline std::shared_ptr<PodInfo> pod(std::string name, std::int64_t milli_cpu,
                                    std::string node = "") {
  auto p = std::make_shared<PodInfo>();
  p->namespace_ = "default";
  p->name = name;
  p->uid = "uid-" + name;
  p->node_name = std::move(node);
  p->requests.milli_cpu = milli_cpu;
  p->non_zero_requests.milli_cpu = milli_cpu;
  p->non_zero_requests.memory = kDefaultMemoryRequest;
  return p;
}

inline std::shared_ptr<PodInfo> owner(std::string name, std::int64_t milli_cpu,
                                      std::string node = "") {
  auto p = pod(std::move(name), milli_cpu, std::move(node));
  p->labels["app"] = "web";
  return p;
}

/// `p` placed into reservation `r` (the reservation-allocated annotation read back).
inline std::shared_ptr<PodInfo> allocatedTo(std::shared_ptr<PodInfo> p,
                                            const apis::Reservation& r) {
  p->annotations[std::string(apis::kAnnotationReservationAllocated)] =
      apis::reservationAllocatedValue(r.name, r.uid);
  refreshReservationAnnotations(*p);
  return p;
}

inline std::shared_ptr<const Node> node(std::string name, std::int64_t milli_cpu) {
  auto n = std::make_shared<Node>();
  n->name = name;
  n->uid = name;
  n->allocatable.milli_cpu = milli_cpu;
  n->allocatable.memory = 64LL << 30;
  n->allocatable.allowed_pod_number = 110;
  return n;
}

}  // namespace reservation_test
