#include <kosmos/core/error.hpp>
#include <kosmos/nbody/checkpoint.hpp>
#include <kosmos/nbody/io.hpp>

#include <limits>
#include <string>

namespace kosmos {
namespace nbody {

namespace {
const char kCheckpointKey[] = "kosmos-nbody-checkpoint";
const char kCheckpointVersion[] = "2";
const char kSettingPrefix[] = "setting:";

// The run state's columns after the user's attributes, in this order: name and values per system.
struct Column {
  const char* name;
  std::size_t width;
};

std::vector<Column> columns_of(const Checkpoint& c, int n_sys) {
  const auto per = [&](std::size_t size) { return n_sys > 0 ? size / std::size_t(n_sys) : 0; };
  return {{"iterations", per(c.state.iterations.size())},
          {"time_lo", 1},
          {"reference_energy", per(c.state.reference_energy.size())},
          {"energy_offset", per(c.state.energy_offset.size())},
          {"removed", per(c.state.removed.size())},
          {"radii", per(c.state.radii.size())},
          {"megno_state", per(c.state.megno_state.size())},
          {"carried", per(c.state.carried.size())}};
}

std::string column_key(const char* name) {
  return std::string("columns:") + name;
}
}  // namespace

void write_checkpoint(const std::string& path, const Checkpoint& c) {
  const HostEnsemble& e = c.ensemble;
  const int n_sys = e.n_systems(), user = e.n_attributes();
  const auto columns = columns_of(c, n_sys);
  std::map<std::string, std::string> meta;
  meta[kCheckpointKey] = kCheckpointVersion;
  meta["user-attributes"] = std::to_string(user);
  std::size_t width = 0;
  for (const auto& col : columns) {
    meta[column_key(col.name)] = std::to_string(col.width);
    width += col.width;
  }
  for (const auto& [k, v] : c.settings) meta[kSettingPrefix + k] = v;
  kosmos::Impl::require(user + width <= 1024, "kosmos::nbody::write_checkpoint", user + width,
                        " values per system exceed the binary format's 1024 attributes");
  HostEnsemble out(n_sys, e.n_bodies(), user + int(width));
  copy_bodies_and_states(out, e);
  for (int s = 0; s < n_sys; ++s) {
    int k = 0;
    for (; k < user; ++k) out.attributes(s, k) = e.attributes(s, k);
    const auto put = [&](const auto& values, std::size_t per_system) {
      for (std::size_t i = 0; i < per_system; ++i)
        out.attributes(s, k++) = double(values[std::size_t(s) * per_system + i]);
    };
    put(c.state.iterations, columns[0].width);
    out.attributes(s, k++) = e.time_lo(s);
    put(c.state.reference_energy, columns[2].width);
    put(c.state.energy_offset, columns[3].width);
    put(c.state.removed, columns[4].width);
    put(c.state.radii, columns[5].width);
    put(c.state.megno_state, columns[6].width);
    put(c.state.carried, columns[7].width);
  }
  write_binary(path, out, meta);
}

Checkpoint read_checkpoint(const std::string& path,
                           const std::vector<std::string>& required_settings) {
  std::map<std::string, std::string> meta;
  const HostEnsemble in = read_binary(path, &meta);
  const auto it = meta.find(kCheckpointKey);
  if (it == meta.end()) throw file_error(path + ": not a kosmos nbody checkpoint");
  if (it->second != kCheckpointVersion)
    throw file_error(path + ": a checkpoint of format " + it->second +
                     ", this kosmos reads format " + kCheckpointVersion);
  const auto entry = [&](const std::string& key) -> const std::string& {
    const auto found = meta.find(key);
    if (found == meta.end())
      throw file_error(path + ": the checkpoint lacks the entry '" + key + "'");
    return found->second;
  };
  const auto count = [&](const std::string& key) {
    const std::string& text = entry(key);
    std::size_t used = 0;
    long long value = -1;
    try {
      value = std::stoll(text, &used);
    } catch (const std::exception&) {
    }
    if (used != text.size() || value < 0 || value > 1024)
      throw file_error(path + ": checkpoint entry '" + key + "' is '" + text +
                       "', not a count in 0..1024");
    return std::size_t(value);
  };
  Checkpoint c;
  for (const auto& [k, v] : meta)
    if (k.rfind(kSettingPrefix, 0) == 0) c.settings[k.substr(sizeof(kSettingPrefix) - 1)] = v;
  for (const auto& key : required_settings)
    if (!c.settings.count(key))
      throw file_error(path + ": the checkpoint lacks the setting '" + key + "'");
  const int n_sys = in.n_systems();
  const std::size_t user = count("user-attributes");
  const char* names[] = {"iterations", "time_lo", "reference_energy", "energy_offset",
                         "removed",    "radii",   "megno_state",      "carried"};
  std::size_t widths[8], total = user;
  for (int i = 0; i < 8; ++i) total += widths[i] = count(column_key(names[i]));
  if (total != std::size_t(in.n_attributes()) || widths[1] != 1)
    throw file_error(path + ": the checkpoint's columns (" + std::to_string(total) +
                     ") do not match its " + std::to_string(in.n_attributes()) +
                     " values per system");
  c.ensemble = HostEnsemble(n_sys, in.n_bodies(), int(user));
  copy_bodies_and_states(c.ensemble, in);
  for (int s = 0; s < n_sys; ++s) {
    std::size_t k = 0;
    for (; k < user; ++k) c.ensemble.attributes(s, int(k)) = in.attributes(s, int(k));
    const auto take = [&](auto& values, std::size_t width, const char* name) {
      using T = typename std::decay_t<decltype(values)>::value_type;
      for (std::size_t i = 0; i < width; ++i) {
        const double v = in.attributes(s, int(k++));
        if (std::is_integral<T>::value &&
            !(v >= 0 && v <= double(std::numeric_limits<T>::max()) && v == std::floor(v)))
          throw file_error(path + ": checkpoint value " + std::to_string(v) + " of '" + name +
                           "' (system " + std::to_string(s) + ") is not a count");
        values.push_back(T(v));
      }
    };
    take(c.state.iterations, widths[0], names[0]);
    c.ensemble.time_lo(s) = in.attributes(s, int(k++));
    take(c.state.reference_energy, widths[2], names[2]);
    take(c.state.energy_offset, widths[3], names[3]);
    take(c.state.removed, widths[4], names[4]);
    take(c.state.radii, widths[5], names[5]);
    take(c.state.megno_state, widths[6], names[6]);
    take(c.state.carried, widths[7], names[7]);
  }
  return c;
}

}  // namespace nbody
}  // namespace kosmos
