#include <kosmos/core/hdf5.hpp>
#include <kosmos/core/io.hpp>

#include <algorithm>
#include <cctype>
#include <cstdio>

#include <unistd.h>

#if defined(KOSMOS_HAS_HDF5)
#include <hdf5.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <numeric>
#include <thread>
#include <typeinfo>
#endif

namespace kosmos {
namespace io {

bool is_hdf5_path(const std::string& path) {
  auto ends_with = [&](const std::string& suffix) {
    if (path.size() < suffix.size()) return false;
    return std::equal(suffix.rbegin(), suffix.rend(), path.rbegin(),
                      [](char a, char b) { return a == std::tolower(static_cast<unsigned char>(b)); });
  };
  return ends_with(".h5") || ends_with(".hdf5");
}

#if defined(KOSMOS_HAS_HDF5)

bool hdf5_enabled() { return true; }

namespace Impl {
// A RowWrites::concurrent dataset: its rows' bytes in a memory map of the file, or (map == nullptr)
// written through HDF5 under H5Handles::serial_writes.
struct ConcurrentDataset {
  std::vector<std::size_t> dims;
  std::size_t row_bytes = 0;
  const std::type_info* element = nullptr;
  void* map = nullptr;  // page-aligned start of the mapping
  std::size_t map_bytes = 0;
  char* data = nullptr;  // the dataset's first byte inside the mapping
  std::size_t file_offset = 0;  // the dataset's first byte in the file
};

struct H5Handles {
  hid_t file = -1;
  hid_t root = -1;  // a reader's root: the file, or the group holding a checksummed copy of it
  int fd = -1;  // the temporary file, opened again for the mappings
  std::map<std::string, ConcurrentDataset> concurrent;
  std::mutex serial_writes;

  // Unmaps every dataset; false when an unmapping failed.
  bool unmap() {
    bool ok = true;
    for (auto& entry : concurrent) {
      ConcurrentDataset& d = entry.second;
      if (d.map != nullptr) ok &= ::munmap(d.map, d.map_bytes) == 0;
      d.map = nullptr;
      d.data = nullptr;
    }
    if (fd >= 0) ok &= ::close(fd) == 0;
    fd = -1;
    return ok;
  }
};
}  // namespace Impl

namespace {

template <class T>
hid_t native_type();
template <>
hid_t native_type<double>() { return H5T_NATIVE_DOUBLE; }
template <>
hid_t native_type<float>() { return H5T_NATIVE_FLOAT; }
template <>
hid_t native_type<std::int32_t>() { return H5T_NATIVE_INT32; }
template <>
hid_t native_type<std::int64_t>() { return H5T_NATIVE_INT64; }
template <>
hid_t native_type<std::uint8_t>() { return H5T_NATIVE_UINT8; }
template <>
hid_t native_type<std::uint64_t>() { return H5T_NATIVE_UINT64; }

// HDF5 prints its own error stack to stderr by default; Kosmos reports errors itself. HDF5's exit
// handler closes what is still open, and crashes (1.10) on a file whose close failed (a full disk):
// Kosmos closes every file itself (RAII), so the handler is left out.
void silence_hdf5() {
  static std::once_flag once;
  std::call_once(once, [] {
    H5dont_atexit();  // fails harmlessly when the application used HDF5 first
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  });
}

// Closes an HDF5 identifier of any kind at scope exit.
class Id {
 public:
  explicit Id(hid_t id = -1) : id_(id) {}
  ~Id() {
    if (id_ >= 0) H5Idec_ref(id_);
  }
  Id(Id&& other) noexcept : id_(other.id_) { other.id_ = -1; }
  Id(const Id&) = delete;
  Id& operator=(const Id&) = delete;
  hid_t get() const { return id_; }
  bool ok() const { return id_ >= 0; }

 private:
  hid_t id_;
};

[[noreturn]] void fail(const std::string& path, const std::string& object, const std::string& what) {
  throw file_error(path + (object.empty() ? "" : ": '" + object + "'") + ": " + what);
}

// File access with the 1.10 format's checksummed metadata (superblock version 3, object headers
// version 2): HDF5 then refuses damaged metadata instead of decoding it.
Id checksummed_access() {
  Id fapl(H5Pcreate(H5P_FILE_ACCESS));
  H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_V110, H5F_LIBVER_LATEST);
  return fapl;
}

// The superblock version of the HDF5 file at `path` (its signature at byte 0, 512, 1024, ...),
// read without HDF5; -1 when there is no signature.
int superblock_version(const std::string& path) {
  static const char signature[8] = {'\211', 'H', 'D', 'F', '\r', '\n', '\032', '\n'};
  std::ifstream in(path, std::ios::binary);
  char head[9];
  for (std::streamoff at = 0; in; at = at == 0 ? 512 : 2 * at) {
    in.seekg(at);
    if (!in.read(head, sizeof head)) return -1;
    if (std::equal(signature, signature + 8, head)) return static_cast<unsigned char>(head[8]);
  }
  return -1;
}

constexpr const char* kCopyGroup = "kosmos_checksummed_copy";

// A file without metadata checksums (superblock version 0 or 1: HDF5's default "earliest"
// format, h5py's too) can hold damaged object headers that HDF5 1.10 decodes past its buffers
// (fuzzing found a heap overflow in H5Aexists; non-sanitized builds go on with a corrupted heap).
// So this process never decodes one: a child process copies the whole file (H5Ocopy of its root
// group into the group kCopyGroup) into a temporary in TMPDIR written with checksummed metadata,
// and the reader opens that copy. Damaged metadata can only fail the child (an error, a signal or
// a hang, killed after a limit that grows with the file's size). Returns the copy's open file,
// already unlinked.
hid_t open_checksummed_copy(const std::string& path) {
  const char* tmpdir = std::getenv("TMPDIR");
  const std::string folder = tmpdir && *tmpdir ? tmpdir : "/tmp";
  std::string copy = folder + "/kosmos-h5-copy-XXXXXX";
  const int fd = ::mkstemp(&copy[0]);
  if (fd < 0)
    fail(path, "",
         "has no metadata checksums and cannot be copied into a checksummed temporary: '" + folder +
             "' (TMPDIR) is not writable");
  ::close(fd);
  std::ifstream size_of(path, std::ios::binary | std::ios::ate);
  const double bytes = size_of ? double(size_of.tellg()) : 0.0;
  const pid_t child = ::fork();
  if (child < 0) {
    ::unlink(copy.c_str());
    fail(path, "", "cannot start the process that copies the file");
  }
  if (child == 0) {  // only HDF5 calls, then _exit: no atexit handlers, no Kokkos, no device
    const hid_t source = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    const hid_t target =
        H5Fcreate(copy.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, checksummed_access().get());
    const bool copied = source >= 0 && target >= 0 &&
                        H5Ocopy(source, ".", target, kCopyGroup, H5P_DEFAULT, H5P_DEFAULT) >= 0;
    const bool closed = target >= 0 && H5Fclose(target) >= 0;
    ::_exit(copied && closed ? 0 : 3);
  }
  const auto limit = std::chrono::seconds(5 + static_cast<long long>(bytes / 10e6));
  const auto start = std::chrono::steady_clock::now();
  int status = 0;
  pid_t done = 0;
  while ((done = ::waitpid(child, &status, WNOHANG)) == 0 &&
         std::chrono::steady_clock::now() - start < limit)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  if (done == 0) {
    ::kill(child, SIGKILL);
    ::waitpid(child, &status, 0);
    ::unlink(copy.c_str());
    fail(path, "",
         "HDF5 did not finish reading the file in " + std::to_string(limit.count()) +
             " s (damaged?)");
  }
  if (done < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    ::unlink(copy.c_str());
    if (done > 0 && WIFSIGNALED(status))
      fail(path, "",
           "HDF5 crashed (signal " + std::to_string(WTERMSIG(status)) +
               ") reading the file's metadata: damaged");
    fail(path, "", "HDF5 cannot read the file (damaged? or TMPDIR, where it is copied, full)");
  }
  const hid_t file = H5Fopen(copy.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ::unlink(copy.c_str());
  if (file < 0) fail(path, "", "cannot open the checksummed copy of the file");
  return file;
}

// A dataset, group or attribute holder named relative to a root (the file's, or the group of a
// reader's checksummed copy): "" and "/" are the root itself.
std::string object_name(const std::string& object) {
  const std::size_t first = object.find_first_not_of('/');
  return first == std::string::npos ? "." : object.substr(first);
}

std::vector<hsize_t> to_hsize(const std::vector<std::size_t>& dims) {
  return std::vector<hsize_t>(dims.begin(), dims.end());
}

std::size_t element_count(const std::vector<std::size_t>& dims) {
  return std::accumulate(dims.begin(), dims.end(), std::size_t{1}, std::multiplies<std::size_t>());
}

std::string format_dims(const std::vector<std::size_t>& dims) {
  std::string text = "(";
  for (std::size_t i = 0; i < dims.size(); ++i) text += (i ? ", " : "") + std::to_string(dims[i]);
  return text + ")";
}

// The element count of a stored dataset: dimensions whose product wraps std::size_t (a damaged or
// hostile file: (2^62 + 1, 4) would otherwise count as 4) are an error naming the dataset.
std::size_t checked_element_count(const std::string& path, const std::string& name,
                                  const std::vector<std::size_t>& dims) {
  if (std::find(dims.begin(), dims.end(), std::size_t{0}) != dims.end()) return 0;
  std::size_t count = 1;
  for (const std::size_t d : dims) {
    if (count > std::numeric_limits<std::size_t>::max() / d)
      fail(path, name, "declares dimensions " + format_dims(dims) + ", more elements than can be counted (a damaged file)");
    count *= d;
  }
  return count;
}

// A dataset's dimensions are a few bytes of metadata: a never-written chunked dataset may declare
// 2^60 values in a file of a few KB. Before anyone allocates for it, its bytes must be in the file;
// a filtered (compressed) dataset may hold up to 1032 times its stored bytes, deflate's limit.
void require_stored(const std::string& path, const std::string& name, hid_t dataset,
                    std::size_t count) {
  if (count == 0) return;
  Id type(H5Dget_type(dataset));
  Id properties(H5Dget_create_plist(dataset));
  const long double declared = static_cast<long double>(count) * H5Tget_size(type.get());
  const long double stored = static_cast<long double>(H5Dget_storage_size(dataset));
  const bool filtered = properties.ok() && H5Pget_nfilters(properties.get()) > 0;
  if (declared > (filtered ? 1032.0L : 1.0L) * stored) {
    char sizes[160];
    std::snprintf(sizes, sizeof sizes, "declares %.4g values (%.4Lg bytes) but stores %.4Lg bytes%s", double(count),
                  declared, stored, filtered ? " compressed" : "");
    fail(path, name, std::string(sizes) + ": an unwritten, truncated or damaged dataset");
  }
}

hid_t make_space(const std::vector<std::size_t>& dims) {
  if (dims.empty()) return H5Screate(H5S_SCALAR);
  const auto h = to_hsize(dims);
  return H5Screate_simple(static_cast<int>(h.size()), h.data(), nullptr);
}

// Creates the missing groups on the way to `name` ("a" and "a/b" of "a/b/c"), untimed as the
// datasets are (HDF5's own intermediate groups would record their creation times).
void create_parent_groups(hid_t file, const std::string& name) {
  Id gcpl(H5Pcreate(H5P_GROUP_CREATE));
  H5Pset_obj_track_times(gcpl.get(), 0);
  for (std::size_t pos = name.find('/'); pos != std::string::npos; pos = name.find('/', pos + 1)) {
    const std::string parent = name.substr(0, pos);
    if (parent.empty() || H5Lexists(file, parent.c_str(), H5P_DEFAULT) > 0) continue;
    Id group(H5Gcreate2(file, parent.c_str(), H5P_DEFAULT, gcpl.get(), H5P_DEFAULT));
  }
}

// Dataset creation properties without the creation and modification times HDF5 records by
// default: the same results make the same file, byte for byte (e.g. from one process and from
// several MPI ranks).
hid_t untimed_dataset() {
  const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_obj_track_times(dcpl, 0);
  return dcpl;
}

std::vector<std::size_t> dataset_dims(hid_t dataset) {
  Id space(H5Dget_space(dataset));
  const int rank = H5Sget_simple_extent_ndims(space.get());
  std::vector<hsize_t> h(static_cast<std::size_t>(std::max(rank, 0)));
  if (rank > 0) H5Sget_simple_extent_dims(space.get(), h.data(), nullptr);
  return std::vector<std::size_t>(h.begin(), h.end());
}

// Throws unless rows [first, first + rows) of the outermost dimension exist.
void require_rows(const std::string& path, const std::string& name,
                  const std::vector<std::size_t>& dims, std::size_t first, std::size_t rows) {
  if (dims.empty()) fail(path, name, "is a scalar, it has no rows");
  if (first > dims[0] || rows > dims[0] - first)
    fail(path, name,
         "rows " + std::to_string(first) + ".." + std::to_string(first + rows) + " are outside its " +
             std::to_string(dims[0]) + " rows");
}

// Selects rows [first, first + rows) of the outermost dimension in `space` and returns the
// matching memory space.
hid_t select_rows(const std::string& path, const std::string& name, hid_t space,
                  const std::vector<std::size_t>& dims, std::size_t first, std::size_t rows) {
  require_rows(path, name, dims, first, rows);
  std::vector<hsize_t> start(dims.size(), 0), count = to_hsize(dims);
  start[0] = first;
  count[0] = rows;
  H5Sselect_hyperslab(space, H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr);
  return H5Screate_simple(static_cast<int>(count.size()), count.data(), nullptr);
}

hid_t open_object(const std::string& path, hid_t file, const std::string& object) {
  const hid_t id = H5Oopen(file, object_name(object).c_str(), H5P_DEFAULT);
  if (id < 0) fail(path, object, "no such dataset or group");
  return id;
}

void write_attribute(const std::string& path, hid_t file, const std::string& object,
                     const std::string& key, hid_t type, const void* value) {
  Id target(open_object(path, file, object));
  if (H5Aexists(target.get(), key.c_str()) > 0) H5Adelete(target.get(), key.c_str());
  Id space(H5Screate(H5S_SCALAR));
  Id attr(H5Acreate2(target.get(), key.c_str(), type, space.get(), H5P_DEFAULT, H5P_DEFAULT));
  if (!attr.ok() || H5Awrite(attr.get(), type, value) < 0)
    fail(path, object, "cannot write attribute '" + key + "'");
}

// Kosmos stores its strings (names, units, metadata) fixed-length, `width` bytes each, padded with
// NULs: reading them back involves no heap that a damaged file could point anywhere.
hid_t fixed_string_type(std::size_t width) {
  const hid_t type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, std::max<std::size_t>(width, 1));
  H5Tset_strpad(type, H5T_STR_NULLPAD);
  H5Tset_cset(type, H5T_CSET_UTF8);
  return type;
}

// Most bytes of variable-length strings a reader takes from one dataset.
constexpr hsize_t max_string_bytes = hsize_t(1) << 30;

// Reads variable- or fixed-length strings from a dataset or attribute whose type is `stored`.
template <class ReadFn>
std::vector<std::string> read_string_values(hid_t stored, std::size_t count, const ReadFn& read) {
  std::vector<std::string> out;
  out.reserve(count);
  if (H5Tis_variable_str(stored) > 0) {
    std::vector<char*> raw(count, nullptr);
    Id type(H5Tcopy(stored));  // its character set: HDF5 does not convert ASCII to UTF-8
    read(type.get(), raw.data());
    for (char* s : raw) {
      out.emplace_back(s ? s : "");
      H5free_memory(s);
    }
  } else {
    const std::size_t width = H5Tget_size(stored);
    std::vector<char> raw(count * width);
    Id type(H5Tcopy(stored));  // the stored width, padding and character set: no conversion
    read(type.get(), raw.data());
    for (std::size_t i = 0; i < count; ++i) {
      const char* s = raw.data() + i * width;
      out.emplace_back(s, std::find(s, s + width, '\0'));
    }
  }
  return out;
}
}  // namespace

H5Writer::H5Writer(const std::string& path)
    : path_(path),
      destination_(write_destination(path)),
      temporary_(temporary_path(destination_)),
      h_(std::make_unique<Impl::H5Handles>()) {
  // An HDF5 file needs a regular file: /dev/null or a FIFO would be replaced by the rename.
  if (is_special_file(destination_)) fail(path_, "", "is not a regular file: HDF5 output needs one");
  remove_stale_temporaries(destination_);
  silence_hdf5();
  // the root group untimed, as every dataset (untimed_dataset): the format's object headers
  // record times unless told not to
  Id fcpl(H5Pcreate(H5P_FILE_CREATE));
  H5Pset_obj_track_times(fcpl.get(), 0);
  h_->file = H5Fcreate(temporary_.c_str(), H5F_ACC_TRUNC, fcpl.get(), checksummed_access().get());
  if (h_->file < 0) fail(path_, "", "cannot create '" + temporary_ + "' for writing");
}

H5Writer::~H5Writer() {
  if (h_ && h_->file >= 0) {
    h_->unmap();
    H5Fclose(h_->file);
    std::remove(temporary_.c_str());
  }
}

namespace {
// Maps `bytes` bytes of file `fd` from `offset` after allocating them on disk (so that a full disk
// is an error here, not a SIGBUS in a later copy). Returns false, with nothing mapped, where the
// file system cannot preallocate (fallocate, not posix_fallocate: its fallback would write every
// byte twice) or map; throws when the disk is full.
bool map_range([[maybe_unused]] const std::string& path, [[maybe_unused]] const std::string& name,
               [[maybe_unused]] int fd, [[maybe_unused]] std::size_t offset,
               [[maybe_unused]] std::size_t bytes, [[maybe_unused]] Impl::ConcurrentDataset& d) {
#if !defined(__linux__)
  return false;  // fallocate is Linux's
#else
  if (::fallocate(fd, 0, off_t(offset), off_t(bytes)) != 0) {
    const int error = errno;
    if (error == ENOSPC || error == EFBIG || error == EDQUOT)
      fail(path, name, "cannot allocate " + std::to_string(bytes) + " bytes: " + std::strerror(error));
    return false;
  }
  const std::size_t page = std::size_t(::sysconf(_SC_PAGESIZE)), start = offset / page * page;
  void* map = ::mmap(nullptr, offset + bytes - start, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off_t(start));
  if (map == MAP_FAILED) return false;
  d.map = map;
  d.map_bytes = offset + bytes - start;
  d.data = static_cast<char*>(map) + (offset - start);
  d.file_offset = offset;
  return true;
#endif
}

// Starts the disk writes of bytes just copied into a mapping, so that commit()'s fsync finds most
// of a large dataset written already instead of writing all of it at the end. A hint: an error
// here comes back from that fsync.
void start_writeback([[maybe_unused]] int fd, [[maybe_unused]] std::size_t offset,
                     [[maybe_unused]] std::size_t bytes) {
#if defined(__linux__)
  ::sync_file_range(fd, off_t(offset), off_t(bytes), SYNC_FILE_RANGE_WRITE);
#endif
}
}  // namespace

template <class T>
void H5Writer::create(const std::string& name, const std::vector<std::size_t>& dims,
                      RowWrites writes) {
  Id space(make_space(dims));
  create_parent_groups(h_->file, name);
  Id dcpl(untimed_dataset());
  const bool concurrent = writes == RowWrites::concurrent && !dims.empty();
  if (concurrent) {
    // Bytes in the file now, at one place, never written by HDF5: the mapping owns them.
    H5Pset_layout(dcpl.get(), H5D_CONTIGUOUS);
    H5Pset_alloc_time(dcpl.get(), H5D_ALLOC_TIME_EARLY);
    H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER);
  }
  Id dataset(H5Dcreate2(h_->file, name.c_str(), native_type<T>(), space.get(), H5P_DEFAULT,
                        dcpl.get(), H5P_DEFAULT));
  if (!dataset.ok()) fail(path_, name, "cannot create the dataset (does it exist already?)");
  if (!concurrent) return;
  const std::size_t bytes = sizeof(T) * element_count(dims);
  Impl::ConcurrentDataset d;
  d.dims = dims;
  d.row_bytes = bytes / std::max<std::size_t>(dims[0], 1);
  d.element = &typeid(T);
  const haddr_t offset = H5Dget_offset(dataset.get());
  if (bytes > 0 && offset != HADDR_UNDEF) {
    if (h_->fd < 0) h_->fd = ::open(temporary_.c_str(), O_RDWR | O_CLOEXEC);
    if (h_->fd >= 0) map_range(path_, name, h_->fd, std::size_t(offset), bytes, d);
  }
  h_->concurrent.emplace(name, d);
}

bool H5Writer::mapped(const std::string& name) const {
  const auto found = h_->concurrent.find(name);
  return found != h_->concurrent.end() && found->second.data != nullptr;
}

template <class T>
void H5Writer::write(const std::string& name, const T* data, const std::vector<std::size_t>& dims) {
  create<T>(name, dims);
  Id dataset(H5Dopen2(h_->file, name.c_str(), H5P_DEFAULT));
  if (element_count(dims) > 0 &&
      H5Dwrite(dataset.get(), native_type<T>(), H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
    fail(path_, name, "write failed (disk full?)");
}

template <class T>
void H5Writer::write_rows(const std::string& name, std::size_t first_row, std::size_t rows,
                          const T* data) {
  const auto found = h_->concurrent.find(name);
  std::unique_lock<std::mutex> serial(h_->serial_writes, std::defer_lock);
  if (found != h_->concurrent.end()) {
    const Impl::ConcurrentDataset& d = found->second;
    require_rows(path_, name, d.dims, first_row, rows);
    if (*d.element != typeid(T)) fail(path_, name, "rows of another element type than its own");
    if (d.data != nullptr) {
      std::memcpy(d.data + first_row * d.row_bytes, data, rows * d.row_bytes);
      start_writeback(h_->fd, d.file_offset + first_row * d.row_bytes, rows * d.row_bytes);
      return;
    }
    serial.lock();
  }
  Id dataset(H5Dopen2(h_->file, name.c_str(), H5P_DEFAULT));
  if (!dataset.ok()) fail(path_, name, "no such dataset (create it first)");
  const auto dims = dataset_dims(dataset.get());
  Id space(H5Dget_space(dataset.get()));
  Id memory(select_rows(path_, name, space.get(), dims, first_row, rows));
  if (rows > 0 && H5Dwrite(dataset.get(), native_type<T>(), memory.get(), space.get(), H5P_DEFAULT,
                           data) < 0)
    fail(path_, name, "write failed (disk full?)");
}

void H5Writer::write_strings(const std::string& name, const std::vector<std::string>& values) {
  std::size_t width = 1;
  for (const auto& v : values) width = std::max(width, v.size());
  std::vector<char> raw(width * values.size(), '\0');
  for (std::size_t i = 0; i < values.size(); ++i)
    std::copy(values[i].begin(), values[i].end(), raw.begin() + std::ptrdiff_t(i * width));
  Id type(fixed_string_type(width));
  Id space(make_space({values.size()}));
  create_parent_groups(h_->file, name);
  Id dcpl(untimed_dataset());
  Id dataset(H5Dcreate2(h_->file, name.c_str(), type.get(), space.get(), H5P_DEFAULT, dcpl.get(),
                        H5P_DEFAULT));
  if (!dataset.ok()) fail(path_, name, "cannot create the dataset (does it exist already?)");
  if (!values.empty() &&
      H5Dwrite(dataset.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, raw.data()) < 0)
    fail(path_, name, "write failed (disk full?)");
}

void H5Writer::attribute(const std::string& object, const std::string& key, double value) {
  write_attribute(path_, h_->file, object, key, H5T_NATIVE_DOUBLE, &value);
}

void H5Writer::attribute(const std::string& object, const std::string& key, long long value) {
  write_attribute(path_, h_->file, object, key, H5T_NATIVE_LLONG, &value);
}

void H5Writer::attribute(const std::string& object, const std::string& key,
                         const std::string& value) {
  Id type(fixed_string_type(value.size()));
  write_attribute(path_, h_->file, object, key, type.get(), value.empty() ? "" : value.data());
}

void H5Writer::commit() {
  if (h_->file < 0) fail(path_, "", "already committed");
  const bool unmapped = h_->unmap();
  const herr_t closed = H5Fclose(h_->file);
  h_->file = -1;
  if (closed < 0 || !unmapped) {
    std::remove(temporary_.c_str());
    fail(path_, "", "closing the file failed (disk full?)");
  }
  commit_temporary(temporary_, destination_, path_);
}

H5Reader::H5Reader(const std::string& path) : path_(path), h_(std::make_unique<Impl::H5Handles>()) {
  silence_hdf5();
  if (::access(path.c_str(), R_OK) != 0) fail(path_, "", "cannot open for reading");
  const int version = superblock_version(path);
  if (version < 0) fail(path_, "", "is not an HDF5 file");
  if (version >= 2) {
    h_->file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    if (h_->file < 0) fail(path_, "", "cannot open the HDF5 file (damaged?)");
    h_->root = H5Gopen2(h_->file, "/", H5P_DEFAULT);
  } else {
    h_->file = open_checksummed_copy(path_);
    h_->root = H5Gopen2(h_->file, kCopyGroup, H5P_DEFAULT);
  }
  if (h_->root < 0) {
    H5Fclose(h_->file);
    h_->file = -1;
    fail(path_, "", "cannot open the HDF5 file's root group (damaged?)");
  }
}

H5Reader::~H5Reader() {
  if (h_ && h_->root >= 0) H5Gclose(h_->root);
  if (h_ && h_->file >= 0) H5Fclose(h_->file);
}

bool H5Reader::has(const std::string& dataset) const {
  const std::string name = object_name(dataset);
  // H5Lexists fails (rather than answering false) when an intermediate group is missing.
  std::size_t pos = 0;
  while ((pos = name.find('/', pos + 1)) != std::string::npos) {
    if (H5Lexists(h_->root, name.substr(0, pos).c_str(), H5P_DEFAULT) <= 0) return false;
  }
  return H5Lexists(h_->root, name.c_str(), H5P_DEFAULT) > 0;
}

namespace {
hid_t open_dataset(const std::string& path, hid_t file, const std::string& name) {
  const hid_t id = H5Dopen2(file, object_name(name).c_str(), H5P_DEFAULT);
  if (id < 0) fail(path, name, "no such dataset");
  return id;
}

// The dimensions of an open dataset after the checks that every reader needs before it sizes a
// buffer by them: a countable product, and that many values stored in the file.
std::vector<std::size_t> checked_dims(const std::string& path, const std::string& name, hid_t dataset,
                                      std::size_t* count = nullptr) {
  auto dims = dataset_dims(dataset);
  const std::size_t n = checked_element_count(path, name, dims);
  require_stored(path, name, dataset, n);
  if (count) *count = n;
  return dims;
}
}  // namespace

std::vector<std::size_t> H5Reader::dims(const std::string& name) const {
  Id dataset(open_dataset(path_, h_->root, name));
  return checked_dims(path_, name, dataset.get());
}

std::vector<std::size_t> H5Reader::expect_shape(const std::string& name,
                                                const std::vector<std::size_t>& shape) const {
  const auto found = dims(name);
  bool matches = found.size() == shape.size();
  for (std::size_t i = 0; matches && i < shape.size(); ++i)
    matches = shape[i] == any_extent || shape[i] == found[i];
  if (!matches) {
    std::string expected = "(";
    for (std::size_t i = 0; i < shape.size(); ++i)
      expected += (i ? ", " : "") + (shape[i] == any_extent ? std::string("*") : std::to_string(shape[i]));
    fail(path_, name, "has shape " + format_dims(found) + ", expected " + expected + ")");
  }
  return found;
}

template <class T>
void H5Reader::read_into(const std::string& name, T* data, std::size_t count) const {
  Id dataset(open_dataset(path_, h_->root, name));
  std::size_t stored = 0;
  checked_dims(path_, name, dataset.get(), &stored);
  if (stored != count)
    fail(path_, name,
         "holds " + std::to_string(stored) + " values, expected " + std::to_string(count));
  if (count > 0 &&
      H5Dread(dataset.get(), native_type<T>(), H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
    fail(path_, name, "read failed (wrong type or damaged file)");
}

template <class T>
std::vector<T> H5Reader::read(const std::string& name, std::vector<std::size_t>* dims_out) const {
  const auto d = dims(name);
  const std::size_t count = element_count(d);  // checked by dims()
  std::vector<T> values;
  try {
    values.resize(count);
  } catch (const std::exception&) {  // bad_alloc, or length_error beyond max_size
    char size[64];
    std::snprintf(size, sizeof size, "%.4g values (%.4g bytes)", double(count),
                  double(count) * double(sizeof(T)));
    fail(path_, name, std::string("holds ") + size + ": more than this process can allocate");
  }
  read_into(name, values.data(), values.size());
  if (dims_out) *dims_out = d;
  return values;
}

template <class T>
void H5Reader::read_rows(const std::string& name, std::size_t first_row, std::size_t rows,
                         T* data) const {
  Id dataset(open_dataset(path_, h_->root, name));
  const auto d = checked_dims(path_, name, dataset.get());
  Id space(H5Dget_space(dataset.get()));
  Id memory(select_rows(path_, name, space.get(), d, first_row, rows));
  if (rows > 0 &&
      H5Dread(dataset.get(), native_type<T>(), memory.get(), space.get(), H5P_DEFAULT, data) < 0)
    fail(path_, name, "read failed (wrong type or damaged file)");
}

std::vector<std::string> H5Reader::read_strings(const std::string& name) const {
  Id dataset(open_dataset(path_, h_->root, name));
  Id stored(H5Dget_type(dataset.get()));
  if (H5Tget_class(stored.get()) != H5T_STRING) fail(path_, name, "is not a string dataset");
  std::size_t count = 0;
  checked_dims(path_, name, dataset.get(), &count);
  if (H5Tis_variable_str(stored.get()) > 0) {
    // Variable-length strings (another tool's file) live in a heap the dataset only points into:
    // its size is asked before anything is read or allocated.
    Id space(H5Dget_space(dataset.get()));
    Id type(H5Tcopy(stored.get()));
    hsize_t heap_bytes = 0;
    if (H5Dvlen_get_buf_size(dataset.get(), type.get(), space.get(), &heap_bytes) < 0 ||
        heap_bytes > max_string_bytes)
      fail(path_, name, "variable-length strings that cannot be sized or exceed " +
                            std::to_string(max_string_bytes) + " bytes (a damaged file)");
  }
  return read_string_values(stored.get(), count,
                            [&](hid_t type, void* buffer) {
                              if (H5Dread(dataset.get(), type, H5S_ALL, H5S_ALL, H5P_DEFAULT,
                                          buffer) < 0)
                                fail(path_, name, "read failed");
                            });
}

bool H5Reader::has_attribute(const std::string& object, const std::string& key) const {
  if (!object.empty() && object != "/" && !has(object)) return false;
  Id target(open_object(path_, h_->root, object));
  return H5Aexists(target.get(), key.c_str()) > 0;
}

namespace {
hid_t open_attribute(const std::string& path, hid_t file, const std::string& object,
                     const std::string& key) {
  Id target(open_object(path, file, object));
  const hid_t attr = H5Aopen(target.get(), key.c_str(), H5P_DEFAULT);
  if (attr < 0) fail(path, object, "has no attribute '" + key + "'");
  // The callers read one value: an array attribute would overrun their buffer.
  Id space(H5Aget_space(attr));
  const hssize_t points = space.ok() ? H5Sget_simple_extent_npoints(space.get()) : -1;
  if (points != 1) {
    H5Aclose(attr);
    fail(path, object, "attribute '" + key + "' holds " + std::to_string(points) + " values, not one");
  }
  return attr;
}

template <class T>
T numeric_attribute(const std::string& path, hid_t file, const std::string& object,
                    const std::string& key, hid_t type) {
  Id attr(open_attribute(path, file, object, key));
  T value{};
  if (H5Aread(attr.get(), type, &value) < 0)
    fail(path, object, "attribute '" + key + "' is not a number");
  return value;
}
}  // namespace

double H5Reader::attribute_double(const std::string& object, const std::string& key) const {
  return numeric_attribute<double>(path_, h_->root, object, key, H5T_NATIVE_DOUBLE);
}

long long H5Reader::attribute_integer(const std::string& object, const std::string& key) const {
  return numeric_attribute<long long>(path_, h_->root, object, key, H5T_NATIVE_LLONG);
}

std::string H5Reader::attribute_string(const std::string& object, const std::string& key) const {
  Id attr(open_attribute(path_, h_->root, object, key));
  Id stored(H5Aget_type(attr.get()));
  if (H5Tget_class(stored.get()) != H5T_STRING)
    fail(path_, object, "attribute '" + key + "' is not a string");
  return read_string_values(stored.get(), 1, [&](hid_t type, void* buffer) {
    if (H5Aread(attr.get(), type, buffer) < 0) fail(path_, object, "attribute '" + key + "' unreadable");
  })[0];
}

#else  // built without HDF5: every entry point says so, naming the file.

bool hdf5_enabled() { return false; }

namespace Impl {
struct H5Handles {};
}  // namespace Impl

namespace {
[[noreturn]] void unavailable(const std::string& path) {
  throw invalid_input(path +
                      ": this Kosmos was built without HDF5; rebuild with -DKOSMOS_ENABLE_HDF5=ON "
                      "(Debian package libhdf5-dev) or use a text file name");
}
}  // namespace

H5Writer::H5Writer(const std::string& path) : path_(path) { unavailable(path); }
H5Writer::~H5Writer() = default;
template <class T>
void H5Writer::write(const std::string&, const T*, const std::vector<std::size_t>&) {
  unavailable(path_);
}
template <class T>
void H5Writer::create(const std::string&, const std::vector<std::size_t>&, RowWrites) {
  unavailable(path_);
}
bool H5Writer::mapped(const std::string&) const { unavailable(path_); }
template <class T>
void H5Writer::write_rows(const std::string&, std::size_t, std::size_t, const T*) {
  unavailable(path_);
}
void H5Writer::write_strings(const std::string&, const std::vector<std::string>&) { unavailable(path_); }
void H5Writer::attribute(const std::string&, const std::string&, double) { unavailable(path_); }
void H5Writer::attribute(const std::string&, const std::string&, long long) { unavailable(path_); }
void H5Writer::attribute(const std::string&, const std::string&, const std::string&) {
  unavailable(path_);
}
void H5Writer::commit() { unavailable(path_); }

H5Reader::H5Reader(const std::string& path) : path_(path) { unavailable(path); }
H5Reader::~H5Reader() = default;
bool H5Reader::has(const std::string&) const { unavailable(path_); }
std::vector<std::size_t> H5Reader::dims(const std::string&) const { unavailable(path_); }
std::vector<std::size_t> H5Reader::expect_shape(const std::string&, const std::vector<std::size_t>&) const {
  unavailable(path_);
}
template <class T>
std::vector<T> H5Reader::read(const std::string&, std::vector<std::size_t>*) const {
  unavailable(path_);
}
template <class T>
void H5Reader::read_into(const std::string&, T*, std::size_t) const {
  unavailable(path_);
}
template <class T>
void H5Reader::read_rows(const std::string&, std::size_t, std::size_t, T*) const {
  unavailable(path_);
}
std::vector<std::string> H5Reader::read_strings(const std::string&) const { unavailable(path_); }
bool H5Reader::has_attribute(const std::string&, const std::string&) const { unavailable(path_); }
double H5Reader::attribute_double(const std::string&, const std::string&) const { unavailable(path_); }
long long H5Reader::attribute_integer(const std::string&, const std::string&) const {
  unavailable(path_);
}
std::string H5Reader::attribute_string(const std::string&, const std::string&) const {
  unavailable(path_);
}

#endif

#define KOSMOS_IMPL_INSTANTIATE_HDF5(T)                                                          \
  template void H5Writer::write<T>(const std::string&, const T*, const std::vector<std::size_t>&); \
  template void H5Writer::create<T>(const std::string&, const std::vector<std::size_t>&,         \
                                    H5Writer::RowWrites);                                          \
  template void H5Writer::write_rows<T>(const std::string&, std::size_t, std::size_t, const T*);   \
  template std::vector<T> H5Reader::read<T>(const std::string&, std::vector<std::size_t>*) const;  \
  template void H5Reader::read_into<T>(const std::string&, T*, std::size_t) const;                 \
  template void H5Reader::read_rows<T>(const std::string&, std::size_t, std::size_t, T*) const;

KOSMOS_IMPL_INSTANTIATE_HDF5(double)
KOSMOS_IMPL_INSTANTIATE_HDF5(float)
KOSMOS_IMPL_INSTANTIATE_HDF5(std::int32_t)
KOSMOS_IMPL_INSTANTIATE_HDF5(std::int64_t)
KOSMOS_IMPL_INSTANTIATE_HDF5(std::uint8_t)
KOSMOS_IMPL_INSTANTIATE_HDF5(std::uint64_t)
#undef KOSMOS_IMPL_INSTANTIATE_HDF5

}  // namespace io
}  // namespace kosmos
