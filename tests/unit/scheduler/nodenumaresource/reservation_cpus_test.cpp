// A reservation's CPUs as its owner pods may take them: what is left of them after the owners
// bound inside, taken first by a Default reservation's owner (the rest from the node), and the
// only CPUs a Restricted reservation's owner may be bound to.
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "fixture.h"
#include "plugins/nodenumaresource/reservation_cpus.h"

namespace {

using koord::roles::scheduler::ReservationInfo;
using koord::roles::scheduler::ReservationMatches;
namespace apis = koord::apis;

struct Node {
  // One socket of eight SMT cores: core = cpu / 2.
  nnr::NodeCpuTopology topology = topologyOf(1, 1, 8, 2);
  nnr::NodeAllocation allocation;
  nnr::CpuSet reserved;

  void hold(const std::string& uid, std::string_view list) {
    nnr::PodAllocation a;
    a.uid = uid;
    a.cpus = cpus(list);
    REQUIRE(allocation.add(topology, std::move(a)));
  }
  nnr::NodeNumaView view() const {
    return nnr::NodeNumaView{
        topology, allocation, reserved, 1, {}, 1, nnr::NumaAllocateStrategy::kLeastAllocated};
  }
};

std::shared_ptr<const ReservationInfo> reservation(const std::string& uid,
                                                   std::vector<std::string> owners,
                                                   bool restricted) {
  auto object = std::make_shared<apis::Reservation>();
  object->uid = uid;
  if (restricted)
    object->allocate_policy = apis::ReservationAllocatePolicy::kRestricted;
  auto r = std::make_shared<ReservationInfo>();
  r->object = object;
  r->uid = uid;
  r->owner_uids = std::move(owners);
  return r;
}

nnr::AllocateRequest bound(int n) {
  nnr::AllocateRequest out;
  out.num_cpus_needed = n;
  out.request_cpu_bind = true;
  out.bind = {nnr::CpuBindPolicy::kFullPCPUs, false};
  out.requests.set(nnr::NumaResource::kCpu, n * 1000);
  out.original_requests = out.requests;
  return out;
}

}  // namespace

TEST_CASE("reservation cpus: what is left of a reservation after its owners",
          "[scheduler][nodenumaresource][reservation]") {
  Node node;
  node.hold("r1", "4-7");
  node.hold("owner", "4-5");
  node.hold("stranger", "0-1");
  const ReservationMatches::List matched{reservation("r1", {"owner", "gone"}, false),
                                         reservation("r2", {}, false)};
  const auto reserved = nnr::reservedCpusOf(matched, node.allocation);
  // r2 holds no CPUs here: it is left out.
  REQUIRE(reserved.size() == 1);
  CHECK(reserved[0].reservation == matched[0].get());
  CHECK(reserved[0].remained == cpus("6-7"));
  CHECK_FALSE(reserved[0].restricted);
}

TEST_CASE("reservation cpus: a Default reservation's CPUs come first, then the node's",
          "[scheduler][nodenumaresource][reservation]") {
  Node node;
  node.hold("r1", "4-7");
  node.hold("owner", "4-5");
  const ReservationMatches::List matched{reservation("r1", {"owner"}, false)};
  const auto reserved = nnr::reservedCpusOf(matched, node.allocation);
  REQUIRE(reserved.size() == 1);

  auto two = nnr::allocateInReservation(node.view(), bound(2), reserved[0]);
  REQUIRE(two.has_value());
  CHECK(two->cpus == cpus("6-7"));
  auto four = nnr::allocateInReservation(node.view(), bound(4), reserved[0]);
  REQUIRE(four.has_value());
  CHECK(four->cpus.size() == 4);
  CHECK(cpus("6-7").isSubsetOf(four->cpus));
  CHECK_FALSE(four->cpus.intersects(cpus("4-5")));
  // Without the reservation the same pod may not touch its CPUs at all.
  auto plain = nnr::allocatePod(node.view(), bound(4));
  REQUIRE(plain.has_value());
  CHECK_FALSE(plain->cpus.intersects(cpus("4-7")));
}

TEST_CASE("reservation cpus: a Restricted reservation's owner is bound within what is left",
          "[scheduler][nodenumaresource][reservation]") {
  Node node;
  node.hold("r1", "4-7");
  node.hold("owner", "4-5");
  const ReservationMatches::List matched{reservation("r1", {"owner"}, true)};
  const auto reserved = nnr::reservedCpusOf(matched, node.allocation);
  REQUIRE(reserved.size() == 1);
  CHECK(reserved[0].restricted);

  auto two = nnr::allocateInReservation(node.view(), bound(2), reserved[0]);
  REQUIRE(two.has_value());
  CHECK(two->cpus == cpus("6-7"));
  auto four = nnr::allocateInReservation(node.view(), bound(4), reserved[0]);
  REQUIRE_FALSE(four.has_value());
  CHECK(four.error().message == nnr::kErrNotEnoughCpus);
  // A node-reserved CPU inside the reservation stays off limits.
  node.reserved = cpus("7");
  auto one_core = nnr::allocateInReservation(node.view(), bound(1), reserved[0]);
  REQUIRE(one_core.has_value());
  CHECK(one_core->cpus == cpus("6"));
}
