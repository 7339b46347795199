// The typed informer behind a plugin's ObjectDeclaration: a plugin's register.cpp writes
// declareInformer<T>({key, resource, projection}) and the scheduler's informer set does the rest.
// Included by registration files only: it pulls in the informer and discovery headers.
#pragma once

#include <fmt/format.h>
#include <boost/json/value.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "declared_object.h"
#include "koord/core/log.h"
#include "koord/kube/discovery.h"
#include "koord/kube/informer.h"
#include "koord/kube/object_meta.h"
#include "node_info.h"
#include "object_source.h"

namespace koord::roles::scheduler {

template <typename T>
struct InformerSpec {
  /// ObjectDeclaration::key: what plugins pass to ClusterView::source<T>.
  std::string key;
  /// The collection to list and watch (cluster-wide unless namespace_ is set).
  kube::ResourceRef resource;
  kube::Projection<T> project;
  /// Non-empty: resource.version is found by discovery, the first of these the API server
  /// serves (most preferred first); with none served the source stays empty and counts as
  /// synced. Empty: resource.version as given.
  std::vector<std::string> versions = {};
  /// Set: each object (named as its node) is kept on that node's NodeInfo in this member, so
  /// Filter and Score read a pointer rather than look it up.
  std::shared_ptr<const T> NodeInfo::*node_slot = nullptr;
  /// Called with the informer once it exists, before it starts: the owner adds its handlers.
  std::function<void(kube::Informer<T>&)> on_created = {};
  /// A namespaced kind watched only in the namespace a plugin narrows it to
  /// (ObjectSource::narrowToNamespace) before start; when none does, nothing is watched and the
  /// source stays empty (synced).
  bool namespace_from_plugins = false;
};

template <typename T>
class DeclaredInformer final : public ObjectInformer, public ObjectSource<T> {
 public:
  DeclaredInformer(kube::RestClient& client, boost::asio::io_context& io, InformerSpec<T> spec)
      : client_(client), io_(io), spec_(std::move(spec)) {
    if (spec_.versions.empty()) {
      // A narrowed kind's informer is made at start(), once its namespace is known.
      if (!spec_.namespace_from_plugins) {
        owned_ = makeInformer(spec_.resource);
        informer_.store(owned_.get());
      }
      return;
    }
    discovery_.emplace(
        client, io, spec_.key + " API",
        [group = spec_.resource.group, resource = spec_.resource.resource,
         versions = spec_.versions](kube::RestClient& c, kube::VersionCallback done) {
          kube::servedVersionOf(c, group, resource, versions, std::move(done));
        });
  }
  /// Stops the discovery first: its answer would create the informer.
  ~DeclaredInformer() override {
    if (discovery_)
      discovery_->stop();
  }

  const AnyObjectSource& source() const override { return *this; }
  std::shared_ptr<const T> get(std::string_view name) const override {
    const kube::Informer<T>* informer = informer_.load(std::memory_order_acquire);
    return informer ? informer->store().get(std::string(name)) : nullptr;
  }

  void connect(NodeObjectSink& sink) override { sink_ = &sink; }

  void subscribe(ObjectHandlers<T> handlers) const override {
    subscribers_.push_back(std::move(handlers));
  }

  /// Every object held now; empty while not served or not yet discovered.
  std::vector<std::shared_ptr<const T>> list() const override {
    const kube::Informer<T>* informer = informer_.load(std::memory_order_acquire);
    return informer ? informer->store().list() : std::vector<std::shared_ptr<const T>>{};
  }

  bool narrowToNamespace(std::string_view ns) const override {
    std::lock_guard lock(mu_);
    if (narrowed_)
      return *narrowed_ == ns;
    narrowed_ = std::string(ns);
    return true;
  }

  void start() override {
    if (!discovery_) {
      if (spec_.namespace_from_plugins) {
        std::lock_guard lock(mu_);
        if (!narrowed_)
          return;  // no plugin reads the kind
        kube::ResourceRef ref = spec_.resource;
        ref.namespace_ = *narrowed_;
        KOORD_LOG_INFO("scheduler: watching {} in namespace {}", spec_.key, ref.namespace_);
        owned_ = makeInformer(std::move(ref));
        informer_.store(owned_.get(), std::memory_order_release);
      }
      addHandlers(*owned_);
      owned_->start();
      return;
    }
    discovery_->start([this](std::optional<std::string> v) { onVersion(std::move(v)); });
  }

  void stop() override {
    // Before taking mu_: an answer under way holds the discovery's lock and wants mu_.
    if (discovery_)
      discovery_->stop();
    std::lock_guard lock(mu_);
    stopped_ = true;
    if (owned_)
      owned_->stop();
  }

  bool waitForSync(std::chrono::milliseconds timeout) const override {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    // Discovery answers once; polling for it keeps a second condition variable out of the way.
    while (discovery_ && !answered_.load()) {
      if (std::chrono::steady_clock::now() >= deadline)
        return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    const kube::Informer<T>* informer = informer_.load(std::memory_order_acquire);
    if (informer == nullptr)
      return true;  // not served
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    return informer->waitForSync(std::max(left, std::chrono::milliseconds(0)));
  }

 private:
  std::unique_ptr<kube::Informer<T>> makeInformer(kube::ResourceRef ref) {
    return std::make_unique<kube::Informer<T>>(client_, io_, std::move(ref), spec_.project);
  }

  void addHandlers(kube::Informer<T>& informer) {
    if (spec_.on_created)
      spec_.on_created(informer);
    for (const auto& h : subscribers_) {
      // The store's own copy, just put under `key`, so that plugins may keep it.
      informer.addHandlers({
          [h, &informer](const std::string& key, const T&) {
            if (auto ptr = informer.store().get(key); ptr && h.on_add)
              h.on_add(ptr);
          },
          [h, &informer](const std::string& key, const T& old_object, const T&) {
            if (auto ptr = informer.store().get(key); ptr && h.on_update)
              h.on_update(old_object, ptr);
          },
          [h](const std::string&, const T& object) {
            if (h.on_delete)
              h.on_delete(object);
          },
      });
    }
    if (sink_ == nullptr || spec_.node_slot == nullptr)
      return;
    const auto slot = spec_.node_slot;
    auto attach = [this, &informer, slot](const std::string& key, bool added) {
      // The store's own copy, just put under `key`: the NodeInfo shares it.
      if (auto ptr = informer.store().get(key))
        sink_->onNodeObject(
            spec_.key, key, [slot, ptr](NodeInfo& info) { info.*slot = ptr; }, added);
    };
    informer.addHandlers({
        [attach](const std::string& key, const T&) { attach(key, true); },
        [attach](const std::string& key, const T&, const T&) { attach(key, false); },
        [this, slot](const std::string& key, const T&) {
          sink_->onNodeObjectDelete(spec_.key, key,
                                    [slot](NodeInfo& info) { info.*slot = nullptr; });
        },
    });
  }

  // On the io_context, once.
  void onVersion(std::optional<std::string> version) {
    std::lock_guard lock(mu_);
    if (stopped_)
      return;
    if (!version) {
      KOORD_LOG_WARNING("scheduler: the API server serves no {}: its source stays empty",
                        spec_.key);
    } else {
      KOORD_LOG_INFO("scheduler: watching {} in {}", spec_.key, *version);
      kube::ResourceRef ref = spec_.resource;
      ref.version = version->substr(version->find('/') + 1);
      if (spec_.namespace_from_plugins) {
        if (!narrowed_) {
          answered_ = true;
          return;
        }
        ref.namespace_ = *narrowed_;
      }
      owned_ = makeInformer(std::move(ref));
      addHandlers(*owned_);
      owned_->start();
      informer_.store(owned_.get(), std::memory_order_release);
    }
    answered_ = true;
  }

  kube::RestClient& client_;
  boost::asio::io_context& io_;
  InformerSpec<T> spec_;
  NodeObjectSink* sink_ = nullptr;
  /// Filled before start() (plugins subscribe when built), read once the informer exists.
  mutable std::vector<ObjectHandlers<T>> subscribers_;
  std::optional<kube::DiscoveryRetry> discovery_;
  mutable std::mutex mu_;
  bool stopped_ = false;                         // under mu_
  mutable std::optional<std::string> narrowed_;  // under mu_
  std::unique_ptr<kube::Informer<T>> owned_;     // under mu_ once discovery runs; set once
  std::atomic<const kube::Informer<T>*> informer_{nullptr};
  std::atomic<bool> answered_{false};
};

/// A declared kind over a fixed list of objects (ObjectDeclaration::make_fixed): decoded once
/// with the informer's projection, stored under the informer's keys ("namespace/name" or
/// "name"), handed to subscribers and node slots at start(), never changed.
template <typename T>
class FixedObjectSource final : public ObjectInformer, public ObjectSource<T> {
 public:
  FixedObjectSource(const InformerSpec<T>& spec, const std::vector<boost::json::value>& items,
                    std::vector<std::string>& errors)
      : key_(spec.key), node_slot_(spec.node_slot) {
    for (const auto& item : items) {
      kube::ObjectMeta meta;
      auto read =
          item.is_object()
              ? kube::decodeObjectMeta(
                    item.get_object(),
                    {kube::ObjectMetaFields::kNamespace | kube::ObjectMetaFields::kName}, meta)
              : kube::Expected<void>(kube::makeKubeError("not an object"));
      if (!read || meta.name.empty()) {
        errors.push_back(
            fmt::format("{}: {}", key_, read ? "no metadata.name" : read.error().message));
        continue;
      }
      std::string key = meta.namespace_.empty() ? meta.name : meta.namespace_ + "/" + meta.name;
      auto projected = spec.project(item);
      if (!projected) {
        errors.push_back(fmt::format("{} {}: {}", key_, key, projected.error().message));
        continue;
      }
      objects_.insert_or_assign(std::move(key), std::make_shared<const T>(std::move(*projected)));
    }
  }

  const AnyObjectSource& source() const override { return *this; }
  std::shared_ptr<const T> get(std::string_view name) const override {
    auto it = objects_.find(std::string(name));
    return it == objects_.end() || !inNamespace(it->first) ? nullptr : it->second;
  }
  std::vector<std::shared_ptr<const T>> list() const override {
    std::vector<std::shared_ptr<const T>> out;
    for (const auto& [key, object] : objects_) {
      if (inNamespace(key))
        out.push_back(object);
    }
    return out;
  }
  void subscribe(ObjectHandlers<T> handlers) const override {
    subscribers_.push_back(std::move(handlers));
  }
  bool narrowToNamespace(std::string_view ns) const override {
    if (narrowed_)
      return *narrowed_ == ns;
    narrowed_ = std::string(ns);
    return true;
  }
  void connect(NodeObjectSink& sink) override { sink_ = &sink; }
  void start() override {
    // Not a structured binding: clang before 16 cannot capture one in the lambda below.
    for (const auto& entry : objects_) {
      const std::string& key = entry.first;
      const std::shared_ptr<const T> object = entry.second;
      if (!inNamespace(key))
        continue;
      for (const auto& h : subscribers_) {
        if (h.on_add)
          h.on_add(object);
      }
      if (sink_ != nullptr && node_slot_ != nullptr) {
        sink_->onNodeObject(
            key_, key, [slot = node_slot_, object](NodeInfo& info) { info.*slot = object; }, true);
      }
    }
  }
  void stop() override {}
  bool waitForSync(std::chrono::milliseconds) const override { return true; }

 private:
  bool inNamespace(const std::string& key) const {
    return !narrowed_ || key.compare(0, narrowed_->size() + 1, *narrowed_ + "/") == 0;
  }

  std::string key_;
  std::shared_ptr<const T> NodeInfo::*node_slot_ = nullptr;
  std::map<std::string, std::shared_ptr<const T>> objects_;
  mutable std::vector<ObjectHandlers<T>> subscribers_;
  mutable std::optional<std::string> narrowed_;
  NodeObjectSink* sink_ = nullptr;
};

/// The declaration a plugin's registration adds to its PluginFactory::objects.
template <typename T>
ObjectDeclaration declareInformer(InformerSpec<T> spec) {
  ObjectDeclaration d;
  d.key = spec.key;
  d.group = spec.resource.group;
  d.resource = spec.resource.resource;
  d.make_fixed = [spec](const std::vector<boost::json::value>& items,
                        std::vector<std::string>& errors) -> std::unique_ptr<ObjectInformer> {
    return std::make_unique<FixedObjectSource<T>>(spec, items, errors);
  };
  d.make_informer = [spec = std::move(spec)](
                        kube::RestClient& client,
                        boost::asio::io_context& io) -> std::unique_ptr<ObjectInformer> {
    return std::make_unique<DeclaredInformer<T>>(client, io, spec);
  };
  return d;
}

}  // namespace koord::roles::scheduler
