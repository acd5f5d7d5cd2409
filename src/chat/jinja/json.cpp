// JSON in (the render context, the from_json filter) and out (tojson, as Python's json.dumps).
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "chat/jinja/builtins.h"
#include "common/error.h"

namespace hart::jinja {

void check_size(size_t n) {
  if (n > kMaxString) throw Error("template result too large (over " + std::to_string(kMaxString >> 20) + " MiB)");
}

Value from_json(const nlohmann::ordered_json& j) {
  switch (j.type()) {
    case nlohmann::json::value_t::null: return nullptr;
    case nlohmann::json::value_t::boolean: return j.get<bool>();
    case nlohmann::json::value_t::number_integer: return j.get<int64_t>();
    case nlohmann::json::value_t::number_unsigned: {
      const auto u = j.get<uint64_t>();
      return u <= static_cast<uint64_t>(INT64_MAX) ? Value(static_cast<int64_t>(u)) : Value(static_cast<double>(u));
    }
    case nlohmann::json::value_t::number_float: return j.get<double>();
    case nlohmann::json::value_t::string: return j.get<std::string>();
    case nlohmann::json::value_t::array: {
      List l;
      l.reserve(j.size());
      for (const auto& x : j) l.push_back(from_json(x));
      return Value::list(std::move(l));
    }
    case nlohmann::json::value_t::object: {
      Value d = Value::dict();
      for (const auto& [k, x] : j.items()) d.as_dict().items.emplace_back(k, from_json(x));
      return d;
    }
    default: return nullptr;  // binary and discarded values do not occur in parsed JSON text
  }
}

namespace {

void append_u(std::string& out, unsigned cp) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "\\u%04x", cp);
  out += buf;
}

void quote_json(std::string& out, const std::string& s, bool ensure_ascii) {
  out += '"';
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '"': out += "\\\""; continue;
      case '\\': out += "\\\\"; continue;
      case '\n': out += "\\n"; continue;
      case '\r': out += "\\r"; continue;
      case '\t': out += "\\t"; continue;
      case '\b': out += "\\b"; continue;
      case '\f': out += "\\f"; continue;
      default: break;
    }
    if (c < 0x20) {
      append_u(out, c);
    } else if (c < 0x80 || !ensure_ascii) {
      out += static_cast<char>(c);
    } else {
      // Decode one UTF-8 sequence; a malformed byte is written as its own code point.
      int n = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : c >= 0xC0 ? 1 : 0;
      unsigned cp = n == 3 ? c & 0x07 : n == 2 ? c & 0x0F : n == 1 ? c & 0x1F : c;
      if (i + n >= s.size()) n = 0, cp = c;
      for (int k = 1; k <= n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
      i += n;
      if (cp >= 0x10000) {
        cp -= 0x10000;
        append_u(out, 0xD800 + (cp >> 10));
        append_u(out, 0xDC00 + (cp & 0x3FF));
      } else {
        append_u(out, cp);
      }
    }
  }
  out += '"';
}

void dump(std::string& out, const Value& v, const JsonStyle& st, int level) {
  if (level > kMaxNesting) throw Error("tojson: value nested too deeply");
  check_size(out.size());
  const auto newline = [&](int lvl) {
    if (st.indent < 0) return;
    out += '\n';
    out.append(static_cast<size_t>(st.indent) * lvl, ' ');
  };
  if (v.is_none()) {
    out += "null";
  } else if (v.is_bool()) {
    out += v.as_bool() ? "true" : "false";
  } else if (v.is_int()) {
    out += std::to_string(v.as_int());
  } else if (v.is_float()) {
    const double d = v.as_double();
    out += std::isnan(d) ? "NaN" : std::isinf(d) ? (d < 0 ? "-Infinity" : "Infinity") : float_repr(d);
  } else if (v.is_string()) {
    quote_json(out, v.as_string(), st.ensure_ascii);
  } else if (v.is_list()) {
    const List& l = v.as_list();
    if (l.empty()) {
      out += "[]";
      return;
    }
    out += '[';
    for (size_t i = 0; i < l.size(); ++i) {
      if (i) out += st.item_sep;
      newline(level + 1);
      dump(out, l[i], st, level + 1);
    }
    newline(level);
    out += ']';
  } else if (v.is_dict()) {
    auto items = v.as_dict().items;
    if (items.empty()) {
      out += "{}";
      return;
    }
    if (st.sort_keys)
      std::stable_sort(items.begin(), items.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    out += '{';
    for (size_t i = 0; i < items.size(); ++i) {
      if (i) out += st.item_sep;
      newline(level + 1);
      quote_json(out, items[i].first, st.ensure_ascii);
      out += st.key_sep;
      dump(out, items[i].second, st, level + 1);
    }
    newline(level);
    out += '}';
  } else {
    throw Error("tojson: cannot serialize " + v.type_name());
  }
}

}  // namespace

std::string to_json(const Value& v, const JsonStyle& style) {
  std::string out;
  dump(out, v, style, 0);
  return out;
}

}  // namespace hart::jinja
