#include "hcp/lint/value.hpp"

#include <charconv>
#include <cstdlib>

namespace hcp::lint {

Value Value::make_null(Location loc) {
  Value v;
  v.loc = std::move(loc);
  v.text = "null";
  return v;
}

Value Value::make_bool(bool b, Location loc) {
  Value v;
  v.kind = Kind::boolean;
  v.boolean = b;
  v.text = b ? "true" : "false";
  v.loc = std::move(loc);
  return v;
}

Value Value::make_int(int64_t i, std::string literal, Location loc) {
  Value v;
  v.kind = Kind::integer;
  v.integer = i;
  v.text = std::move(literal);
  v.loc = std::move(loc);
  return v;
}

Value Value::make_real(double d, std::string literal, Location loc) {
  Value v;
  v.kind = Kind::real;
  v.real = d;
  v.text = std::move(literal);
  v.loc = std::move(loc);
  return v;
}

Value Value::make_string(std::string s, Location loc) {
  Value v;
  v.kind = Kind::string;
  v.text = std::move(s);
  v.loc = std::move(loc);
  return v;
}

Value Value::make_list(std::vector<Value> items, Location loc) {
  Value v;
  v.kind = Kind::list;
  v.items = std::move(items);
  v.loc = std::move(loc);
  return v;
}

std::string Value::display() const {
  switch (kind) {
    case Kind::string: return "'" + text + "'";
    case Kind::list: {
      std::string s = "[";
      for (size_t i = 0; i < items.size(); ++i) {
        if (i) s += ", ";
        s += items[i].display();
      }
      return s + "]";
    }
    case Kind::table: return "{...}";
    default: return text;
  }
}

std::string_view Value::kind_name() const {
  switch (kind) {
    case Kind::null: return "null";
    case Kind::boolean: return "boolean";
    case Kind::integer: return "integer";
    case Kind::real: return "number";
    case Kind::string: return "string";
    case Kind::list: return "list";
    case Kind::table: return "table";
  }
  return "value";
}

Value parse_scalar(const std::string& text, Location loc, bool* overflow) {
  if (overflow) *overflow = false;
  if (text == "null" || text == "~" || text == "None" || text == "Null" || text == "NULL") {
    return Value::make_null(std::move(loc));
  }
  if (text == "true" || text == "True" || text == "TRUE") return Value::make_bool(true, std::move(loc));
  if (text == "false" || text == "False" || text == "FALSE") return Value::make_bool(false, std::move(loc));
  const char* b = text.data();
  const char* e = b + text.size();
  const char* start = (b != e && *b == '+') ? b + 1 : b;
  int64_t i = 0;
  auto r = std::from_chars(start, e, i);
  if (start != e && r.ptr == e) {
    if (r.ec == std::errc()) return Value::make_int(i, text, std::move(loc));
    if (r.ec == std::errc::result_out_of_range && overflow) *overflow = true;
    return Value::make_string(text, std::move(loc));
  }
  double d = 0;
  auto rd = std::from_chars(start, e, d);
  if (start != e && rd.ptr == e && rd.ec == std::errc()) return Value::make_real(d, text, std::move(loc));
  return Value::make_string(text, std::move(loc));
}

}  // namespace hcp::lint
