#include "plugins/reservation/register.h"

#include <fmt/format.h>

#include "framework/plugin_factory.h"
#include "plugins/reservation/args.h"
#include "plugins/reservation/reservation_plugin.h"

namespace koord::roles::scheduler::reservation {

void registerReservation(PluginRegistry& registry) {
  registry.add(
      std::string(kPluginName),
      makePluginFactory<ReservationPlugin, ReservationArgs>(
          decodeReservationArgs, fmt::format("{}: want args of type {}", kPluginName, kArgsKind)));
}

}  // namespace koord::roles::scheduler::reservation
