// A fuzz target for every reader of untrusted input, picked by the environment variable
// KOSMOS_FUZZ_READER: the bytes become a file with the reader's suffix and the reader must return
// or throw kosmos::invalid_input / kosmos::file_error; anything else (a crash, a sanitizer
// report, another exception, a hang) is a finding. Built with clang's libFuzzer
// (-fsanitize=fuzzer) it fuzzes; built without, its own main() replays files:
//   kosmos_fuzz READER FILE...   (the seed corpus and the kept regressions, run by CTest)
#include <kosmos/core/compat.hpp>
#include <kosmos/core/error.hpp>
#include <kosmos/dust/grains.hpp>
#include <kosmos/kepler/rv_data.hpp>
#include <kosmos/kepler/search.hpp>
#include <kosmos/nbody/checkpoint.hpp>
#include <kosmos/nbody/io.hpp>
#include <kosmos/nbody/stability.hpp>
#include <kosmos/series/parser.hpp>
#include <kosmos/series/system.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include <unistd.h>

namespace {
struct Reader {
  const char* name;
  const char* suffix;
  void (*read)(const std::string& path);
  // Binary ensembles end with a checksum of all bytes after the 8-byte magic: a mutated input
  // would stop there, so the harness writes the checksum of the mutated bytes (the format's FNV-1a
  // sum, nbody/io.cpp) and the reader's checks behind it are fuzzed too.
  bool repair_checksum = false;
};

void repair_fnv1a_checksum(std::vector<unsigned char>& bytes) {
  constexpr std::size_t magic = 8, checksum = 8;
  if (bytes.size() < magic + checksum) return;
  std::uint64_t h = 1469598103934665603ULL;  // the format's offset basis
  for (std::size_t i = magic; i < bytes.size() - checksum; ++i)
    h = (h ^ bytes[i]) * 1099511628211ULL;
  std::memcpy(bytes.data() + bytes.size() - checksum, &h, checksum);
}

void read_dust_cells(const std::string& path) {
  std::vector<double> mass, intensity;
  kosmos::dust::read_cells(path, 4, mass, intensity);
}
void read_dust_grid(const std::string& path) {
  std::vector<double> wavelength, width;
  kosmos::dust::read_wavelength_grid(path, wavelength, width);
}
void read_symbolic(const std::string& path) {
  std::ifstream in(path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  kosmos::series::parse_symbolic(text, path, 2);
}

const Reader readers[] = {
    {"rv_text", ".txt", [](const std::string& p) { kosmos::kepler::read_rv_file(p); }},
    {"rv_csv", ".csv", [](const std::string& p) { kosmos::kepler::read_rv_file(p); }},
    {"priors", ".txt", [](const std::string& p) { kosmos::kepler::read_prior_file(p); }},
    {"series_text", ".txt", [](const std::string& p) { kosmos::series::load_system(p, 2); }},
    {"series_symbolic", ".txt", &read_symbolic},
    {"series_hdf5", ".h5", [](const std::string& p) { kosmos::series::load_system(p, 2); }},
    {"nbody_text", ".txt", [](const std::string& p) { kosmos::nbody::read_text(p); }},
    {"nbody_binary", ".bin", [](const std::string& p) { kosmos::nbody::read_binary(p); }, true},
    {"nbody_hdf5", ".h5", [](const std::string& p) { kosmos::nbody::read_hdf5(p); }},
    {"nbody_checkpoint", ".bin", [](const std::string& p) { kosmos::nbody::read_checkpoint(p); },
     true},
    {"posterior_text", ".txt", [](const std::string& p) { kosmos::nbody::read_rv_posterior(p); }},
    {"posterior_hdf5", ".h5", [](const std::string& p) { kosmos::nbody::read_rv_posterior(p); }},
    {"dust_table", ".dat", [](const std::string& p) { kosmos::dust::read_draine_table(p); }},
    {"dust_sizes", ".txt", [](const std::string& p) { kosmos::dust::read_size_distribution(p); }},
    {"dust_wavelengths", ".txt", &read_dust_grid},
    {"dust_cells", ".txt", &read_dust_cells},
};

const Reader* chosen = nullptr;
std::string last_refusal;  // the message of the last input refused (empty: accepted)

void choose(const std::string& name) {
  for (const auto& r : readers)
    if (name == r.name) chosen = &r;
  if (chosen) return;
  std::cerr << "kosmos_fuzz: no reader '" << name << "'; readers:";
  for (const auto& r : readers) std::cerr << " " << r.name;
  std::cerr << "\n";
  std::exit(2);
}

std::string scratch_path() {
  const char* dir = std::getenv("TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/kosmos-fuzz-" + chosen->name + "-" +
         std::to_string(::getpid()) + chosen->suffix;
}
}  // namespace

// Under AddressSanitizer: HDF5's C library mallocs sizes read from a damaged file's metadata and
// handles a null result as an error, as it does in production; ASan would stop the run instead.
// (Kosmos' own allocations go through operator new, which ASan still reports; ASAN_OPTIONS given
// at run time override this.)
extern "C" const char* __asan_default_options() {
  return "allocator_may_return_null=1";
}

extern "C" int LLVMFuzzerInitialize(int*, char*** argv) {
  const char* name = std::getenv("KOSMOS_FUZZ_READER");
  if (!name) {
    std::cerr << "kosmos_fuzz: set KOSMOS_FUZZ_READER\n";
    std::exit(2);
  }
  choose(name);
  std::string threads = kosmos::Impl::kokkos_argument_spelling("--kokkos-threads=1");
  char* kokkos_argv[] = {(*argv)[0], threads.data(), nullptr};
  int kokkos_argc = 2;
  Kokkos::initialize(kokkos_argc, kokkos_argv);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = scratch_path();
  {
    std::vector<unsigned char> bytes(data, data + size);
    if (chosen->repair_checksum) repair_fnv1a_checksum(bytes);
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  }
  last_refusal.clear();
  try {
    chosen->read(path);
  } catch (const kosmos::invalid_input& e) {
    last_refusal = e.what();
  } catch (const kosmos::file_error& e) {
    last_refusal = e.what();
  }
  std::remove(path.c_str());
  return 0;
}

#ifndef KOSMOS_FUZZ_WITH_LIBFUZZER
// Replay: every file named on the command line once; exit 0 when all were handled.
int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: kosmos_fuzz READER FILE...\n";
    return 2;
  }
  ::setenv("KOSMOS_FUZZ_READER", argv[1], 1);
  LLVMFuzzerInitialize(&argc, &argv);
  int replayed = 0;
  for (int i = 2; i < argc; ++i) {
    std::ifstream in(argv[i], std::ios::binary);
    if (!in) {
      std::cerr << argv[i] << ": cannot be read\n";
      return 2;
    }
    const std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                                  std::istreambuf_iterator<char>());
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
    std::cout << argv[i] << ": " << (last_refusal.empty() ? "accepted" : "refused: " + last_refusal)
              << "\n";
    ++replayed;
  }
  std::cout << chosen->name << ": " << replayed << " input(s) handled\n";
  Kokkos::finalize();
  return 0;
}
#endif
