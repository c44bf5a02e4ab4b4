#include "mapped_yaml.hpp"

#include <string>

namespace hcp::lint {
namespace {

// "${a.b.c}" alone -> "a.b.c"; anything else (text around it, several) -> empty.
std::string interpolation(const Value& v) {
  if (v.kind != Value::Kind::string || v.text.size() < 4 || v.text.rfind("${", 0) != 0 || v.text.back() != '}' ||
      v.text.find("${", 2) != std::string::npos) {
    return {};
  }
  return v.text.substr(2, v.text.size() - 3);
}

const Setting* resolve(const ConfigTree& yaml, const Setting* s, int depth, std::string* why) {
  while (s && depth++ < 8) {
    std::string ref = interpolation(s->value);
    if (ref.empty()) {
      if (s->value.kind == Value::Kind::string && s->value.text.find("${") != std::string::npos) {
        *why = "Hydra interpolation " + s->value.text;
        return nullptr;
      }
      return s;
    }
    // OmegaConf's relative form: ${.x} is a sibling of the key, each further dot one level up.
    if (!ref.empty() && ref[0] == '.') {
      std::string parent = s->key;
      size_t dots = 0;
      while (dots < ref.size() && ref[dots] == '.') ++dots;
      for (size_t i = 0; i < dots; ++i) {
        const size_t cut = parent.rfind('.');
        parent = cut == std::string::npos ? std::string() : parent.substr(0, cut);
      }
      ref = (parent.empty() ? "" : parent + ".") + ref.substr(dots);
    }
    const Setting* next = yaml.find(ref);
    const size_t dot = ref.find('.');
    if (!next && dot != std::string::npos) next = yaml.find(ref.substr(dot + 1));  // ${training.x} -> x
    if (!next) {
      *why = "Hydra interpolation ${" + ref + "} from outside the file";
      return nullptr;
    }
    s = next;
  }
  *why = "Hydra interpolation nested too deep";
  return nullptr;
}

}  // namespace

ConfigTree map_yaml_keys(const ConfigTree& yaml, KeyMap keys) {
  ConfigTree out;
  for (const auto& [from, bridge] : keys) {
    const Setting* s = yaml.find(std::string(from));
    if (!s) continue;
    std::string why;
    const Setting* value = resolve(yaml, s, 0, &why);
    Setting t;
    t.key = std::string(bridge);
    t.spelled = std::string(from);
    t.key_loc = s->key_loc;
    if (value) {
      t.value = value->value;
      t.value.loc = s->value.loc;
      t.provenance = value->provenance;  // a launch script's ${CP:-2} stays a default, $CP unknown
      t.why = value->why;
    } else {
      t.provenance = Provenance::unknown;
      t.why = why;
    }
    // `devices: -1` / `auto` and null sizes are decided at run time.
    if (value && t.key.rfind("cluster.", 0) == 0 && t.value.kind != Value::Kind::integer) {
      t.value = Value::make_null(t.key_loc);
      t.provenance = Provenance::unknown;
      t.why = std::string(from) + " is " + value->value.display() + ", decided at run time";
    }
    if (value && t.value.kind == Value::Kind::null && t.provenance != Provenance::unknown) continue;
    out.set(std::move(t));
  }
  return out;
}

}  // namespace hcp::lint
