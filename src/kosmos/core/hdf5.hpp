// Binary I/O for the big arrays the modules read and write (posterior samples, series
// coefficients, n-body ensembles, dust cells, temperatures and SEDs), through HDF5's C API.
//
// HDF5 is optional at build time (KOSMOS_ENABLE_HDF5); without it every constructor throws
// invalid_input saying how to rebuild, so a caller never gets a silent fallback. Files are written
// like write_atomically: into a temporary beside the destination, renamed over it by commit().
// Dataset names may contain '/' ("chains/samples"); intermediate groups are created on demand.
// Arrays are stored in C order (row-major), dims outermost first, as the caller's host buffer is.
// Files are written with checksummed metadata (HDF5's 1.10 format); H5Reader reads a file without
// them (HDF5's default format) from a checksummed copy that a child process makes in TMPDIR, so
// that damaged metadata never reach HDF5's decoder in this process (hdf5.cpp).
#pragma once

#include <kosmos/core/error.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kosmos {
namespace io {

// True when this build of Kosmos can read and write HDF5 files.
bool hdf5_enabled();

// True for paths ending in ".h5" or ".hdf5" (any case): the CLI's rule for picking the format.
bool is_hdf5_path(const std::string& path);

namespace Impl {
struct H5Handles;
}

// Element types accepted by the typed calls below (explicitly instantiated in hdf5.cpp).
//   double, float, std::int32_t, std::int64_t, std::uint8_t, std::uint64_t

class H5Writer {
 public:
  // Creates the temporary file beside `path`. Throws file_error when it cannot.
  explicit H5Writer(const std::string& path);
  ~H5Writer();  // without commit(), removes the temporary: nothing half-written is left
  H5Writer(const H5Writer&) = delete;
  H5Writer& operator=(const H5Writer&) = delete;

  // Whole dataset in one call: `data` holds product(dims) elements in C order.
  template <class T>
  void write(const std::string& name, const T* data, const std::vector<std::size_t>& dims);
  template <class T>
  void write(const std::string& name, const std::vector<T>& values) {
    write(name, values.data(), {values.size()});
  }
  void write_strings(const std::string& name, const std::vector<std::string>& values);

  // How write_rows reaches a dataset made by create():
  //  - serial: through HDF5, one call at a time (the HDF5 library is not thread-safe);
  //  - concurrent: the dataset's bytes are allocated in the file at creation (contiguous, no fill
  //    value) and mapped into memory, so write_rows copies rows into the page cache without any
  //    HDF5 call and several threads may write disjoint rows at once (on the GPU machines' ext4,
  //    four threads wrote 0.59 GB in 81-93 ms where one write() stream took 131-204 ms). Where the
  //    file system cannot preallocate or map, the rows go through HDF5 under a lock instead.
  //    Other calls on this writer must not overlap concurrent write_rows.
  enum class RowWrites { serial, concurrent };

  // Large datasets written piece by piece (e.g. as chunks come off the device): create it once,
  // then fill rows [first_row, first_row + rows) of the outermost dimension.
  template <class T>
  void create(const std::string& name, const std::vector<std::size_t>& dims,
              RowWrites writes = RowWrites::serial);
  template <class T>
  void write_rows(const std::string& name, std::size_t first_row, std::size_t rows, const T* data);
  // True when write_rows on `name` copies into a memory map of the file (RowWrites::concurrent on
  // a file system that allows it).
  bool mapped(const std::string& name) const;

  // Attributes on a dataset or group ("" or "/" is the file's root group).
  void attribute(const std::string& object, const std::string& key, double value);
  void attribute(const std::string& object, const std::string& key, long long value);
  void attribute(const std::string& object, const std::string& key, const std::string& value);
  void attribute(const std::string& object, const std::string& key, const char* value) {
    attribute(object, key, std::string(value));
  }

  // Closes the file and renames it over `path`. Throws file_error on failure.
  void commit();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::string destination_;  // path_, or the target of the link path_ names
  std::string temporary_;
  std::unique_ptr<Impl::H5Handles> h_;
};

class H5Reader {
 public:
  // Opens `path` read-only. Throws file_error naming the path when it is missing or not HDF5.
  explicit H5Reader(const std::string& path);
  ~H5Reader();
  H5Reader(const H5Reader&) = delete;
  H5Reader& operator=(const H5Reader&) = delete;

  bool has(const std::string& name) const;
  // Dimensions of a dataset; file_error naming the file and dataset when it is missing, when its
  // dimensions multiply beyond std::size_t, or when the file does not hold that many values (an
  // unwritten or truncated dataset), so that a caller may size buffers by them. Every read checks
  // the same.
  std::vector<std::size_t> dims(const std::string& name) const;
  // dims(), and a file_error naming the dataset with both shapes unless it has shape `shape`, in
  // which any_extent matches any length: every reader of a file checks each dataset so.
  static constexpr std::size_t any_extent = std::size_t(-1);
  std::vector<std::size_t> expect_shape(const std::string& name,
                                        const std::vector<std::size_t>& shape) const;
  // Whole dataset, converted to T by HDF5 (e.g. a float dataset read as double). `dims` receives
  // the dataset's dimensions when given.
  template <class T>
  std::vector<T> read(const std::string& name, std::vector<std::size_t>* dims = nullptr) const;
  // Whole dataset into `data`, which holds `count` elements; file_error when the sizes differ.
  template <class T>
  void read_into(const std::string& name, T* data, std::size_t count) const;
  // Rows [first_row, first_row + rows) of the outermost dimension.
  template <class T>
  void read_rows(const std::string& name, std::size_t first_row, std::size_t rows, T* data) const;
  std::vector<std::string> read_strings(const std::string& name) const;

  bool has_attribute(const std::string& object, const std::string& key) const;
  double attribute_double(const std::string& object, const std::string& key) const;
  long long attribute_integer(const std::string& object, const std::string& key) const;
  std::string attribute_string(const std::string& object, const std::string& key) const;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::unique_ptr<Impl::H5Handles> h_;
};
}  // namespace io
}  // namespace kosmos
