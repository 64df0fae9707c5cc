#include <kosmos/core/hdf5.hpp>
#include <kosmos/core/io.hpp>
#include <kosmos/nbody/integrate.hpp>
#include <kosmos/nbody/io.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <limits>
#include <random>
#include <sstream>
#include <vector>

namespace kosmos {
namespace nbody {

namespace {
// A stored state and stop reason must be ones Kosmos writes.
void check_state_and_reason(const std::string& path, std::size_t system, long long state, long long reason) {
  if (state < 0 || state > 2)
    throw file_error(path + ": corrupt state " + std::to_string(state) + " of system " + std::to_string(system));
  if (reason < 0 || reason > 1000 || std::string(reason_name(int(reason))) == "unknown")
    throw file_error(path + ": unknown stop reason " + std::to_string(reason) + " of system " +
                     std::to_string(system));
}
const char kTextMagic[] = "kosmos-nbody-ensemble";
const char kBinaryMagic[8] = {'K', 'O', 'S', 'M', 'N', 'B', 'D', 'Y'};
constexpr std::uint32_t kBinaryVersion = 1;

struct Fnv {
  std::uint64_t h = 1469598103934665603ULL;
  void add(const void* p, std::size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    for (std::size_t i = 0; i < n; ++i) {
      h ^= b[i];
      h *= 1099511628211ULL;
    }
  }
};

template <class T>
void put(std::ostream& out, Fnv& sum, const T& value) {
  out.write(reinterpret_cast<const char*>(&value), sizeof(T));
  sum.add(&value, sizeof(T));
}
template <class T>
void get(std::istream& in, Fnv& sum, T& value, const std::string& path) {
  if (!in.read(reinterpret_cast<char*>(&value), sizeof(T)))
    throw file_error(path + ": truncated binary ensemble");
  sum.add(&value, sizeof(T));
}
}  // namespace

Method method_from_name(const std::string& name) {
  if (name == "hermite") return Method::hermite;
  if (name == "hermite_adaptive") return Method::hermite_adaptive;
  if (name == "rkck") return Method::rkck;
  if (name == "rkck_adaptive") return Method::rkck_adaptive;
  if (name == "mvs") return Method::mvs;
  if (name == "verlet") return Method::verlet;
  if (name == "whfast") return Method::whfast;
  if (name == "ias15") return Method::ias15;
  if (name == "mercurius") return Method::mercurius;
  throw invalid_input("kosmos::nbody: unknown integrator '" + name +
                      "' (hermite, hermite_adaptive, rkck, rkck_adaptive, mvs, verlet, whfast, ias15, "
                      "mercurius)");
}

const char* method_name(Method method) {
  switch (method) {
    case Method::hermite: return "hermite";
    case Method::hermite_adaptive: return "hermite_adaptive";
    case Method::rkck: return "rkck";
    case Method::rkck_adaptive: return "rkck_adaptive";
    case Method::mvs: return "mvs";
    case Method::verlet: return "verlet";
    case Method::whfast: return "whfast";
    case Method::ias15: return "ias15";
    case Method::mercurius: return "mercurius";
  }
  return "unknown";
}

CollisionResponse collision_response_from_name(const std::string& name) {
  if (name == "stop") return CollisionResponse::stop;
  if (name == "merge") return CollisionResponse::merge;
  throw invalid_input("kosmos::nbody: unknown collision response '" + name + "' (stop, merge)");
}

const char* collision_response_name(CollisionResponse response) {
  return response == CollisionResponse::merge ? "merge" : "stop";
}

int state_from_name(const std::string& name) {
  for (int s = 0; s <= 2; ++s)
    if (name == state_name(s)) return s;
  throw invalid_input("kosmos::nbody: unknown system state '" + name + "' (active, inactive, disabled)");
}

int reason_from_name(const std::string& name) {
  for (int r = 0; r < 32; ++r)
    if (name == reason_name(r)) return r;
  throw invalid_input("kosmos::nbody: unknown stop reason '" + name + "'");
}

HostEnsemble generate_planetary_ensemble(int n_systems, int n_bodies, double planet_mass, double alpha,
                                         unsigned long long seed) {
  kosmos::Impl::require(planet_mass > 0 && std::isfinite(planet_mass), "kosmos::nbody::generate_planetary_ensemble",
                "planet_mass = ", planet_mass, " must be positive");
  kosmos::Impl::require(alpha > 0 && std::isfinite(alpha), "kosmos::nbody::generate_planetary_ensemble", "alpha = ",
                alpha, " must be positive");
  HostEnsemble ens(n_systems, n_bodies);
  const double m0 = 1.0;
  for (int s = 0; s < n_systems; ++s) {
    std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ULL + std::uint64_t(s));
    std::uniform_real_distribution<double> phase(0.0, 2 * M_PI);
    ens.m(s, 0) = m0;
    for (int c = 0; c < 3; ++c) ens.x(s, 0, c) = ens.v(s, 0, c) = 0;
    for (int b = 1; b < n_bodies; ++b) {
      const double a = std::pow(1 + alpha, b - 1);
      const double speed = std::sqrt((m0 + planet_mass) / a);
      const double phi = seed ? phase(rng) : 0.0;
      ens.m(s, b) = planet_mass;
      ens.x(s, b, 0) = a * std::cos(phi);
      ens.x(s, b, 1) = a * std::sin(phi);
      ens.x(s, b, 2) = 0;
      ens.v(s, b, 0) = -speed * std::sin(phi);
      ens.v(s, b, 1) = speed * std::cos(phi);
      ens.v(s, b, 2) = 0;
    }
    ens.time(s) = 0;
    ens.step(s) = 0;
    ens.state(s) = state_active;
    ens.reason(s) = reason_none;
  }
  return ens;
}

void write_text(const std::string& path, const HostEnsemble& ens) {
  io::write_atomically(path, [&](std::ostream& out) {
    out << "# kosmos nbody ensemble: per system a header line, then m x y z vx vy vz per body (G = 1)\n";
    out << kTextMagic << " 1\n";
    out << "systems " << ens.n_systems() << " bodies " << ens.n_bodies() << " attributes " << ens.n_attributes()
        << "\n";
    out << std::setprecision(std::numeric_limits<double>::max_digits10);
    for (int s = 0; s < ens.n_systems(); ++s) {
      out << "system " << s << " time " << ens.time(s) << " state " << state_name(ens.state(s)) << " reason "
          << reason_name(ens.reason(s)) << " step " << ens.step(s);
      for (int k = 0; k < ens.n_attributes(); ++k) out << ' ' << ens.attributes(s, k);
      out << '\n';
      for (int b = 0; b < ens.n_bodies(); ++b) {
        out << ens.m(s, b);
        for (int c = 0; c < 3; ++c) out << ' ' << ens.x(s, b, c);
        for (int c = 0; c < 3; ++c) out << ' ' << ens.v(s, b, c);
        out << '\n';
      }
    }
  });
}

HostEnsemble read_text(const std::string& path) {
  io::TextReader reader(path);
  io::Record rec;
  if (!reader.next(rec)) reader.fail(1, "empty file, expected 'kosmos-nbody-ensemble 1'");
  if (rec.fields.size() != 2 || rec.fields[0] != kTextMagic || rec.fields[1] != "1")
    reader.fail(rec.line_number, "expected 'kosmos-nbody-ensemble 1' (not a kosmos nbody ensemble file?)");
  if (!reader.next(rec) || rec.fields.size() != 6 || rec.fields[0] != "systems" || rec.fields[2] != "bodies" ||
      rec.fields[4] != "attributes")
    reader.fail(rec.line_number, "expected 'systems <n> bodies <n> attributes <n>'");
  const long long n_sys = reader.integer(rec, 1, "number of systems");
  const long long n_bod = reader.integer(rec, 3, "number of bodies");
  const long long n_attr = reader.integer(rec, 5, "number of attributes");
  if (n_bod < 2 || n_bod > max_bodies)
    reader.fail(rec.line_number, "bodies = " + std::to_string(n_bod) + " is outside [2, " +
                                     std::to_string(max_bodies) + "]");
  if (n_sys > (1LL << 28)) reader.fail(rec.line_number, "too many systems: " + std::to_string(n_sys));
  if (n_attr > 1024) reader.fail(rec.line_number, "too many attributes: " + std::to_string(n_attr));
  // The count the header claims against the file's size, before anything is allocated for it: a
  // system is at least a header line of 10 fields and one line of 7 fields per body.
  std::error_code size_error;
  const auto file_bytes = std::filesystem::file_size(path, size_error);
  const long long min_bytes_per_system = 2 * 10 + 2 * 7 * n_bod + 2 * n_attr;
  if (!size_error && n_sys > (long long)(file_bytes) / min_bytes_per_system)
    reader.fail(rec.line_number, "the header claims " + std::to_string(n_sys) + " systems of " +
                                     std::to_string(n_bod) + " bodies but the file (" + std::to_string(file_bytes) +
                                     " bytes) can hold at most " +
                                     std::to_string((long long)(file_bytes) / min_bytes_per_system));
  HostEnsemble ens{int(n_sys), int(n_bod), int(n_attr)};
  for (long long s = 0; s < n_sys; ++s) {
    if (!reader.next(rec))
      reader.fail(rec.line_number, "file ends after " + std::to_string(s) + " of " + std::to_string(n_sys) +
                                       " systems");
    if (rec.fields.size() != std::size_t(10 + n_attr) || rec.fields[0] != "system" || rec.fields[2] != "time" ||
        rec.fields[4] != "state" || rec.fields[6] != "reason" || rec.fields[8] != "step")
      reader.fail(rec.line_number, "expected 'system <i> time <t> state <s> reason <r> step <dt>' and " +
                                       std::to_string(n_attr) + " attribute(s)");
    if (reader.integer(rec, 1, "system index") != s)
      reader.fail(rec.line_number, "system index " + rec.fields[1] + ", expected " + std::to_string(s));
    ens.time(s) = reader.number(rec, 3, "time");
    try {
      ens.state(s) = state_from_name(rec.fields[5]);
      ens.reason(s) = reason_from_name(rec.fields[7]);
    } catch (const invalid_input& e) {
      reader.fail(rec.line_number, e.what());
    }
    ens.step(s) = reader.number(rec, 9, "step");
    for (long long k = 0; k < n_attr; ++k) ens.attributes(s, k) = reader.number(rec, 10 + k, "attribute");
    for (long long b = 0; b < n_bod; ++b) {
      if (!reader.next(rec))
        reader.fail(rec.line_number, "file ends inside system " + std::to_string(s) + " (body " +
                                         std::to_string(b) + " of " + std::to_string(n_bod) + ")");
      if (rec.fields.size() != 7)
        reader.fail(rec.line_number, "expected 7 numbers 'm x y z vx vy vz' for body " + std::to_string(b) +
                                         " of system " + std::to_string(s) + ", found " +
                                         std::to_string(rec.fields.size()) + " fields");
      double val[7];
      for (int k = 0; k < 7; ++k)
        if (!io::parse_double(rec.fields[k], val[k], true))
          reader.fail(rec.line_number, "'" + rec.fields[k] + "' is not a number");
      ens.m(s, b) = val[0];
      for (int c = 0; c < 3; ++c) {
        ens.x(s, b, c) = val[1 + c];
        ens.v(s, b, c) = val[4 + c];
      }
    }
  }
  if (reader.next(rec)) reader.fail(rec.line_number, "unexpected data after the last system");
  return ens;
}

void write_binary(const std::string& path, const HostEnsemble& ens,
                  const std::map<std::string, std::string>& metadata) {
  io::write_atomically(path, [&](std::ostream& out) {
    Fnv sum;
    out.write(kBinaryMagic, 8);
    put(out, sum, kBinaryVersion);
    put(out, sum, std::int32_t(ens.n_systems()));
    put(out, sum, std::int32_t(ens.n_bodies()));
    put(out, sum, std::int32_t(ens.n_attributes()));
    std::ostringstream meta;
    for (const auto& [k, v] : metadata) meta << k << '\t' << v << '\n';
    const std::string text = meta.str();
    put(out, sum, std::uint64_t(text.size()));
    out.write(text.data(), std::streamsize(text.size()));
    sum.add(text.data(), text.size());
    for (int s = 0; s < ens.n_systems(); ++s) {
      put(out, sum, ens.time(s));
      put(out, sum, ens.step(s));
      put(out, sum, std::int32_t(ens.state(s)));
      put(out, sum, std::int32_t(ens.reason(s)));
      for (int k = 0; k < ens.n_attributes(); ++k) put(out, sum, ens.attributes(s, k));
      for (int b = 0; b < ens.n_bodies(); ++b) {
        put(out, sum, ens.m(s, b));
        for (int c = 0; c < 3; ++c) put(out, sum, ens.x(s, b, c));
        for (int c = 0; c < 3; ++c) put(out, sum, ens.v(s, b, c));
      }
    }
    const std::uint64_t checksum = sum.h;
    out.write(reinterpret_cast<const char*>(&checksum), sizeof(checksum));
  });
}

HostEnsemble read_binary(const std::string& path, std::map<std::string, std::string>* metadata) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw file_error(path + ": cannot open for reading");
  char magic[8];
  if (!in.read(magic, 8) || std::memcmp(magic, kBinaryMagic, 8) != 0)
    throw file_error(path + ": not a kosmos binary ensemble (bad magic)");
  Fnv sum;
  std::uint32_t version;
  std::int32_t n_sys, n_bod, n_attr;
  get(in, sum, version, path);
  if (version != kBinaryVersion) throw file_error(path + ": unsupported binary version " + std::to_string(version));
  get(in, sum, n_sys, path);
  get(in, sum, n_bod, path);
  get(in, sum, n_attr, path);
  if (n_sys < 0 || n_sys > (1 << 28) || n_bod < 2 || n_bod > max_bodies || n_attr < 0 || n_attr > 1024)
    throw file_error(path + ": corrupt header (systems " + std::to_string(n_sys) + ", bodies " +
                     std::to_string(n_bod) + ", attributes " + std::to_string(n_attr) + ")");
  std::uint64_t meta_size;
  get(in, sum, meta_size, path);
  if (meta_size > (1u << 24)) throw file_error(path + ": corrupt metadata size");
  // The sizes the header claims against the file's, before anything is allocated for them.
  const std::uint64_t per_system = 2 * 8 + 2 * 4 + 8 * std::uint64_t(n_attr) + 7 * 8 * std::uint64_t(n_bod);
  const auto here = in.tellg();
  const std::uint64_t claimed = std::uint64_t(here) + meta_size + std::uint64_t(n_sys) * per_system + 8;
  in.seekg(0, std::ios::end);
  const std::uint64_t actual = std::uint64_t(in.tellg());
  in.seekg(here);
  if (actual != claimed)
    throw file_error(path + ": the header claims " + std::to_string(n_sys) + " systems of " + std::to_string(n_bod) +
                     " bodies (" + std::to_string(claimed) + " bytes) but the file holds " + std::to_string(actual) +
                     " bytes: truncated or damaged");
  std::string text(meta_size, '\0');
  if (!in.read(&text[0], std::streamsize(meta_size))) throw file_error(path + ": truncated binary ensemble");
  sum.add(text.data(), text.size());
  if (metadata) {
    metadata->clear();
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
      const auto tab = line.find('\t');
      if (tab != std::string::npos) (*metadata)[line.substr(0, tab)] = line.substr(tab + 1);
    }
  }
  HostEnsemble ens(n_sys, n_bod, n_attr);
  for (int s = 0; s < n_sys; ++s) {
    std::int32_t state, reason;
    get(in, sum, ens.time(s), path);
    get(in, sum, ens.step(s), path);
    get(in, sum, state, path);
    get(in, sum, reason, path);
    check_state_and_reason(path, std::size_t(s), state, reason);
    ens.state(s) = state;
    ens.reason(s) = reason;
    for (int k = 0; k < n_attr; ++k) get(in, sum, ens.attributes(s, k), path);
    for (int b = 0; b < n_bod; ++b) {
      get(in, sum, ens.m(s, b), path);
      for (int c = 0; c < 3; ++c) get(in, sum, ens.x(s, b, c), path);
      for (int c = 0; c < 3; ++c) get(in, sum, ens.v(s, b, c), path);
    }
  }
  std::uint64_t checksum;
  if (!in.read(reinterpret_cast<char*>(&checksum), sizeof(checksum))) throw file_error(path + ": truncated binary ensemble");
  if (checksum != sum.h) throw file_error(path + ": checksum mismatch (corrupt file)");
  return ens;
}

namespace {
const char kHdf5Format[] = "kosmos-nbody-ensemble";
constexpr long long kHdf5Version = 1;

// The per-system and per-body members as C-order arrays and back.
struct FlatEnsemble {
  std::vector<double> time, step, mass, position, velocity, attributes;
  std::vector<std::int32_t> state, reason;
};
}  // namespace

void write_hdf5(const std::string& path, const HostEnsemble& ens, const std::map<std::string, std::string>& metadata) {
  const std::size_t n_sys = std::size_t(ens.n_systems()), n = std::size_t(ens.n_bodies());
  const std::size_t n_attr = std::size_t(ens.n_attributes());
  FlatEnsemble f;
  for (int s = 0; s < ens.n_systems(); ++s) {
    f.time.push_back(ens.time(s));
    f.step.push_back(ens.step(s));
    f.state.push_back(ens.state(s));
    f.reason.push_back(ens.reason(s));
    for (int k = 0; k < ens.n_attributes(); ++k) f.attributes.push_back(ens.attributes(s, k));
    for (int b = 0; b < ens.n_bodies(); ++b) {
      f.mass.push_back(ens.m(s, b));
      for (int c = 0; c < 3; ++c) {
        f.position.push_back(ens.x(s, b, c));
        f.velocity.push_back(ens.v(s, b, c));
      }
    }
  }
  io::H5Writer w(path);
  w.attribute("/", "format", kHdf5Format);
  w.attribute("/", "version", kHdf5Version);
  w.attribute("/", "units", "G = 1: AU, solar masses, year = 2 pi");
  w.write("time", f.time.data(), {n_sys});
  w.write("step", f.step.data(), {n_sys});
  w.write("state", f.state.data(), {n_sys});
  w.write("reason", f.reason.data(), {n_sys});
  w.write("mass", f.mass.data(), {n_sys, n});
  w.write("position", f.position.data(), {n_sys, n, 3});
  w.write("velocity", f.velocity.data(), {n_sys, n, 3});
  w.write("attributes", f.attributes.data(), {n_sys, n_attr});
  std::vector<std::string> keys, values;
  for (const auto& [k, v] : metadata) {
    keys.push_back(k);
    values.push_back(v);
  }
  w.write_strings("metadata/keys", keys);
  w.write_strings("metadata/values", values);
  w.commit();
}

HostEnsemble read_hdf5(const std::string& path, std::map<std::string, std::string>* metadata) {
  io::H5Reader r(path);
  if (!r.has_attribute("/", "format") || r.attribute_string("/", "format") != kHdf5Format)
    throw file_error(path + ": not a kosmos nbody ensemble (no root attribute format = " + kHdf5Format + ")");
  if (r.attribute_integer("/", "version") != kHdf5Version)
    throw file_error(path + ": unsupported ensemble version " + std::to_string(r.attribute_integer("/", "version")));
  const auto dims = r.dims("position");
  const auto attr_dims = r.dims("attributes");
  if (dims.size() != 3 || dims[2] != 3 || dims[1] < 2 || dims[1] > std::size_t(max_bodies) ||
      dims[0] > (std::size_t(1) << 28) || attr_dims.size() != 2 || attr_dims[0] != dims[0] || attr_dims[1] > 1024)
    throw file_error(path + ": dataset shapes are not those of an ensemble (position must be [systems, 2.." +
                     std::to_string(max_bodies) + ", 3], attributes [systems, n])");
  HostEnsemble ens{int(dims[0]), int(dims[1]), int(attr_dims[1])};
  const std::size_t n_sys = dims[0], n = dims[1], n_attr = attr_dims[1];
  // Every dataset in its own shape: a transposed, flattened or extended one is refused by name,
  // not read in the wrong order because its element count happens to match.
  for (const char* name : {"time", "step", "state", "reason"}) r.expect_shape(name, {n_sys});
  r.expect_shape("mass", {n_sys, n});
  r.expect_shape("velocity", {n_sys, n, 3});
  FlatEnsemble f;
  f.time.resize(n_sys);
  f.step.resize(n_sys);
  f.state.resize(n_sys);
  f.reason.resize(n_sys);
  f.mass.resize(n_sys * n);
  f.position.resize(n_sys * n * 3);
  f.velocity.resize(n_sys * n * 3);
  f.attributes.resize(n_sys * n_attr);
  r.read_into("time", f.time.data(), f.time.size());
  r.read_into("step", f.step.data(), f.step.size());
  r.read_into("state", f.state.data(), f.state.size());
  r.read_into("reason", f.reason.data(), f.reason.size());
  r.read_into("mass", f.mass.data(), f.mass.size());
  r.read_into("position", f.position.data(), f.position.size());
  r.read_into("velocity", f.velocity.data(), f.velocity.size());
  r.read_into("attributes", f.attributes.data(), f.attributes.size());
  for (std::size_t s = 0; s < n_sys; ++s) {
    check_state_and_reason(path, s, f.state[s], f.reason[s]);
    const int i = int(s);
    ens.time(i) = f.time[s];
    ens.step(i) = f.step[s];
    ens.state(i) = f.state[s];
    ens.reason(i) = f.reason[s];
    for (std::size_t k = 0; k < n_attr; ++k) ens.attributes(i, int(k)) = f.attributes[s * n_attr + k];
    for (std::size_t b = 0; b < n; ++b) {
      ens.m(i, int(b)) = f.mass[s * n + b];
      for (int c = 0; c < 3; ++c) {
        ens.x(i, int(b), c) = f.position[(s * n + b) * 3 + std::size_t(c)];
        ens.v(i, int(b), c) = f.velocity[(s * n + b) * 3 + std::size_t(c)];
      }
    }
  }
  if (metadata) {
    metadata->clear();
    const auto keys = r.read_strings("metadata/keys"), values = r.read_strings("metadata/values");
    if (keys.size() != values.size()) throw file_error(path + ": metadata keys and values differ in number");
    for (std::size_t k = 0; k < keys.size(); ++k) (*metadata)[keys[k]] = values[k];
  }
  return ens;
}

HostEnsemble read_ensemble(const std::string& path, std::map<std::string, std::string>* metadata) {
  if (io::is_hdf5_path(path)) return read_hdf5(path, metadata);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw file_error(path + ": cannot open for reading");
  char magic[8] = {};
  in.read(magic, 8);
  if (in.gcount() == 8 && std::memcmp(magic, kBinaryMagic, 8) == 0) return read_binary(path, metadata);
  if (metadata) metadata->clear();
  return read_text(path);
}

}  // namespace nbody
}  // namespace kosmos
