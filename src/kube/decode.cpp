#include "koord/kube/decode.h"
#include "koord/kube/json_fields.h"

#include <boost/json.hpp>

#include <string>

#include <fmt/format.h>

namespace koord::kube {
namespace {

using namespace koord::kube::jsonfields;

namespace json = boost::json;

const json::object* asObject(const json::value& v) {
  return v.if_object();
}

// Decodes each element of a JSON array with decode(element, "path[i]"): null is an empty list,
// anything else that is not an array is a type error, and the first bad element stops the walk
// with its own path in the error.
template <typename T, typename Fn>
Expected<std::vector<T>> decodeEach(const json::value& v, std::string_view path, Fn&& decode) {
  std::vector<T> out;
  if (v.is_null())
    return out;
  if (!v.is_array())
    return typeError(path, "array", v);
  const json::array& items = v.get_array();
  out.reserve(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    Expected<T> item = decode(items[i], indexPath(path, i));
    if (!item)
      return item.error();
    out.push_back(std::move(*item));
  }
  return out;
}

// decodeEach for arrays whose elements must be objects.
template <typename T, typename Fn>
Expected<std::vector<T>> decodeEachObject(const json::value& v, std::string_view path,
                                          Fn&& decode) {
  return decodeEach<T>(v, path, [&decode](const json::value& e, const std::string& ip) {
    const json::object* o = asObject(e);
    return o == nullptr ? Expected<T>(typeError(ip, "object", e)) : decode(*o, ip);
  });
}

Expected<std::vector<std::string>> getStringList(const json::object& o, std::string_view name,
                                                 std::string_view path) {
  const json::value* v = field(o, name);
  if (v == nullptr)
    return std::vector<std::string>();
  return decodeEach<std::string>(
      *v, childPath(path, name), [](const json::value& e, const std::string& ip) {
        return e.is_string() ? Expected<std::string>(std::string(e.get_string()))
                             : Expected<std::string>(typeError(ip, "string", e));
      });
}

Expected<NodeSelectorOperator> nodeSelectorOperator(std::string_view s, std::string_view path) {
  if (s == "In")
    return NodeSelectorOperator::kIn;
  if (s == "NotIn")
    return NodeSelectorOperator::kNotIn;
  if (s == "Exists")
    return NodeSelectorOperator::kExists;
  if (s == "DoesNotExist")
    return NodeSelectorOperator::kDoesNotExist;
  if (s == "Gt")
    return NodeSelectorOperator::kGt;
  if (s == "Lt")
    return NodeSelectorOperator::kLt;
  return makeKubeError(fmt::format(
      "{}: unsupported value \"{}\": supported values: \"DoesNotExist\", \"Exists\", \"Gt\", "
      "\"In\", \"Lt\", \"NotIn\"",
      path, s));
}

Expected<TaintEffect> taintEffect(std::string_view s, std::string_view path, bool allow_empty) {
  if (s.empty() && allow_empty)
    return TaintEffect::kAll;
  if (s == "NoSchedule")
    return TaintEffect::kNoSchedule;
  if (s == "PreferNoSchedule")
    return TaintEffect::kPreferNoSchedule;
  if (s == "NoExecute")
    return TaintEffect::kNoExecute;
  return makeKubeError(
      fmt::format("{}: unsupported value \"{}\": supported values: \"NoExecute\", \"NoSchedule\", "
                  "\"PreferNoSchedule\"",
                  path, s));
}

Expected<std::vector<NodeSelectorRequirement>> decodeRequirements(const json::object& o,
                                                                  std::string_view name,
                                                                  std::string_view path) {
  const json::value* v = field(o, name);
  if (v == nullptr)
    return std::vector<NodeSelectorRequirement>();
  return decodeEachObject<NodeSelectorRequirement>(
      *v, childPath(path, name),
      [](const json::object& r, const std::string& ip) -> Expected<NodeSelectorRequirement> {
        NodeSelectorRequirement req;
        auto key = stringField(r, "key", ip);
        if (!key)
          return key.error();
        req.key = std::move(*key);
        auto op = stringField(r, "operator", ip);
        if (!op)
          return op.error();
        auto parsed = nodeSelectorOperator(*op, childPath(ip, "operator"));
        if (!parsed)
          return parsed.error();
        req.op = *parsed;
        auto values = getStringList(r, "values", ip);
        if (!values)
          return values.error();
        req.values = std::move(*values);
        return req;
      });
}

Expected<NodeSelectorTerm> decodeTerm(const json::value& v, std::string_view path) {
  NodeSelectorTerm term;
  if (v.is_null())
    return term;
  const json::object* o = asObject(v);
  if (o == nullptr)
    return typeError(path, "object", v);
  auto exprs = decodeRequirements(*o, "matchExpressions", path);
  if (!exprs)
    return exprs.error();
  term.match_expressions = std::move(*exprs);
  auto fields = decodeRequirements(*o, "matchFields", path);
  if (!fields)
    return fields.error();
  term.match_fields = std::move(*fields);
  return term;
}

}  // namespace

Expected<Labels> decodeStringMap(const json::value& v, std::string_view path) {
  Labels out;
  if (v.is_null())
    return out;
  const json::object* o = asObject(v);
  if (o == nullptr)
    return typeError(path, "object", v);
  for (const auto& kv : *o) {
    if (!kv.value().is_string()) {
      return typeError(fmt::format("{}[{}]", path, std::string_view(kv.key())), "string",
                       kv.value());
    }
    out.emplace(std::string(kv.key()), std::string(kv.value().get_string()));
  }
  return out;
}

Expected<Labels> decodeStringMapEntries(const json::value& v,
                                        std::span<const std::string_view> keys,
                                        std::string_view path) {
  Labels out;
  if (v.is_null())
    return out;
  const json::object* o = asObject(v);
  if (o == nullptr)
    return typeError(path, "object", v);
  for (std::string_view key : keys) {
    auto it = o->find(key);
    if (it == o->end() || it->value().is_null())
      continue;
    if (!it->value().is_string())
      return typeError(fmt::format("{}[{}]", path, key), "string", it->value());
    out.emplace(std::string(key), std::string(it->value().get_string()));
  }
  return out;
}

Expected<Quantity> decodeQuantity(const json::value& v, std::string_view path) {
  std::string text;
  switch (v.kind()) {
    case json::kind::null:
      return Quantity{};
    case json::kind::string:
      text = std::string(v.get_string());
      break;
    case json::kind::int64:
      text = std::to_string(v.get_int64());
      break;
    case json::kind::uint64:
      text = std::to_string(v.get_uint64());
      break;
    case json::kind::double_:
      // The JSON text itself is gone; fmt's shortest round-trip form gives back "0.25" for 0.25
      // (not Boost's "2.5E-1"), so the format matches what Kubernetes reads from the raw bytes.
      text = fmt::format("{}", v.get_double());
      break;
    default:
      return typeError(path, "quantity (string or number)", v);
  }
  // Kubernetes trims surrounding whitespace from a JSON quantity (TestJSONWhitespace).
  auto begin = text.find_first_not_of(" \t\r\n");
  auto end = text.find_last_not_of(" \t\r\n");
  std::string_view trimmed = begin == std::string::npos
                                 ? std::string_view{}
                                 : std::string_view(text).substr(begin, end - begin + 1);
  auto q = Quantity::parse(trimmed);
  if (!q)
    return makeKubeError(fmt::format("{}: {}", path, q.error().message));
  return q;
}

Expected<ResourceList> decodeResourceList(const json::value& v, std::string_view path) {
  ResourceList out;
  if (v.is_null())
    return out;
  const json::object* o = asObject(v);
  if (o == nullptr)
    return typeError(path, "object", v);
  for (const auto& kv : *o) {
    auto q = decodeQuantity(kv.value(), fmt::format("{}[{}]", path, std::string_view(kv.key())));
    if (!q)
      return q.error();
    out.emplace(std::string(kv.key()), *q);
  }
  return out;
}

Expected<LabelSelector> decodeLabelSelector(const json::value& v, std::string_view path) {
  const json::object* o = asObject(v);
  if (o == nullptr)
    return typeError(path, "object", v);
  LabelSelector out;
  if (const json::value* ml = field(*o, "matchLabels")) {
    auto labels = decodeStringMap(*ml, childPath(path, "matchLabels"));
    if (!labels)
      return labels.error();
    out.match_labels = std::move(*labels);
  }
  if (const json::value* me = field(*o, "matchExpressions")) {
    auto reqs = decodeEachObject<LabelSelectorRequirement>(
        *me, childPath(path, "matchExpressions"),
        [](const json::object& r, const std::string& ip) -> Expected<LabelSelectorRequirement> {
          LabelSelectorRequirement req;
          auto key = stringField(r, "key", ip);
          if (!key)
            return key.error();
          req.key = std::move(*key);
          auto op = stringField(r, "operator", ip);
          if (!op)
            return op.error();
          if (*op == "In") {
            req.op = LabelSelectorOperator::kIn;
          } else if (*op == "NotIn") {
            req.op = LabelSelectorOperator::kNotIn;
          } else if (*op == "Exists") {
            req.op = LabelSelectorOperator::kExists;
          } else if (*op == "DoesNotExist") {
            req.op = LabelSelectorOperator::kDoesNotExist;
          } else {
            return makeKubeError(fmt::format(
                "{}.operator: unsupported value \"{}\": supported values: \"DoesNotExist\", "
                "\"Exists\", \"In\", \"NotIn\"",
                ip, *op));
          }
          auto values = getStringList(r, "values", ip);
          if (!values)
            return values.error();
          req.values = std::move(*values);
          return req;
        });
    if (!reqs)
      return reqs.error();
    out.match_expressions = std::move(*reqs);
  }
  return out;
}

Expected<NodeSelector> decodeNodeSelector(const json::value& v, std::string_view path) {
  const json::object* o = asObject(v);
  if (o == nullptr)
    return typeError(path, "object", v);
  NodeSelector out;
  const json::value* terms = field(*o, "nodeSelectorTerms");
  if (terms == nullptr)
    return out;
  auto decoded = decodeEach<NodeSelectorTerm>(
      *terms, childPath(path, "nodeSelectorTerms"),
      [](const json::value& e, const std::string& ip) { return decodeTerm(e, ip); });
  if (!decoded)
    return decoded.error();
  out.node_selector_terms = std::move(*decoded);
  return out;
}

Expected<NodeAffinity> decodeNodeAffinity(const json::value& v, std::string_view path) {
  NodeAffinity out;
  if (v.is_null())
    return out;
  const json::object* o = asObject(v);
  if (o == nullptr)
    return typeError(path, "object", v);
  if (const json::value* req = field(*o, "requiredDuringSchedulingIgnoredDuringExecution")) {
    auto selector =
        decodeNodeSelector(*req, childPath(path, "requiredDuringSchedulingIgnoredDuringExecution"));
    if (!selector)
      return selector.error();
    out.required = std::move(*selector);
  }
  if (const json::value* pref = field(*o, "preferredDuringSchedulingIgnoredDuringExecution")) {
    auto terms = decodeEachObject<PreferredSchedulingTerm>(
        *pref, childPath(path, "preferredDuringSchedulingIgnoredDuringExecution"),
        [](const json::object& t, const std::string& ip) -> Expected<PreferredSchedulingTerm> {
          PreferredSchedulingTerm term;
          if (const json::value* w = field(t, "weight")) {
            auto weight = int32Value(*w, childPath(ip, "weight"));
            if (!weight)
              return weight.error();
            term.weight = *weight;
          }
          if (const json::value* preference = field(t, "preference")) {
            auto decoded = decodeTerm(*preference, childPath(ip, "preference"));
            if (!decoded)
              return decoded.error();
            term.preference = std::move(*decoded);
          }
          return term;
        });
    if (!terms)
      return terms.error();
    out.preferred = std::move(*terms);
  }
  return out;
}

Expected<std::vector<Taint>> decodeTaints(const json::value& v, std::string_view path) {
  return decodeEachObject<Taint>(
      v, path, [](const json::object& o, const std::string& ip) -> Expected<Taint> {
        Taint taint;
        auto key = stringField(o, "key", ip);
        if (!key)
          return key.error();
        taint.key = std::move(*key);
        auto value = stringField(o, "value", ip);
        if (!value)
          return value.error();
        taint.value = std::move(*value);
        auto effect = stringField(o, "effect", ip);
        if (!effect)
          return effect.error();
        auto parsed = taintEffect(*effect, childPath(ip, "effect"), /*allow_empty=*/false);
        if (!parsed)
          return parsed.error();
        taint.effect = *parsed;
        return taint;
      });
}

Expected<std::vector<Toleration>> decodeTolerations(const json::value& v, std::string_view path) {
  return decodeEachObject<Toleration>(
      v, path, [](const json::object& o, const std::string& ip) -> Expected<Toleration> {
        Toleration t;
        auto key = stringField(o, "key", ip);
        if (!key)
          return key.error();
        t.key = std::move(*key);
        auto op = stringField(o, "operator", ip);
        if (!op)
          return op.error();
        if (op->empty() || *op == "Equal") {
          t.op = TolerationOperator::kEqual;
        } else if (*op == "Exists") {
          t.op = TolerationOperator::kExists;
        } else {
          return makeKubeError(fmt::format(
              "{}.operator: unsupported value \"{}\": supported values: \"Equal\", \"Exists\"", ip,
              *op));
        }
        auto value = stringField(o, "value", ip);
        if (!value)
          return value.error();
        t.value = std::move(*value);
        auto effect = stringField(o, "effect", ip);
        if (!effect)
          return effect.error();
        auto parsed = taintEffect(*effect, childPath(ip, "effect"), /*allow_empty=*/true);
        if (!parsed)
          return parsed.error();
        t.effect = *parsed;
        if (const json::value* secs = field(o, "tolerationSeconds")) {
          auto s = intValue(*secs, childPath(ip, "tolerationSeconds"));
          if (!s)
            return s.error();
          t.toleration_seconds = *s;
        }
        return t;
      });
}

}  // namespace koord::kube
