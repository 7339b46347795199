// RemoveDuplicates' registry entry: its args decoder and its factory.
#include "plugins/removeduplicates/register.h"

#include <memory>
#include <string>

#include "plugins/removeduplicates/args.h"
#include "plugins/removeduplicates/duplicates.h"

namespace koord::roles::descheduler {

void registerRemoveDuplicates(PluginRegistry& r) {
  using removeduplicates::RemoveDuplicatesArgs;
  r.add(std::string(removeduplicates::kRemoveDuplicatesName),
        makePluginFactory<RemoveDuplicatesArgs>(
            [](const boost::json::value* args) {
              return removeduplicates::decodeRemoveDuplicatesArgs(args);
            },
            [](std::shared_ptr<const RemoveDuplicatesArgs> args, FrameworkHandle& handle) {
              if (!args)
                args = std::make_shared<const RemoveDuplicatesArgs>();
              return removeduplicates::makeRemoveDuplicates(std::move(args), handle);
            },
            "RemoveDuplicates: args are not RemoveDuplicatesArgs"));
}

}  // namespace koord::roles::descheduler
