// The nodeutilization plugins' registry entries: args decoders and factories.
#include "plugins/nodeutilization/register.h"

#include <memory>
#include <string>

#include "plugins/nodeutilization/args.h"
#include "plugins/nodeutilization/node_utilization.h"

namespace koord::roles::descheduler {

namespace {

// Absent args reach the factory only when the registry skipped decoding; the decoder's answer
// for them (thresholds are required) is the error then.
template <typename ArgsT, typename PluginT, typename Decode>
PluginFactory factory(Decode decode, std::string_view name) {
  return makePluginFactory<ArgsT>(
      [decode](const boost::json::value* args) { return decode(args); },
      [decode](std::shared_ptr<const ArgsT> args,
               FrameworkHandle& handle) -> Expected<std::shared_ptr<Plugin>> {
        if (!args) {
          auto d = decode(nullptr);
          if (!d)
            return d.error();
          args = std::make_shared<const ArgsT>(std::move(*d));
        }
        return std::shared_ptr<Plugin>(std::make_shared<PluginT>(std::move(args), handle));
      },
      std::string(name) + ": args are not " + std::string(name) + "Args");
}

}  // namespace

void registerLowNodeUtilization(PluginRegistry& r) {
  using namespace nodeutilization;
  r.add(std::string(kLowNodeUtilizationName),
        factory<LowNodeUtilizationArgs, LowNodeUtilization>(decodeLowNodeUtilizationArgs,
                                                            kLowNodeUtilizationName));
}

void registerHighNodeUtilization(PluginRegistry& r) {
  using namespace nodeutilization;
  r.add(std::string(kHighNodeUtilizationName),
        factory<HighNodeUtilizationArgs, HighNodeUtilization>(decodeHighNodeUtilizationArgs,
                                                              kHighNodeUtilizationName));
}

}  // namespace koord::roles::descheduler
