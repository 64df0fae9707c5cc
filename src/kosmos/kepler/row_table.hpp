#pragma once
// Rows of equal width in one row-major block: a posterior's samples or a star's kept DE-MCMC
// rows (tens of thousands of short rows per star: one allocation instead of one per row).
#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <iterator>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace kosmos {
namespace kepler {

// One row of a RowTable: a view of its values (T is double or const double).
template <class T>
class RowView {
 public:
  using value_type = std::remove_const_t<T>;
  using iterator = T*;
  using const_iterator = T*;
  RowView(T* values, std::size_t width) : values_(values), width_(width) {}
  T& operator[](std::size_t c) const { return values_[c]; }
  std::size_t size() const { return width_; }
  T* data() const { return values_; }
  T* begin() const { return values_; }
  T* end() const { return values_ + width_; }
  T& front() const { return values_[0]; }
  T& back() const { return values_[width_ - 1]; }

 private:
  T* values_;
  std::size_t width_;
};

class RowTable {
 public:
  // Rows of a table, in order.
  template <class T>
  class Iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = RowView<T>;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = RowView<T>;
    Iterator(T* at, std::size_t width) : at_(at), width_(width) {}
    RowView<T> operator*() const { return RowView<T>(at_, width_); }
    Iterator& operator++() {
      at_ += width_;
      return *this;
    }
    bool operator==(const Iterator& o) const { return at_ == o.at_; }
    bool operator!=(const Iterator& o) const { return at_ != o.at_; }

   private:
    T* at_;
    std::size_t width_;
  };
  using value_type = RowView<double>;
  using iterator = Iterator<double>;
  using const_iterator = Iterator<const double>;

  RowTable() = default;
  RowTable(std::size_t rows, std::size_t width) : width_(width), values_(rows * width) {}
  // Rows given as lists (all of one width).
  RowTable(std::initializer_list<std::initializer_list<double>> rows) {
    for (const auto& row : rows) append(row.begin(), row.size());
  }

  std::size_t size() const { return width_ > 0 ? values_.size() / width_ : 0; }
  std::size_t width() const { return width_; }
  bool empty() const { return values_.empty(); }
  RowView<double> operator[](std::size_t r) { return {values_.data() + r * width_, width_}; }
  RowView<const double> operator[](std::size_t r) const {
    return {values_.data() + r * width_, width_};
  }
  RowView<double> back() { return (*this)[size() - 1]; }
  RowView<const double> back() const { return (*this)[size() - 1]; }
  iterator begin() { return {values_.data(), width_}; }
  iterator end() { return {values_.data() + values_.size(), width_}; }
  const_iterator begin() const { return {values_.data(), width_}; }
  const_iterator end() const { return {values_.data() + values_.size(), width_}; }
  // All values, row after row.
  const double* data() const { return values_.data(); }
  double* data() { return values_.data(); }

  // Appends a row of `width` values (every row of a table has the same width).
  void append(const double* row, std::size_t width) {
    if (!empty() && width != width_)
      throw std::invalid_argument("kosmos::kepler::RowTable: a row of another width");
    width_ = width;
    values_.insert(values_.end(), row, row + width);
  }
  void reserve(std::size_t rows, std::size_t width) { values_.reserve(rows * width); }
  // Keeps the rows r with keep(r), in order.
  template <class Keep>
  void keep_if(const Keep& keep) {
    std::size_t out = 0;
    for (std::size_t r = 0; r < size(); ++r)
      if (keep(r)) {
        if (out != r)
          std::copy(values_.begin() + std::ptrdiff_t(r * width_),
                    values_.begin() + std::ptrdiff_t((r + 1) * width_),
                    values_.begin() + std::ptrdiff_t(out * width_));
        ++out;
      }
    values_.resize(out * width_);
  }

  bool operator==(const RowTable& o) const {
    return size() == o.size() && (empty() || width_ == o.width_) && values_ == o.values_;
  }
  bool operator!=(const RowTable& o) const { return !(*this == o); }

 private:
  std::size_t width_ = 0;
  std::vector<double> values_;
};
}  // namespace kepler
}  // namespace kosmos
