// Ensemble layout, files, bad input, checkpoint/resume, monitors and logs, and the force kernels
// (generic vs long-double reference; CUDA specialization vs generic on Kokkos::Cuda).
#include "nbody_test_utils.hpp"

#include <test_spaces.hpp>

#include <kosmos/core/hdf5.hpp>

#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>

namespace {
using namespace kosmos::nbody;
using nbody_test::Real;

template <class Space>
class NbodyEnsemble : public ::testing::Test {};
TYPED_TEST_SUITE(NbodyEnsemble, kosmos_test::ExecutionSpaces, kosmos_test::SpaceName);

std::string temp_path(const std::string& name) { return ::testing::TempDir() + "kosmos_nbody_" + name; }

bool identical(const HostEnsemble& a, const HostEnsemble& b) {
  if (a.n_systems() != b.n_systems() || a.n_bodies() != b.n_bodies() || a.n_attributes() != b.n_attributes())
    return false;
  for (int s = 0; s < a.n_systems(); ++s) {
    if (a.time(s) != b.time(s) || a.step(s) != b.step(s) || a.state(s) != b.state(s) || a.reason(s) != b.reason(s))
      return false;
    for (int k = 0; k < a.n_attributes(); ++k)
      if (a.attributes(s, k) != b.attributes(s, k)) return false;
    for (int i = 0; i < a.n_bodies(); ++i) {
      if (a.m(s, i) != b.m(s, i)) return false;
      for (int c = 0; c < 3; ++c)
        if (a.x(s, i, c) != b.x(s, i, c) || a.v(s, i, c) != b.v(s, i, c)) return false;
    }
  }
  return true;
}

TEST(NbodyLayout, ChunksAreContiguousPerMember) {
  HostEnsemble ens(40, 3);
  const int C = HostEnsemble::chunk_size;
  // Consecutive systems of a chunk hold the same member at consecutive addresses.
  EXPECT_EQ(&ens.x(1, 2, 1) - &ens.x(0, 2, 1), 1);
  EXPECT_EQ(&ens.v(C - 1, 0, 0) - &ens.v(0, 0, 0), C - 1);
  // The next member of the same system is one chunk-width further.
  EXPECT_EQ(&ens.x(5, 0, 1) - &ens.x(5, 0, 0), C);
  EXPECT_EQ(ens.pos.extent(0), 3u);  // 40 systems -> 3 chunks
  EXPECT_THROW(HostEnsemble(4, max_bodies + 1), kosmos::invalid_input);
  EXPECT_THROW(HostEnsemble(4, 1), kosmos::invalid_input);
}

TEST(NbodyGenerate, Section51InitialConditions) {
  const auto ens = generate_planetary_ensemble(3, 5, 1e-3, 0.4, 0);
  for (int s = 0; s < 3; ++s) {
    EXPECT_EQ(ens.m(s, 0), 1.0);
    for (int c = 0; c < 3; ++c) EXPECT_EQ(ens.x(s, 0, c), 0.0);
    for (int b = 1; b < 5; ++b) {
      const double a = std::pow(1.4, b - 1);
      EXPECT_DOUBLE_EQ(std::hypot(ens.x(s, b, 0), ens.x(s, b, 1)), a);
      EXPECT_DOUBLE_EQ(std::hypot(ens.v(s, b, 0), ens.v(s, b, 1)), std::sqrt(1.001 / a));
      // Circular: velocity perpendicular to position.
      EXPECT_NEAR(ens.x(s, b, 0) * ens.v(s, b, 0) + ens.x(s, b, 1) * ens.v(s, b, 1), 0.0, 1e-15);
    }
  }
  const auto random = generate_planetary_ensemble(2, 4, 1e-3, 0.4, 9);
  EXPECT_NE(random.x(0, 1, 0), random.x(1, 1, 0));  // phases differ between systems
}

TEST(NbodyFiles, TextAndBinaryRoundTripExactly) {
  auto ens = generate_planetary_ensemble(20, 4, 1e-3, 0.4, 3);
  HostEnsemble with_attr(20, 4, 2);
  Kokkos::deep_copy(with_attr.pos, ens.pos);
  Kokkos::deep_copy(with_attr.vel, ens.vel);
  Kokkos::deep_copy(with_attr.mass, ens.mass);
  for (int s = 0; s < 20; ++s) {
    with_attr.time(s) = 0.1 * s + 1.0 / 3.0;
    with_attr.step(s) = s * 1e-3;
    with_attr.state(s) = s % 3;
    with_attr.reason(s) = s % 3 == 0 ? reason_none : s % 3 == 1 ? reason_ejection : reason_nonfinite;
    with_attr.attributes(s, 0) = std::sqrt(2.0) * s;
    with_attr.attributes(s, 1) = -1e-300;
  }
  const std::string text = temp_path("roundtrip.txt"), bin = temp_path("roundtrip.bin");
  write_text(text, with_attr);
  write_binary(bin, with_attr, {{"integrator", "hermite"}, {"destination", "10"}});
  EXPECT_TRUE(identical(read_text(text), with_attr));
  std::map<std::string, std::string> meta;
  EXPECT_TRUE(identical(read_binary(bin, &meta), with_attr));
  EXPECT_EQ(meta["integrator"], "hermite");
  EXPECT_TRUE(identical(read_ensemble(text), with_attr));
  EXPECT_TRUE(identical(read_ensemble(bin), with_attr));
  // A flipped byte or a truncated file is detected.
  {
    std::fstream f(bin, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(200);
    f.put('\x7f');
  }
  EXPECT_THROW(read_binary(bin), kosmos::file_error);
  {
    std::ofstream f(bin, std::ios::binary | std::ios::trunc);
    f.write("KOSMNBDY\x01\x00", 10);
  }
  EXPECT_THROW(read_binary(bin), kosmos::file_error);
  std::remove(text.c_str());
  std::remove(bin.c_str());
}

void write_file(const std::string& path, const std::string& content) {
  std::ofstream out(path);
  out << content;
}

void expect_file_error(const std::string& content, const std::string& fragment) {
  const std::string path = temp_path("bad.txt");
  write_file(path, content);
  try {
    read_text(path);
    ADD_FAILURE() << "accepted: " << content;
  } catch (const kosmos::file_error& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
  std::remove(path.c_str());
}

TEST(NbodyFiles, HDF5RoundTripsExactly) {
  if (!kosmos::io::hdf5_enabled()) GTEST_SKIP() << "built without HDF5";
  for (int n_attr : {0, 2}) {
    HostEnsemble ens = generate_planetary_ensemble(19, 4, 1e-3, 0.4, 3);
    HostEnsemble with_attr(19, 4, n_attr);
    copy_bodies_and_states(with_attr, ens);
    for (int s = 0; s < 19; ++s)
      for (int k = 0; k < n_attr; ++k) with_attr.attributes(s, k) = s + 0.1 * k;
    with_attr.state(3) = state_inactive;
    with_attr.reason(3) = reason_collision;
    with_attr.time(5) = 1.0 / 3.0;
    const std::string path = temp_path("ensemble.h5");
    write_hdf5(path, with_attr, {{"destination", "6.5"}});
    std::map<std::string, std::string> meta;
    const auto back = read_ensemble(path, &meta);
    EXPECT_TRUE(identical(with_attr, back)) << n_attr;
    EXPECT_EQ(meta["destination"], "6.5");
    std::remove(path.c_str());
  }
  // An HDF5 file that is not an ensemble is refused by name.
  const std::string other = temp_path("other.h5");
  {
    kosmos::io::H5Writer w(other);
    w.write("x", std::vector<double>{1, 2});
    w.commit();
  }
  EXPECT_THROW(read_ensemble(other), kosmos::file_error);
  std::remove(other.c_str());
}

// An ensemble file written dataset by dataset, with one dataset's shape or one stop reason
// replaced: every one of them is refused with its name (they were read in the wrong order when
// the element count matched).
TEST(NbodyFiles, HDF5DatasetsOfTheWrongShapeOrValueAreRefused) {
  if (!kosmos::io::hdf5_enabled()) GTEST_SKIP() << "built without HDF5";
  const std::size_t n_sys = 3, n = 2;
  struct Variant {
    const char* dataset;
    std::vector<std::size_t> shape;
    int reason;
    const char* fragment;
  };
  const std::vector<Variant> variants{
      {"", {}, 0, ""},  // the valid file
      {"mass", {n, n_sys}, 0, "'mass'"},
      {"mass", {n_sys * n}, 0, "'mass'"},
      {"velocity", {n_sys, 3, n}, 0, "'velocity'"},
      {"velocity", {n_sys, n, 3, 1}, 0, "'velocity'"},
      {"step", {1, n_sys}, 0, "'step'"},
      {"state", {n_sys, 1}, 0, "'state'"},
      {"reason", {n_sys, 1}, 0, "'reason'"},
      {"", {}, 999, "unknown stop reason 999 of system 1"},
      {"", {}, -3, "unknown stop reason -3 of system 1"},
  };
  for (const auto& v : variants) {
    const std::string path = temp_path("shapes.h5");
    {
      kosmos::io::H5Writer w(path);
      w.attribute("/", "format", "kosmos-nbody-ensemble");
      w.attribute("/", "version", 1LL);
      const auto shape_of = [&](const std::string& name, std::vector<std::size_t> shape) {
        return name == v.dataset ? v.shape : shape;
      };
      const auto doubles = [&](const std::string& name, const std::vector<std::size_t>& natural) {
        const auto shape = shape_of(name, natural);
        std::size_t count = 1;
        for (auto d : shape) count *= d;
        std::vector<double> values(count, 0.5);
        w.write(name, values.data(), shape);
      };
      doubles("time", {n_sys});
      doubles("step", {n_sys});
      doubles("mass", {n_sys, n});
      doubles("position", {n_sys, n, 3});
      doubles("velocity", {n_sys, n, 3});
      doubles("attributes", {n_sys, 0});
      std::vector<std::int32_t> state(n_sys, 0), reason(n_sys, 0);
      reason[1] = v.reason;
      w.write("state", state.data(), shape_of("state", {n_sys}));
      w.write("reason", reason.data(), shape_of("reason", {n_sys}));
      w.write_strings("metadata/keys", {});
      w.write_strings("metadata/values", {});
      w.commit();
    }
    if (std::string(v.fragment).empty()) {
      EXPECT_NO_THROW(read_ensemble(path));
    } else {
      try {
        read_ensemble(path);
        ADD_FAILURE() << "accepted: " << v.fragment;
      } catch (const kosmos::file_error& e) {
        EXPECT_NE(std::string(e.what()).find(v.fragment), std::string::npos) << e.what();
      }
    }
    std::remove(path.c_str());
  }
}

// A header that claims more systems than the file holds is refused before anything is allocated
// for them (2^28 systems of 4 bodies would be 60 GB).
TEST(NbodyFiles, BinaryHeadersClaimingMoreThanTheFileHoldsAreRefused) {
  const std::string bin = temp_path("claims.bin");
  write_binary(bin, generate_planetary_ensemble(3, 4, 1e-3, 0.4, 3));
  {
    std::fstream f(bin, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(12);  // magic (8), version (4), then the system count
    const std::int32_t systems = 1 << 28;
    f.write(reinterpret_cast<const char*>(&systems), sizeof systems);
  }
  try {
    read_binary(bin);
    ADD_FAILURE() << "accepted";
  } catch (const kosmos::file_error& e) {
    EXPECT_NE(std::string(e.what()).find("the header claims 268435456 systems of 4 bodies"), std::string::npos)
        << e.what();
  }
  std::remove(bin.c_str());
}

TEST(NbodyFiles, MalformedFilesNameTheLine) {
  const std::string head = "kosmos-nbody-ensemble 1\nsystems 1 bodies 2 attributes 0\n";
  const std::string sys = "system 0 time 0 state active reason none step 0\n";
  expect_file_error("hello\n", ":1: expected 'kosmos-nbody-ensemble 1'");
  expect_file_error("kosmos-nbody-ensemble 1\nsystems 1 bodies 99 attributes 0\n", ":2: bodies = 99 is outside [2, 32]");
  expect_file_error(head + sys + "1 0 0 0 0 0 0\n", "file ends inside system 0 (body 1 of 2)");
  expect_file_error(head + sys + "1 0 0 0 0 0\n0 1 0 0 0 0 0\n", ":4: expected 7 numbers");
  expect_file_error(head + sys + "1 0 0 0 0 abc 0\n1 1 0 0 0 0 0\n", ":4: 'abc' is not a number");
  expect_file_error(head + "system 0 time 0 state flying reason none step 0\n", ":3: kosmos::nbody: unknown system state 'flying'");
  expect_file_error(head + sys + "1 0 0 0 0 0 0\n1 1 0 0 0 0 0\nextra\n", ":6: unexpected data");
  expect_file_error("kosmos-nbody-ensemble 1\nsystems 2 bodies 2 attributes 0\n" + sys +
                        "1 0 0 0 0 0 0\n1 1 0 0 0 0 0\n",
                    "file ends after 1 of 2 systems");
  expect_file_error("kosmos-nbody-ensemble 1\nsystems 100000000 bodies 2 attributes 0\n" + sys +
                        "1 0 0 0 0 0 0\n1 1 0 0 0 0 0\n",
                    ":2: the header claims 100000000 systems of 2 bodies but the file (140 bytes) can hold at most 2");
  EXPECT_THROW(read_ensemble("/nonexistent/kosmos_nbody.txt"), kosmos::file_error);
}

// Bad systems are disabled with their reason; the good ones around them integrate normally.
template <class Space>
void check_bad_systems() {
  auto host = generate_planetary_ensemble(6, 3, 1e-3, 0.4, 0);
  for (int b = 0; b < 3; ++b) host.m(1, b) = 0.0;                // no massive body
  host.m(2, 1) = -1e-3;                                           // negative mass
  host.x(3, 1, 0) = std::numeric_limits<double>::quiet_NaN();     // NaN position
  host.v(4, 2, 1) = std::numeric_limits<double>::infinity();      // infinite velocity
  for (int c = 0; c < 3; ++c) host.x(5, 2, c) = host.x(5, 1, c);  // coincident bodies
  IntegrationReport rep;
  const auto out = nbody_test::run_on<Space>(host, 1.0, nbody_test::options_for(Method::hermite, 1e-3), &rep);
  EXPECT_EQ(out.state(0), state_active);
  EXPECT_EQ(out.time(0), 1.0);
  const int reasons[6] = {reason_none, reason_nonpositive_mass, reason_nonpositive_mass, reason_nonfinite,
                          reason_nonfinite, reason_coincident_bodies};
  for (int s = 1; s < 6; ++s) {
    EXPECT_EQ(out.state(s), state_disabled) << s;
    EXPECT_EQ(out.reason(s), reasons[s]) << s << ": " << reason_name(out.reason(s));
    EXPECT_EQ(out.time(s), 0.0) << s;
  }
  EXPECT_EQ(rep.disabled, 5);
  EXPECT_EQ(rep.reached_destination, 1);
}

TYPED_TEST(NbodyEnsemble, BadSystemsAreDisabledWithTheirReason) { check_bad_systems<TypeParam>(); }

TEST(NbodyFiles, NonFiniteBodiesInFilesBecomeDisabledSystems) {
  const std::string path = temp_path("nan.txt");
  write_file(path,
             "kosmos-nbody-ensemble 1\nsystems 2 bodies 2 attributes 0\n"
             "system 0 time 0 state active reason none step 0\n1 0 0 0 0 0 0\n0.001 1 0 0 0 1 0\n"
             "system 1 time 0 state active reason none step 0\n1 0 0 0 0 0 0\n0.001 nan 0 0 0 1 0\n");
  auto ens = read_text(path);
  EXPECT_EQ(validate(Kokkos::DefaultHostExecutionSpace(), ens), 1);
  EXPECT_EQ(ens.state(0), state_active);
  EXPECT_EQ(ens.state(1), state_disabled);
  EXPECT_EQ(ens.reason(1), reason_nonfinite);
  std::remove(path.c_str());
}

TEST(NbodyIntegrate, InvalidArgumentsAreRejected) {
  auto ens = generate_planetary_ensemble(2, 3);
  IntegrateOptions o;
  o.integrator.dt = -1;
  EXPECT_THROW(integrate(Kokkos::DefaultHostExecutionSpace(), ens, 1.0, o), kosmos::invalid_input);
  o.integrator.dt = 1e-3;
  EXPECT_THROW(integrate(Kokkos::DefaultHostExecutionSpace(), ens, std::nan(""), o), kosmos::invalid_input);
  o.integrator.method = Method::hermite_adaptive;
  o.integrator.tau = 0;
  EXPECT_THROW(integrate(Kokkos::DefaultHostExecutionSpace(), ens, 1.0, o), kosmos::invalid_input);
  EXPECT_THROW(method_from_name("leapfrog"), kosmos::invalid_input);
  EXPECT_EQ(method_from_name("rkck_adaptive"), Method::rkck_adaptive);
}

// Checkpoint: integrate to T/2, write a binary checkpoint, read it back, continue to T: the
// result is bit-for-bit the one of continuing in memory (no state is lost in the file).
template <class Space>
void check_checkpoint(Method method, double dt, double tol) {
  auto host = generate_planetary_ensemble(5, 4, 1e-3, 0.4, 11);
  const auto opt = nbody_test::options_for(method, dt, 0, tol);
  auto dev = clone<typename Space::memory_space>(host);
  integrate(Space(), dev, 3.0, opt);
  const std::string path = temp_path("checkpoint.bin");
  write_binary(path, clone<Kokkos::HostSpace>(dev), {{"destination", "6"}});
  integrate(Space(), dev, 6.0, opt);
  const auto continued = clone<Kokkos::HostSpace>(dev);
  auto resumed_dev = clone<typename Space::memory_space>(read_binary(path));
  integrate(Space(), resumed_dev, 6.0, opt);
  const auto resumed = clone<Kokkos::HostSpace>(resumed_dev);
  EXPECT_TRUE(identical(continued, resumed)) << method_name(method);
  EXPECT_EQ(resumed.time(0), 6.0);
  if (method == Method::rkck_adaptive) {
    EXPECT_GT(resumed.step(0), 0.0);  // the carried step survives
  }
  std::remove(path.c_str());
}

TYPED_TEST(NbodyEnsemble, CheckpointResumeIsExact) {
  check_checkpoint<TypeParam>(Method::hermite, 1e-3, 0);
  check_checkpoint<TypeParam>(Method::rkck_adaptive, 1e-3, 1e-12);
  check_checkpoint<TypeParam>(Method::mvs, 1e-2, 0);
}

// Stop conditions: a close encounter, an ejection and crossing orbits, each in its own system,
// beside an undisturbed one; each stops with its reason and logs one event record.
template <class Space>
void check_monitors() {
  auto host = generate_planetary_ensemble(4, 3, 1e-3, 0.4, 0);
  // System 1: planet 2 starts 0.01 behind planet 1 on the same circle: a close encounter.
  host.x(1, 2, 0) = std::cos(0.01);
  host.x(1, 2, 1) = -std::sin(0.01);
  host.v(1, 2, 0) = std::sin(0.01) * std::sqrt(1.001);
  host.v(1, 2, 1) = std::cos(0.01) * std::sqrt(1.001);
  // System 2: planet 2 leaves on a hyperbolic orbit (speed 2 x escape speed).
  host.v(2, 2, 1) *= 2 * std::sqrt(2.0);
  // System 3: planet 2 on an eccentric orbit (speed / 2 at a = 1.4: apocentre) crossing planet 1's.
  host.v(3, 2, 1) *= 0.5;
  IntegrateOptions opt = nbody_test::options_for(Method::hermite, 1e-3);
  opt.monitor.close_encounter_hill = 1.0;
  opt.monitor.ejection_distance = 5.0;
  opt.monitor.crossing_orbits = false;
  std::vector<LogRecord> logs;
  opt.on_log = [&](const LogRecord& r) { logs.push_back(r); };
  IntegrationReport rep;
  auto out = nbody_test::run_on<Space>(host, 10.0, opt, &rep);
  EXPECT_EQ(out.state(0), state_active);
  EXPECT_EQ(out.state(1), state_inactive);
  EXPECT_EQ(out.reason(1), reason_close_encounter);
  EXPECT_LT(out.time(1), 1.0);
  EXPECT_EQ(out.state(2), state_inactive);
  EXPECT_EQ(out.reason(2), reason_ejection);
  EXPECT_NE(out.reason(3), reason_crossing_orbits);  // crossing-orbit check off
  ASSERT_GE(logs.size(), 2u);
  EXPECT_EQ(logs[0].system, 1);
  EXPECT_EQ(logs[0].event, reason_close_encounter);
  EXPECT_EQ(logs[0].time, out.time(1));
  EXPECT_EQ(logs[0].pos[3], out.x(1, 1, 0));
  EXPECT_EQ(logs[1].event, reason_ejection);
  // Ejected beyond 5 AU with positive heliocentric energy.
  const double dx = logs[1].pos[6] - logs[1].pos[0], dy = logs[1].pos[7] - logs[1].pos[1];
  EXPECT_GT(std::hypot(dx, dy), 5.0);

  opt.monitor.crossing_orbits = true;
  logs.clear();
  out = nbody_test::run_on<Space>(host, 10.0, opt, &rep);
  EXPECT_EQ(out.state(3), state_inactive);
  EXPECT_EQ(out.reason(3), reason_crossing_orbits);
  EXPECT_EQ(out.state(0), state_active);  // the Section 5.1 system is Hill stable: never stops
  EXPECT_EQ(out.time(0), 10.0);
}

TYPED_TEST(NbodyEnsemble, MonitorsStopSystemsWithTheirReason) { check_monitors<TypeParam>(); }

// Interval logs: with 2 log slots per launch, the kernel pauses systems whose buffer is full and
// relaunches; every record still arrives once, in time order, at the first step past each
// multiple of the interval.
template <class Space>
void check_interval_logs() {
  auto host = generate_planetary_ensemble(3, 3, 1e-3, 0.4, 5);
  IntegrateOptions opt = nbody_test::options_for(Method::hermite, 1e-3);
  opt.monitor.log_interval = 0.25;
  opt.monitor.log_slots_per_launch = 2;
  std::vector<LogRecord> logs;
  opt.on_log = [&](const LogRecord& r) { logs.push_back(r); };
  IntegrationReport rep;
  const auto out = nbody_test::run_on<Space>(host, 2.0, opt, &rep);
  EXPECT_EQ(rep.reached_destination, 3);
  std::vector<int> count(3, 0);
  std::vector<double> last(3, 0.0);
  for (const auto& r : logs) {
    ASSERT_GE(r.system, 0);
    ASSERT_LT(r.system, 3);
    ++count[r.system];
    const double k = std::floor(r.time / 0.25 + 1e-9);
    EXPECT_NEAR(r.time, k * 0.25, 1.1e-3) << "logged at the first step past the multiple";
    EXPECT_GT(r.time, last[r.system]);
    last[r.system] = r.time;
    EXPECT_EQ(r.event, reason_none);
    EXPECT_EQ(r.mass[0], 1.0);
  }
  for (int s = 0; s < 3; ++s) EXPECT_EQ(count[s], 8) << s;  // 0.25, 0.5, ..., 2.0
  EXPECT_GT(rep.launches, 4);
  EXPECT_EQ(out.time(0), 2.0);
}

TYPED_TEST(NbodyEnsemble, IntervalLogsArriveCompleteAndInOrder) { check_interval_logs<TypeParam>(); }

template <class Space>
void check_max_iterations() {
  auto host = generate_planetary_ensemble(2, 3);
  IntegrateOptions opt = nbody_test::options_for(Method::hermite, 1e-3);
  opt.integrator.max_iterations = 100;
  opt.integrator.steps_per_launch = 30;
  IntegrationReport rep;
  const auto out = nbody_test::run_on<Space>(host, 1.0, opt, &rep);
  EXPECT_EQ(rep.unfinished, 2);
  EXPECT_EQ(rep.steps, 200);
  EXPECT_NEAR(out.time(0), 0.1, 1e-12);
  EXPECT_EQ(out.state(0), state_active);
}

TYPED_TEST(NbodyEnsemble, MaxIterationsBoundsEachCall) { check_max_iterations<TypeParam>(); }

// A user force law: Plummer softening with eps -> the energy with the same softened potential is
// conserved by Hermite (and differs from the Newtonian one).
template <class Space>
void check_user_force() {
  auto host = generate_planetary_ensemble(2, 3, 1e-3, 0.4, 1);
  PlummerSoftened soft;
  soft.eps2 = 0.01;
  auto dev = clone<typename Space::memory_space>(host);
  Kokkos::View<double*, typename Space::memory_space> e0("e0", 2), e1("e1", 2);
  energy(Space(), dev, e0, soft);
  integrate(Space(), dev, 5.0, nbody_test::options_for(Method::hermite, 1e-3), soft);
  energy(Space(), dev, e1, soft);
  auto h0 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), e0);
  auto h1 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), e1);
  for (int s = 0; s < 2; ++s) EXPECT_NEAR(h1(s), h0(s), 1e-12 * std::fabs(h0(s)));
  // The softened run differs from the Newtonian one (the force law was really used).
  const auto newton = nbody_test::run_on<Space>(host, 5.0, nbody_test::options_for(Method::hermite, 1e-3));
  const auto softened = clone<Kokkos::HostSpace>(dev);
  EXPECT_GT(std::fabs(newton.x(0, 1, 0) - softened.x(0, 1, 0)), 1e-8);
}

TYPED_TEST(NbodyEnsemble, UserForceLawsPlugIn) { check_user_force<TypeParam>(); }

// compute_acc_jerk against the long double reference, and on Cuda the hand-tuned kernel against
// the generic Kokkos path.
template <class Space>
void check_forces(int n, bool compare_paths) {
  using Mem = typename Space::memory_space;
  const auto host = generate_planetary_ensemble(37, n, 1e-3, 0.4, 3);
  auto dev = clone<Mem>(host);
  typename Ensemble<Mem>::BodyView acc("acc", dev.pos.extent(0), dev.pos.extent(1), dev.pos.extent(2));
  typename Ensemble<Mem>::BodyView jerk("jerk", dev.pos.extent(0), dev.pos.extent(1), dev.pos.extent(2));
  typename Ensemble<Mem>::BodyView acc_g("acc_g", dev.pos.extent(0), dev.pos.extent(1), dev.pos.extent(2));
  typename Ensemble<Mem>::BodyView jerk_g("jerk_g", dev.pos.extent(0), dev.pos.extent(1), dev.pos.extent(2));
  compute_acc_jerk(Space(), dev, acc, jerk);
  compute_acc_jerk_generic(Space(), dev, acc_g, jerk_g);
  auto a = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), acc);
  auto j = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), jerk);
  auto ag = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), acc_g);
  auto jg = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), jerk_g);
  const int C = HostEnsemble::chunk_size;
  for (int s = 0; s < 37; ++s) {
    ReferenceSystem<long double> sys;
    for (int b = 0; b < n; ++b) {
      sys.m.push_back(host.m(s, b));
      for (int c = 0; c < 3; ++c) {
        sys.x.push_back(host.x(s, b, c));
        sys.v.push_back(host.v(s, b, c));
      }
    }
    std::vector<long double> ra, rj;
    reference_acc_jerk(sys, ra, rj);
    for (int k = 0; k < 3 * n; ++k) {
      const double scale_a = 1e-14 * (std::fabs(double(ra[k])) + 1e-3);
      const double scale_j = 1e-14 * (std::fabs(double(rj[k])) + 1e-3);
      EXPECT_NEAR(a(s / C, k, s % C), double(ra[k]), scale_a) << "n " << n << " sys " << s << " k " << k;
      EXPECT_NEAR(j(s / C, k, s % C), double(rj[k]), scale_j) << "n " << n << " sys " << s << " k " << k;
      EXPECT_NEAR(ag(s / C, k, s % C), double(ra[k]), scale_a);
      EXPECT_NEAR(jg(s / C, k, s % C), double(rj[k]), scale_j);
      if (compare_paths) {
        // Specialization (shared-memory atomics, rsqrt) vs generic path.
        EXPECT_NEAR(a(s / C, k, s % C), ag(s / C, k, s % C), scale_a);
      }
    }
  }
}

TYPED_TEST(NbodyEnsemble, ForcesMatchTheLongDoubleReference) {
  for (int n : {3, 10, 32}) check_forces<TypeParam>(n, false);
}

TYPED_TEST(NbodyEnsemble, CudaSpecializationMatchesGenericPath) {
  KOSMOS_SKIP_WITHOUT_CUDA_SPECIALIZATION(kosmos::nbody::Impl::HasCudaSpecialization<TypeParam>::value,
                                          TypeParam);
  for (int n : {3, 10, 32}) check_forces<TypeParam>(n, true);
}

}  // namespace
