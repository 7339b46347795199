// The Reservation plugin's entry in the plugin registry: Koordinator's name and ReservationArgs.
// The in-tree registry table (plugins/in_tree_registry.cpp) calls it.
#pragma once

namespace koord::roles::scheduler {
class PluginRegistry;
}

namespace koord::roles::scheduler::reservation {

void registerReservation(PluginRegistry& registry);

}  // namespace koord::roles::scheduler::reservation
