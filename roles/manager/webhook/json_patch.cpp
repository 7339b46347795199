#include "webhook/json_patch.h"

#include <boost/json.hpp>

#include <charconv>
#include <vector>

#include <fmt/format.h>

namespace koord::manager::webhook {
namespace {

namespace json = boost::json;

void addOp(json::array& out, std::string_view op, const std::string& path,
           const json::value* value) {
  json::object o;
  o["op"] = op;
  o["path"] = path;
  if (value != nullptr)
    o["value"] = *value;
  out.emplace_back(std::move(o));
}

// Depth is bounded by the parser's max_depth on the way in, so recursion is safe here.
void diff(const json::value& from, const json::value& to, const std::string& path,
          json::array& out) {
  if (from.is_object() && to.is_object()) {
    const json::object& a = from.get_object();
    const json::object& b = to.get_object();
    for (const auto& kv : a) {
      if (!b.contains(kv.key()))
        addOp(out, "remove", path + "/" + escapeJsonPointerToken(kv.key()), nullptr);
    }
    for (const auto& kv : b) {
      std::string child = path + "/" + escapeJsonPointerToken(kv.key());
      if (const json::value* old = a.if_contains(kv.key()))
        diff(*old, kv.value(), child, out);
      else
        addOp(out, "add", child, &kv.value());
    }
    return;
  }
  if (from.is_array() && to.is_array()) {
    const json::array& a = from.get_array();
    const json::array& b = to.get_array();
    std::size_t common = std::min(a.size(), b.size());
    bool prefix_equal = true;
    if (a.size() != b.size()) {
      for (std::size_t i = 0; i < common && prefix_equal; ++i)
        prefix_equal = a[i] == b[i];
    }
    if (a.size() == b.size() || prefix_equal) {
      for (std::size_t i = 0; i < common; ++i)
        diff(a[i], b[i], fmt::format("{}/{}", path, i), out);
      // Removes from the end first, so every index still names the element meant.
      for (std::size_t i = a.size(); i > common; --i)
        addOp(out, "remove", fmt::format("{}/{}", path, i - 1), nullptr);
      for (std::size_t i = common; i < b.size(); ++i)
        addOp(out, "add", fmt::format("{}/{}", path, i), &b[i]);
      return;
    }
    addOp(out, "replace", path, &to);
    return;
  }
  if (from != to)
    addOp(out, "replace", path, &to);
}

// ---- applying, for tests ----

kube::Error patchError(std::size_t i, std::string_view what) {
  return kube::makeKubeError(fmt::format("patch[{}]: {}", i, what));
}

kube::Expected<std::vector<std::string>> parsePointer(std::string_view pointer) {
  std::vector<std::string> tokens;
  if (pointer.empty())
    return tokens;
  if (pointer.front() != '/')
    return kube::makeKubeError(fmt::format("pointer \"{}\" does not start with /", pointer));
  std::size_t pos = 1;
  while (true) {
    std::size_t slash = pointer.find('/', pos);
    std::string_view raw =
        pointer.substr(pos, slash == std::string_view::npos ? slash : slash - pos);
    std::string token;
    for (std::size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] != '~') {
        token += raw[i];
        continue;
      }
      if (i + 1 < raw.size() && (raw[i + 1] == '0' || raw[i + 1] == '1')) {
        token += raw[i + 1] == '0' ? '~' : '/';
        ++i;
        continue;
      }
      return kube::makeKubeError(fmt::format("pointer \"{}\": bad escape", pointer));
    }
    tokens.push_back(std::move(token));
    if (slash == std::string_view::npos)
      break;
    pos = slash + 1;
  }
  return tokens;
}

// An array index as RFC 6901 spells it: digits, no leading zero; `size` allowed for "add".
bool arrayIndex(const std::string& token, std::size_t limit, std::size_t& out) {
  if (token.empty() || (token.size() > 1 && token.front() == '0'))
    return false;
  auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), out);
  return ec == std::errc() && end == token.data() + token.size() && out <= limit;
}

// The container that holds the last token of `tokens`.
json::value* parentOf(json::value& root, const std::vector<std::string>& tokens) {
  json::value* cur = &root;
  for (std::size_t i = 0; i + 1 < tokens.size(); ++i) {
    if (json::object* o = cur->if_object()) {
      cur = o->if_contains(tokens[i]);
    } else if (json::array* a = cur->if_array()) {
      std::size_t idx = 0;
      cur = !a->empty() && arrayIndex(tokens[i], a->size() - 1, idx) ? &(*a)[idx] : nullptr;
    } else {
      cur = nullptr;
    }
    if (cur == nullptr)
      return nullptr;
  }
  return cur;
}

kube::Expected<json::value> getAt(json::value& root, const std::vector<std::string>& tokens) {
  if (tokens.empty())
    return root;
  json::value* parent = parentOf(root, tokens);
  if (parent == nullptr)
    return kube::makeKubeError("path not found");
  if (json::object* o = parent->if_object()) {
    if (json::value* v = o->if_contains(tokens.back()))
      return *v;
  } else if (json::array* a = parent->if_array()) {
    std::size_t idx = 0;
    if (!a->empty() && arrayIndex(tokens.back(), a->size() - 1, idx))
      return (*a)[idx];
  }
  return kube::makeKubeError("path not found");
}

kube::Expected<void> removeAt(json::value& root, const std::vector<std::string>& tokens) {
  if (tokens.empty())
    return kube::makeKubeError("cannot remove the whole document");
  json::value* parent = parentOf(root, tokens);
  if (parent != nullptr) {
    if (json::object* o = parent->if_object()) {
      if (o->erase(tokens.back()) == 1)
        return {};
    } else if (json::array* a = parent->if_array()) {
      std::size_t idx = 0;
      if (!a->empty() && arrayIndex(tokens.back(), a->size() - 1, idx)) {
        a->erase(a->begin() + static_cast<std::ptrdiff_t>(idx));
        return {};
      }
    }
  }
  return kube::makeKubeError("path not found");
}

kube::Expected<void> addAt(json::value& root, const std::vector<std::string>& tokens,
                           json::value value, bool replace) {
  if (tokens.empty()) {
    root = std::move(value);
    return {};
  }
  json::value* parent = parentOf(root, tokens);
  if (parent == nullptr)
    return kube::makeKubeError("parent not found");
  if (json::object* o = parent->if_object()) {
    if (replace && !o->contains(tokens.back()))
      return kube::makeKubeError("path not found");
    (*o)[tokens.back()] = std::move(value);
    return {};
  }
  if (json::array* a = parent->if_array()) {
    std::size_t idx = 0;
    if (replace) {
      if (a->empty() || !arrayIndex(tokens.back(), a->size() - 1, idx))
        return kube::makeKubeError("path not found");
      (*a)[idx] = std::move(value);
      return {};
    }
    if (tokens.back() == "-") {
      a->emplace_back(std::move(value));
      return {};
    }
    if (!arrayIndex(tokens.back(), a->size(), idx))
      return kube::makeKubeError("bad array index");
    a->insert(a->begin() + static_cast<std::ptrdiff_t>(idx), std::move(value));
    return {};
  }
  return kube::makeKubeError("parent is not a container");
}

}  // namespace

std::string escapeJsonPointerToken(std::string_view token) {
  std::string out;
  out.reserve(token.size());
  for (char c : token) {
    if (c == '~')
      out += "~0";
    else if (c == '/')
      out += "~1";
    else
      out += c;
  }
  return out;
}

boost::json::array createJsonPatch(const boost::json::value& from, const boost::json::value& to) {
  json::array out;
  diff(from, to, "", out);
  return out;
}

kube::Expected<boost::json::value> applyJsonPatch(const boost::json::value& document,
                                                  const boost::json::array& patch) {
  json::value doc = document;
  for (std::size_t i = 0; i < patch.size(); ++i) {
    const json::object* op = patch[i].if_object();
    if (op == nullptr)
      return patchError(i, "not an object");
    const json::value* name = op->if_contains("op");
    const json::value* path = op->if_contains("path");
    if (name == nullptr || !name->is_string() || path == nullptr || !path->is_string())
      return patchError(i, "op and path must be strings");
    auto tokens = parsePointer(path->get_string());
    if (!tokens)
      return patchError(i, tokens.error().message);
    std::string_view kind = name->get_string();
    const json::value* value = op->if_contains("value");
    kube::Expected<void> done;
    if (kind == "add" || kind == "replace") {
      if (value == nullptr)
        return patchError(i, "missing value");
      done = addAt(doc, *tokens, *value, kind == "replace");
    } else if (kind == "remove") {
      done = removeAt(doc, *tokens);
    } else if (kind == "test") {
      auto got = getAt(doc, *tokens);
      if (!got || value == nullptr || *got != *value)
        return patchError(i, "test failed");
    } else if (kind == "move" || kind == "copy") {
      const json::value* from = op->if_contains("from");
      if (from == nullptr || !from->is_string())
        return patchError(i, "missing from");
      auto from_tokens = parsePointer(from->get_string());
      if (!from_tokens)
        return patchError(i, from_tokens.error().message);
      auto got = getAt(doc, *from_tokens);
      if (!got)
        return patchError(i, got.error().message);
      json::value moved = std::move(*got);
      if (kind == "move") {
        if (auto removed = removeAt(doc, *from_tokens); !removed)
          return patchError(i, removed.error().message);
      }
      done = addAt(doc, *tokens, std::move(moved), false);
    } else {
      return patchError(i, fmt::format("unknown op \"{}\"", kind));
    }
    if (!done)
      return patchError(i, done.error().message);
  }
  return doc;
}

}  // namespace koord::manager::webhook
