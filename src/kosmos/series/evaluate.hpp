// Evaluation and differentiation of a polynomial at a vector of truncated power series in
// multiple-double precision (Verschelde 2021): the convolution stage (one launch per layer of
// jobs), then the addition stage (one launch per tree level).
//
// Series Views are LayoutLeft, rank 3, extents (d + 1, count, limbs): coefficient k of series s
// in limb l is (k, s, l), so each limb is its own array and consecutive threads read
// consecutive doubles. Real series have limbs = N; complex series have limbs = 2 N, the real
// part in limbs 0 .. N-1 and the imaginary part in limbs N .. 2N-1.
//
//   coefficients: (d + 1, num_monomials + 1, limbs), series 0 is the constant a_0
//   z:            (d + 1, num_variables, limbs)
//   value:        (d + 1, limbs)            p(z)
//   gradient:     (d + 1, num_variables, limbs)   dp/dx_v (z)
#pragma once

#include <kosmos/core/compat.hpp>
#include <kosmos/core/error.hpp>
#include <kosmos/core/multi_double.hpp>
#include <kosmos/series/impl/kernels.hpp>
#include <kosmos/series/polynomial.hpp>

#if defined(KOSMOS_ENABLE_CUDA_SPECIALIZATIONS)
#include <kosmos/series/cuda_kernels.hpp>
#endif

#include <Kokkos_Core.hpp>

#include <chrono>
#include <type_traits>

namespace kosmos {
namespace series {

// Which kernels run: the CUDA specialization where there is one (automatic), or always the
// generic Kokkos path.
enum class KernelChoice { automatic, generic };

// Seconds spent in each stage by the last timed evaluation (each stage fenced).
struct StageTimes {
  double convolution = 0, addition = 0, wall = 0;
};

namespace Impl {
template <class ExecSpace>
struct HasCudaSpecialization : std::false_type {};
#if defined(KOSMOS_ENABLE_CUDA_SPECIALIZATIONS) && defined(KOKKOS_ENABLE_CUDA)
template <>
struct HasCudaSpecialization<Kokkos::Cuda> : std::true_type {};
#endif

template <class View>
void require_series_view(const char* where, const char* name, const View& v, std::size_t degree,
                         std::size_t count, std::size_t limbs) {
  kosmos::Impl::require(v.extent(0) == degree + 1, where, name, " has ", v.extent(0),
                        " coefficients per series (degree ", std::int64_t(v.extent(0)) - 1,
                        "), expected degree ", degree);
  kosmos::Impl::require(v.extent(1) == count, where, name, ".extent(1) is ", v.extent(1),
                        ", expected ", count);
  kosmos::Impl::require(v.extent(2) == limbs, where, name, ".extent(2) is ", v.extent(2),
                        " limbs, expected ", limbs);
}
}  // namespace Impl

template <int N, bool Complex = false, class ExecSpace = Kokkos::DefaultExecutionSpace>
class PolynomialEvaluator {
 public:
  static constexpr int limbs = Complex ? 2 * N : N;
  using execution_space = ExecSpace;
  using memory_space = typename ExecSpace::memory_space;
  using Data = Kokkos::View<double**, Kokkos::LayoutLeft, ExecSpace>;
  static constexpr bool has_cuda_specialization = Impl::HasCudaSpecialization<ExecSpace>::value;

  // Builds the plan (job coordinates, once) and allocates the data array on `space`.
  PolynomialEvaluator(const ExecSpace& space, const Polynomial& p, int degree,
                      KernelChoice kernels = KernelChoice::automatic)
      : plan_(make_plan(p)), degree_(degree), kernels_(kernels) {
    kosmos::Impl::require(degree >= 0, "kosmos::series::PolynomialEvaluator", "degree ", degree,
                          " is negative");
    kosmos::Impl::require(degree <= 1 << 20, "kosmos::series::PolynomialEvaluator", "degree ",
                          degree, " is too large");
    const std::int64_t n1 = degree + 1;
    data_ = Data(Kokkos::view_alloc(space, "kosmos::series::data"),
                 std::size_t(plan_.num_slots * n1), std::size_t(limbs));
    conv_jobs_ =
        upload(space, plan_.convolution_layers, conv_offsets_, "kosmos::series::convolution_jobs");
    add_jobs_ = upload(space, plan_.addition_layers, add_offsets_, "kosmos::series::addition_jobs");
    auto scale_host = Kokkos::View<const ScaleJob*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(
        plan_.scale_jobs.data(), plan_.scale_jobs.size());
    Kokkos::View<ScaleJob*, ExecSpace> scale("kosmos::series::scale_jobs", plan_.scale_jobs.size());
    Kokkos::deep_copy(space, scale, scale_host);
    scale_jobs_ = scale;
    std::vector<int> slots{plan_.value_slot};
    slots.insert(slots.end(), plan_.gradient_slots.begin(), plan_.gradient_slots.end());
    Kokkos::View<int*, ExecSpace> out_slots("kosmos::series::output_slots", slots.size());
    Kokkos::deep_copy(space, out_slots,
                      Kokkos::View<const int*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(
                          slots.data(), slots.size()));
    output_slots_ = out_slots;
    space.fence();
  }
  PolynomialEvaluator(const Polynomial& p, int degree,
                      KernelChoice kernels = KernelChoice::automatic)
      : PolynomialEvaluator(ExecSpace(), p, degree, kernels) {}

  const EvaluationPlan& plan() const { return plan_; }
  int degree() const { return degree_; }
  // True when the hand-tuned CUDA kernels run.
  bool uses_cuda_specialization() const {
    return has_cuda_specialization && kernels_ == KernelChoice::automatic;
  }
  // Coefficient tile of the generic convolution kernel (d + 1 unless the degree is tiled).
  int generic_tile() const {
    return Impl::choose_tile(degree_, limbs, 4,
                             std::size_t(Kokkos::TeamPolicy<ExecSpace>::scratch_size_max(0)), 512);
  }

  // value := p(z), gradient := grad p(z). times (optional) receives fenced stage times.
  template <class A, class Z, class V, class G>
  void evaluate(const ExecSpace& space, const A& coefficients, const Z& z, const V& value,
                const G& gradient, StageTimes* times = nullptr) {
    check_views(coefficients, z, value, gradient);
    kosmos::Impl::ScopedRegion region("kosmos::series::evaluate");
    const auto start = std::chrono::steady_clock::now();
    stage_inputs(space, coefficients, z);
    if (times) space.fence();
    const auto t1 = std::chrono::steady_clock::now();
    run_convolutions(space);
    if (times) space.fence();
    const auto t2 = std::chrono::steady_clock::now();
    run_additions(space);
    if (times) space.fence();
    const auto t3 = std::chrono::steady_clock::now();
    gather(space, value, gradient);
    if (times) {
      space.fence();
      const auto stop = std::chrono::steady_clock::now();
      times->convolution = std::chrono::duration<double>(t2 - t1).count();
      times->addition = std::chrono::duration<double>(t3 - t2).count();
      times->wall = std::chrono::duration<double>(stop - start).count();
    }
  }
  template <class A, class Z, class V, class G>
  void evaluate(const A& coefficients, const Z& z, const V& value, const G& gradient) {
    evaluate(ExecSpace(), coefficients, z, value, gradient);
  }

  // The stages, public for benchmarks and for callers that keep inputs in place.
  template <class A, class Z>
  void stage_inputs(const ExecSpace& space, const A& a, const Z& z) {
    static_assert(Kokkos::SpaceAccessibility<ExecSpace, typename A::memory_space>::accessible,
                  "kosmos::series::PolynomialEvaluator: coefficients not accessible from the "
                  "execution space");
    static_assert(Kokkos::SpaceAccessibility<ExecSpace, typename Z::memory_space>::accessible,
                  "kosmos::series::PolynomialEvaluator: z not accessible from the execution space");
    Impl::StageInputs<ExecSpace, A, Z> f{
        data_, a, z, degree_, plan_.num_monomials + 1, plan_.first_variable_slot, limbs};
    const std::int64_t count =
        std::int64_t(degree_ + 1) * (plan_.num_monomials + 1 + plan_.num_variables);
    Kokkos::parallel_for(
        "kosmos::series::stage_inputs",
        Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, count), f);
  }

  void run_convolutions(const ExecSpace& space) {
    for (std::size_t layer = 0; layer + 1 < conv_offsets_.size(); ++layer) {
      const std::int64_t offset = conv_offsets_[layer], count = conv_offsets_[layer + 1] - offset;
      if (count == 0) continue;
#if defined(KOSMOS_ENABLE_CUDA_SPECIALIZATIONS) && defined(KOKKOS_ENABLE_CUDA)
      if constexpr (has_cuda_specialization) {
        if (kernels_ == KernelChoice::automatic) {
          Impl::CudaSeriesKernels<N, Complex>::convolution_layer(
              space.cuda_stream(), data_.data(), data_.data(), data_.data(),
              std::int64_t(data_.stride(1)), conv_jobs_.data() + offset, count, degree_);
          continue;
        }
      }
#endif
      convolution_layer_generic(space, data_, data_, data_, conv_jobs_, offset, count, degree_);
    }
  }

  void run_additions(const ExecSpace& space) {
    const std::int64_t n1 = degree_ + 1;
    if (scale_jobs_.extent(0) > 0) {
      Impl::ScaleSlots<N, Complex, ExecSpace> f{data_, scale_jobs_, degree_};
      Kokkos::parallel_for("kosmos::series::scale",
                           Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(
                               space, 0, std::int64_t(scale_jobs_.extent(0)) * n1),
                           f);
    }
    for (std::size_t layer = 0; layer + 1 < add_offsets_.size(); ++layer) {
      const std::int64_t offset = add_offsets_[layer], count = add_offsets_[layer + 1] - offset;
      if (count == 0) continue;
#if defined(KOSMOS_ENABLE_CUDA_SPECIALIZATIONS) && defined(KOKKOS_ENABLE_CUDA)
      if constexpr (has_cuda_specialization) {
        if (kernels_ == KernelChoice::automatic) {
          Impl::CudaSeriesKernels<N, Complex>::addition_layer(
              space.cuda_stream(), data_.data(), data_.data(), data_.data(),
              std::int64_t(data_.stride(1)), add_jobs_.data() + offset, count, degree_);
          continue;
        }
      }
#endif
      Impl::AdditionLayer<N, Complex, ExecSpace> f{data_, data_, data_, add_jobs_, offset, degree_};
      Kokkos::parallel_for(
          "kosmos::series::addition_layer",
          Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, count * n1), f);
    }
  }

  template <class V, class G>
  void gather(const ExecSpace& space, const V& value, const G& gradient) {
    Impl::GatherOutputs<ExecSpace, V, G> f{data_, output_slots_, value, gradient, degree_, limbs};
    Kokkos::parallel_for("kosmos::series::gather",
                         Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(
                             space, 0, std::int64_t(degree_ + 1) * (1 + plan_.num_variables)),
                         f);
  }

  // One generic convolution layer over `count` jobs starting at `offset` (public so the
  // stand-alone convolve() shares it).
  static void convolution_layer_generic(const ExecSpace& space, const Data& in1, const Data& in2,
                                        const Data& out,
                                        const Kokkos::View<const Job*, ExecSpace>& jobs,
                                        std::int64_t offset, std::int64_t count, int degree) {
    using Functor = Impl::ConvolutionLayer<N, Complex, ExecSpace>;
    const std::size_t max_scratch = std::size_t(Kokkos::TeamPolicy<ExecSpace>::scratch_size_max(0));
    const int tile = Impl::choose_tile(degree, limbs, 4, max_scratch, 512);
    const int tiles = (degree + 1 + tile - 1) / tile;
    const std::size_t bytes = Functor::scratch_bytes(tile);
    kosmos::Impl::require(bytes <= max_scratch, "kosmos::series::convolve", "team scratch of ",
                          bytes, " bytes exceeds the limit of ", max_scratch);
    Functor f;
    f.in1 = in1;
    f.in2 = in2;
    f.out = out;
    f.jobs = jobs;
    f.offset = offset;
    f.degree = degree;
    f.tile = tile;
    f.tiles = tiles;
    const auto league = count * tiles;
    kosmos::Impl::require(league < std::int64_t(1) << 31, "kosmos::series::convolve", count,
                          " jobs are too many for one launch");
    Kokkos::TeamPolicy<ExecSpace> policy(space, int(league), Kokkos::AUTO);
    Kokkos::parallel_for("kosmos::series::convolution_layer",
                         policy.set_scratch_size(0, Kokkos::PerTeam(bytes)), f);
  }

 private:
  template <class Jobs>
  static Kokkos::View<const Job*, ExecSpace> upload(const ExecSpace& space, const Jobs& layers,
                                                    std::vector<std::int64_t>& offsets,
                                                    const char* label) {
    std::vector<Job> flat;
    offsets.assign(1, 0);
    for (const auto& layer : layers) {
      flat.insert(flat.end(), layer.begin(), layer.end());
      offsets.push_back(std::int64_t(flat.size()));
    }
    Kokkos::View<Job*, ExecSpace> jobs(std::string(label), flat.size());
    Kokkos::deep_copy(space, jobs,
                      Kokkos::View<const Job*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(
                          flat.data(), flat.size()));
    space.fence();
    return jobs;
  }

  template <class A, class Z, class V, class G>
  void check_views(const A& a, const Z& z, const V& value, const G& gradient) const {
    static_assert(
        A::rank == 3 && Z::rank == 3 && G::rank == 3 && V::rank == 2,
        "kosmos::series::evaluate: coefficients, z and gradient are rank 3, value rank 2");
    static_assert(Kokkos::SpaceAccessibility<ExecSpace, typename V::memory_space>::accessible &&
                      Kokkos::SpaceAccessibility<ExecSpace, typename G::memory_space>::accessible,
                  "kosmos::series::evaluate: outputs not accessible from the execution space");
    const char* where = "kosmos::series::evaluate";
    Impl::require_series_view(where, "coefficients", a, std::size_t(degree_),
                              std::size_t(plan_.num_monomials) + 1, limbs);
    Impl::require_series_view(where, "z", z, std::size_t(degree_), std::size_t(plan_.num_variables),
                              limbs);
    Impl::require_series_view(where, "gradient", gradient, std::size_t(degree_),
                              std::size_t(plan_.num_variables), limbs);
    kosmos::Impl::require(
        value.extent(0) == std::size_t(degree_) + 1 && value.extent(1) == std::size_t(limbs), where,
        "value has extents (", value.extent(0), ", ", value.extent(1), "), expected (", degree_ + 1,
        ", ", limbs, ")");
  }

  EvaluationPlan plan_;
  int degree_;
  KernelChoice kernels_;
  Data data_;
  Kokkos::View<const Job*, ExecSpace> conv_jobs_, add_jobs_;
  std::vector<std::int64_t> conv_offsets_, add_offsets_;
  Kokkos::View<const ScaleJob*, ExecSpace> scale_jobs_;
  Kokkos::View<const int*, ExecSpace> output_slots_;
};

// z_j := x_j * y_j for every series j of the (d + 1, count, limbs) Views (truncated at degree d);
// z must not alias x or y.
template <int N, bool Complex = false, class ExecSpace, class X, class Y, class Z>
void convolve(const ExecSpace& space, const X& x, const Y& y, const Z& z,
              KernelChoice kernels = KernelChoice::automatic) {
  static_assert(X::rank == 3 && Y::rank == 3 && Z::rank == 3,
                "kosmos::series::convolve: rank-3 series Views");
  static_assert(std::is_same<typename Z::value_type, double>::value,
                "kosmos::series::convolve: z holds doubles");
  static_assert(Kokkos::SpaceAccessibility<ExecSpace, typename X::memory_space>::accessible &&
                    Kokkos::SpaceAccessibility<ExecSpace, typename Y::memory_space>::accessible &&
                    Kokkos::SpaceAccessibility<ExecSpace, typename Z::memory_space>::accessible,
                "kosmos::series::convolve: Views not accessible from the execution space");
  constexpr int L = Complex ? 2 * N : N;
  const char* where = "kosmos::series::convolve";
  kosmos::Impl::require(x.extent(0) >= 1, where, "series have no coefficients");
  const std::size_t d = x.extent(0) - 1, count = x.extent(1);
  Impl::require_series_view(where, "x", x, d, count, L);
  Impl::require_series_view(where, "y", y, d, count, L);
  Impl::require_series_view(where, "z", z, d, count, L);
  kosmos::Impl::require(z.data() != x.data() && z.data() != y.data(), where, "z aliases an input");
  kosmos::Impl::require(x.span_is_contiguous() && y.span_is_contiguous() && z.span_is_contiguous(),
                        where, "series Views must be contiguous");
  if (count == 0) return;
  using Eval = PolynomialEvaluator<N, Complex, ExecSpace>;
  using Data = typename Eval::Data;
  const std::size_t rows = (d + 1) * count;
  Data xd(const_cast<double*>(x.data()), rows, L), yd(const_cast<double*>(y.data()), rows, L),
      zd(z.data(), rows, L);
  Kokkos::View<Job*, ExecSpace> jobs(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kosmos::series::jobs"), count);
  Kokkos::parallel_for("kosmos::series::identity_jobs",
                       Kokkos::RangePolicy<ExecSpace>(space, 0, int(count)),
                       Impl::IdentityJobs<ExecSpace>{jobs});
#if defined(KOSMOS_ENABLE_CUDA_SPECIALIZATIONS) && defined(KOKKOS_ENABLE_CUDA)
  if constexpr (Eval::has_cuda_specialization) {
    if (kernels == KernelChoice::automatic) {
      Impl::CudaSeriesKernels<N, Complex>::convolution_layer(
          space.cuda_stream(), xd.data(), yd.data(), zd.data(), std::int64_t(rows), jobs.data(),
          std::int64_t(count), int(d));
      space.fence();
      return;
    }
  }
#endif
  (void)kernels;
  Eval::convolution_layer_generic(space, xd, yd, zd, jobs, 0, std::int64_t(count), int(d));
  space.fence();  // jobs is freed on return
}
template <int N, bool Complex = false, class X, class Y, class Z>
void convolve(const X& x, const Y& y, const Z& z, KernelChoice kernels = KernelChoice::automatic) {
  convolve<N, Complex>(typename Z::execution_space(), x, y, z, kernels);
}

// z_j := x_j + y_j (z may alias x or y).
template <int N, bool Complex = false, class ExecSpace, class X, class Y, class Z>
void add(const ExecSpace& space, const X& x, const Y& y, const Z& z) {
  static_assert(X::rank == 3 && Y::rank == 3 && Z::rank == 3,
                "kosmos::series::add: rank-3 series Views");
  static_assert(Kokkos::SpaceAccessibility<ExecSpace, typename X::memory_space>::accessible &&
                    Kokkos::SpaceAccessibility<ExecSpace, typename Y::memory_space>::accessible &&
                    Kokkos::SpaceAccessibility<ExecSpace, typename Z::memory_space>::accessible,
                "kosmos::series::add: Views not accessible from the execution space");
  constexpr int L = Complex ? 2 * N : N;
  const char* where = "kosmos::series::add";
  kosmos::Impl::require(x.extent(0) >= 1, where, "series have no coefficients");
  const std::size_t d = x.extent(0) - 1, count = x.extent(1);
  Impl::require_series_view(where, "x", x, d, count, L);
  Impl::require_series_view(where, "y", y, d, count, L);
  Impl::require_series_view(where, "z", z, d, count, L);
  Impl::AddSeries<N, Complex, ExecSpace, X, Y, Z> f{x, y, z};
  Kokkos::parallel_for("kosmos::series::add",
                       Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(
                           space, 0, std::int64_t(d + 1) * std::int64_t(count)),
                       f);
}
template <int N, bool Complex = false, class X, class Y, class Z>
void add(const X& x, const Y& y, const Z& z) {
  add<N, Complex>(typename Z::execution_space(), x, y, z);
}
}  // namespace series
}  // namespace kosmos
