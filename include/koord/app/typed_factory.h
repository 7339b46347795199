// Fills a plugin registry entry from a plugin's typed pieces: an args decoder answering
// Expected<ArgsT> (or a shared pointer to one) and a constructor taking std::shared_ptr<const
// ArgsT> and the role's handle. The scheduler's and descheduler's makePluginFactory use it.
#pragma once

#include <boost/json/fwd.hpp>

#include <concepts>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "koord/core/expected.h"

namespace koord::app {

namespace typed_factory_detail {

template <typename T>
struct IsExpected : std::false_type {};
template <typename T>
struct IsExpected<Expected<T>> : std::true_type {};

template <typename Decode>
auto callDecode(const Decode& decode, const boost::json::value* args,
                std::string_view api_version) {
  if constexpr (std::is_invocable_v<const Decode&, const boost::json::value*, std::string_view>)
    return decode(args, api_version);
  else
    return decode(args);
}

}  // namespace typed_factory_detail

/// `Factory` is an entry type with `decode_args(const boost::json::value*, std::string_view
/// api_version)` and `create(std::shared_ptr<const Factory::Args>, Factory::Handle&)` members
/// (std::function) answering Expected shared pointers to Factory::Args and Factory::Product.
/// `decode(args[, api_version])` answers Expected<ArgsT> or Expected<std::shared_ptr<const
/// ArgsT>>; `create(std::shared_ptr<const ArgsT>, Factory::Handle&)` answers a plugin pointer or
/// an Expected of one and gets null args when handed none (the plugin's defaults). Args of
/// another type (only a caller bypassing the decoder can pass them) are refused with
/// `wrong_args` as the message.
template <typename Factory, typename ArgsT, typename Decode, typename Create>
requires std::derived_from<ArgsT, typename Factory::Args> Factory
makeTypedFactory(Decode decode, Create create, std::string wrong_args) {
  using Args = typename Factory::Args;
  using Product = typename Factory::Product;
  using Handle = typename Factory::Handle;
  namespace d = typed_factory_detail;
  Factory f;
  f.decode_args = [decode = std::move(decode)](
                      const boost::json::value* args,
                      std::string_view api_version) -> Expected<std::shared_ptr<const Args>> {
    auto decoded = d::callDecode(decode, args, api_version);
    if (!decoded)
      return decoded.error();
    if constexpr (std::is_convertible_v<decltype(*decoded), std::shared_ptr<const ArgsT>>)
      return std::shared_ptr<const Args>(std::shared_ptr<const ArgsT>(std::move(*decoded)));
    else
      return std::shared_ptr<const Args>(std::make_shared<const ArgsT>(std::move(*decoded)));
  };
  f.create = [create = std::move(create), wrong_args = std::move(wrong_args)](
                 std::shared_ptr<const Args> args,
                 Handle& handle) -> Expected<std::shared_ptr<Product>> {
    // The registry hands create() what the same entry's decoder made; the check is for callers
    // that build args themselves (tests), so it costs nothing per cycle.
    auto typed = std::dynamic_pointer_cast<const ArgsT>(args);
    if (args && !typed)
      return invalidArgument(wrong_args);
    auto built = create(std::move(typed), handle);
    if constexpr (d::IsExpected<std::remove_cvref_t<decltype(built)>>::value) {
      if (!built)
        return built.error();
      return std::shared_ptr<Product>(std::move(*built));
    } else {
      return std::shared_ptr<Product>(std::move(built));
    }
  };
  return f;
}

}  // namespace koord::app
