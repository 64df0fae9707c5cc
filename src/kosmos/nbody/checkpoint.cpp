#include <kosmos/core/error.hpp>
#include <kosmos/nbody/checkpoint.hpp>
#include <kosmos/nbody/io.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
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

// A checkpoint with `meta` besides its own entries.
void write_with(const std::string& path, const Checkpoint& c,
                std::map<std::string, std::string> meta) {
  const HostEnsemble& e = c.ensemble;
  const int n_sys = e.n_systems(), user = e.n_attributes();
  const auto columns = columns_of(c, n_sys);
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

// One checkpoint file (a whole checkpoint, a run's start or a part) and its metadata.
Checkpoint read_file(const std::string& path, const std::vector<std::string>& required_settings,
                     std::map<std::string, std::string>& meta) {
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

// What a system in no part has of a field its start lacks.
enum class Fresh {
  unknown,            // nothing: the start must have the field
  zeros,              // zeros: a fresh start
  zeros_of_any_width  // zeros, also instead of values of another width (carried state of other
                      // settings, which no system continues from)
};

// The values of `part`'s systems (one field of a part's state) into theirs in `whole`.
template <class T>
void put_systems(const std::string& path, const char* name, Fresh fresh, std::vector<T>& whole,
                 int n_whole, const std::vector<T>& part, const std::vector<int>& index) {
  if (index.empty()) return;
  const std::size_t width = part.size() / index.size();
  std::size_t whole_width = n_whole > 0 ? whole.size() / std::size_t(n_whole) : 0;
  if (whole_width != width &&
      ((fresh == Fresh::zeros && whole_width == 0) || fresh == Fresh::zeros_of_any_width)) {
    whole.assign(width * std::size_t(n_whole), T(0));
    whole_width = width;
  }
  if (whole_width != width)
    throw file_error(path + ": its systems have " + std::to_string(width) + " values of '" + name +
                     "' each, the run's start " + std::to_string(whole_width));
  for (std::size_t s = 0; s < index.size(); ++s)
    std::copy(part.begin() + std::ptrdiff_t(s * width),
              part.begin() + std::ptrdiff_t((s + 1) * width),
              whole.begin() + std::ptrdiff_t(std::size_t(index[s]) * width));
}

// Part `p` (read from `path`) over the whole checkpoint `c`.
void put_part(const std::string& path, const Checkpoint& p, Checkpoint& c) {
  const HostEnsemble& from = p.ensemble;
  const int user = c.ensemble.n_attributes(), n_sys = c.ensemble.n_systems();
  if (from.n_bodies() != c.ensemble.n_bodies() || from.n_attributes() != user + 1)
    throw file_error(path + ": a checkpoint part of " + std::to_string(from.n_bodies()) +
                     " bodies and " + std::to_string(from.n_attributes()) +
                     " attributes, expected " + std::to_string(c.ensemble.n_bodies()) + " and " +
                     std::to_string(user + 1));
  std::vector<int> index;
  for (int s = 0; s < from.n_systems(); ++s) {
    const double g = from.attributes(s, user);
    if (!(g >= 0 && g < n_sys && g == std::floor(g)))
      throw file_error(path + ": system " + std::to_string(s) + " names system " +
                       std::to_string(g) + " of an ensemble of " + std::to_string(n_sys));
    index.push_back(int(g));
    copy_system(from, s, c.ensemble, int(g));
  }
  RunState& to = c.state;
  const RunState& st = p.state;
  put_systems(path, "iterations", Fresh::zeros, to.iterations, n_sys, st.iterations, index);
  put_systems(path, "reference_energy", Fresh::unknown, to.reference_energy, n_sys,
              st.reference_energy, index);
  put_systems(path, "energy_offset", Fresh::zeros, to.energy_offset, n_sys, st.energy_offset,
              index);
  put_systems(path, "removed", Fresh::zeros, to.removed, n_sys, st.removed, index);
  put_systems(path, "radii", Fresh::unknown, to.radii, n_sys, st.radii, index);
  put_systems(path, "megno_state", Fresh::unknown, to.megno_state, n_sys, st.megno_state, index);
  put_systems(path, "carried", Fresh::zeros_of_any_width, to.carried, n_sys, st.carried, index);
}

const char kPartsKey[] = "parts";
const char kRunKey[] = "run";
}  // namespace

void write_checkpoint(const std::string& path, const Checkpoint& c) {
  write_with(path, c, {});
}

std::string checkpoint_part_path(const std::string& path, int part) {
  return path + ".part" + std::to_string(part);
}

void write_checkpoint_start(const std::string& path, const Checkpoint& start, int parts,
                            const std::string& run) {
  kosmos::Impl::require(parts >= 1 && !run.empty(), "kosmos::nbody::write_checkpoint_start", parts,
                        " parts of run '", run, "': give at least one part and a run id");
  write_with(path, start, {{kPartsKey, std::to_string(parts)}, {kRunKey, run}});
}

void write_checkpoint_part(const std::string& path, int part, const std::string& run,
                           const HostEnsemble& systems, const std::vector<int>& index,
                           const RunState& state) {
  kosmos::Impl::require(index.size() == std::size_t(systems.n_systems()),
                        "kosmos::nbody::write_checkpoint_part", index.size(), " indices for ",
                        systems.n_systems(), " systems");
  const int user = systems.n_attributes();
  HostEnsemble e(systems.n_systems(), systems.n_bodies(), user + 1);
  for (int s = 0; s < systems.n_systems(); ++s) {
    copy_system(systems, s, e, s);
    e.attributes(s, user) = index[std::size_t(s)];
  }
  write_with(checkpoint_part_path(path, part), Checkpoint{e, state, {}}, {{kRunKey, run}});
}

Checkpoint read_checkpoint(const std::string& path,
                           const std::vector<std::string>& required_settings) {
  std::map<std::string, std::string> meta;
  Checkpoint c = read_file(path, required_settings, meta);
  const auto parts = meta.find(kPartsKey);
  if (parts == meta.end()) return c;  // whole
  int n_parts = 0;
  try {
    n_parts = std::stoi(parts->second);
  } catch (const std::exception&) {
  }
  if (n_parts < 1 || std::to_string(n_parts) != parts->second)
    throw file_error(path + ": checkpoint entry 'parts' is '" + parts->second +
                     "', not a count of parts");
  const std::string run = meta[kRunKey];
  for (int k = 0; k < n_parts; ++k) {
    const std::string part_path = checkpoint_part_path(path, k);
    if (!std::filesystem::exists(part_path)) continue;  // that part had not finished a segment
    std::map<std::string, std::string> part_meta;
    const Checkpoint part = read_file(part_path, {}, part_meta);
    if (part_meta[kRunKey] != run) continue;  // left by an earlier run
    put_part(part_path, part, c);
  }
  return c;
}

}  // namespace nbody
}  // namespace kosmos
