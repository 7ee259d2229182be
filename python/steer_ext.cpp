// steer._steer: the Python extension over the host library (docs/python.md). A Simulator holds
// one parsed config (parse_config, as the CLI reads it) and runs batches of rollouts with
// per-rollout x0, u and θ through run_batch (steer/backend.h) on the config's backend and
// precision. The C++ core knows nothing of Python; everything Python-facing is in this file and
// in python/steer/.
//
// Memory: an input array (numpy through the buffer protocol; torch, jax or anything else
// through DLPack) that is C-contiguous, aligned and of the config's dtype is read by the engine
// in place (Batch::view_inputs, no copy); any other layout is first copied into C order. The
// outputs are the engine's own result arrays, moved into a heap block that a capsule owns:
// the returned array points at them and frees them with its last reference (no copy). On a
// CUDA build, inputs in CUDA device memory stay there: the CUDA backend reads them in place
// and writes the results into device arrays (BatchResult::device), returned through DLPack.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "config/config.h"
#include "config/json_reader.h"
#include "experiment/experiment.h"
#include "models/registry.h"
#include "problem/batch_runner.h"
#include "problem/problem.h"
#include "steer/backend.h"
#include "steer/cpu_backend.h"
#include "validate/validator.h"

#ifdef STEER_CUDA_EMULATION
#include <cuda_runtime.h>  // the emulated device (tests/backend/cuda_emulation), for its test helpers below
#endif

namespace nb = nanobind;
using namespace nb::literals;

namespace steer {
namespace {

// the result arrays of one batch call, owned by a capsule once returned
template <class S>
struct Owned {
  BatchResult<S> r;
};

// An ndarray viewing v's storage; `owner` keeps the storage alive (the capsule of the block
// that holds v).
template <class S>
nb::object view_of(std::vector<S>& v, std::initializer_list<size_t> shape, nb::handle owner) {
  std::vector<size_t> sh(shape);
  return nb::cast(nb::ndarray<nb::numpy, S>(v.data(), sh.size(), sh.data(), owner));
}

// An array over CUDA device memory (C order), returned as an object with __dlpack__ that
// torch.from_dlpack or jax.dlpack.from_dlpack take without a copy; `owner` keeps it alive.
template <class S>
nb::object device_view_of(S* p, std::initializer_list<size_t> shape, nb::handle owner,
                          int device_id) {
  std::vector<size_t> sh(shape);
  return nb::cast(nb::ndarray<nb::array_api, S>(
      p, sh.size(), sh.data(), owner, nullptr, nb::dtype<S>(), nb::device::cuda::value, device_id));
}

// the dtype name a config's precision asks for
const char* dtype_name(bool f32) { return f32 ? "float32" : "float64"; }

std::string shape_text(const std::vector<long long>& s) {
  std::string t = "(";
  for (size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
  return t + (s.size() == 1 ? ",)" : ")");
}

std::string shape_of(const nb::ndarray<nb::ro>& a) {
  std::vector<long long> s;
  for (size_t i = 0; i < a.ndim(); ++i) s.push_back((long long)a.shape(i));
  return shape_text(s);
}

// Checks a's device, dtype and shape; the message names the argument, the shape and dtype
// expected and those given. `device_ok`: CUDA device memory is accepted (a CUDA build's rollout).
template <class S>
void check_array(const char* name, const nb::ndarray<nb::ro>& a, const std::vector<long long>& want,
                 bool device_ok) {
  const bool f32 = std::is_same<S, float>::value;
  const int dev = a.device_type();
  if (dev == nb::device::cuda::value && !device_ok) {
#ifdef STEER_WITH_CUDA
    throw nb::value_error(
        (std::string(name) +
         ": a CPU array is expected here (this call runs on host memory); move it to the CPU first")
            .c_str());
#else
    throw nb::value_error(
        (std::string(name) +
         ": a CUDA device array, but this build of steer has no CUDA backend (built without a CUDA "
         "compiler); move it to the CPU first (.cpu(), numpy)")
            .c_str());
#endif
  }
  if (dev != nb::device::cpu::value && dev != nb::device::cuda::value)
    throw nb::value_error((std::string(name) +
                           ": an array in CPU memory (or CUDA memory on a CUDA build) is expected, "
                           "got DLPack device type " +
                           std::to_string(dev))
                              .c_str());
  if (a.dtype() != nb::dtype<S>())
    throw nb::value_error((std::string(name) + ": dtype " + dtype_name(f32) +
                           " expected (simulation.precision), shape " + shape_text(want) +
                           "; convert with .astype(" + dtype_name(f32) + ")")
                              .c_str());
  bool ok = a.ndim() == want.size();
  for (size_t i = 0; ok && i < want.size(); ++i) ok = (long long)a.shape(i) == want[i];
  if (!ok)
    throw nb::value_error(
        (std::string(name) + ": shape " + shape_text(want) + " expected, got " + shape_of(a))
            .c_str());
}

// whether a (of shape `want`) is laid out as the engine reads it: C-contiguous (strides in
// elements; a dimension of extent 1 may have any stride) and its first element aligned for S
template <class S>
bool engine_layout(const nb::ndarray<nb::ro>& a, const std::vector<long long>& want) {
  if (reinterpret_cast<std::uintptr_t>(a.data()) % alignof(S) != 0) return false;
  long long expect = 1;
  for (size_t i = want.size(); i-- > 0;) {
    if (want[i] != 1 && a.stride(i) != expect) return false;
    expect *= want[i];
  }
  return true;
}

// Copies a (checked, CPU memory, any strides) into dst in C order.
template <class S>
void copy_c_order(const nb::ndarray<nb::ro>& a, const std::vector<long long>& want,
                  std::vector<S>& dst) {
  size_t n = 1;
  for (long long w : want) n *= size_t(w);
  dst.resize(n);
  const S* src = static_cast<const S*>(a.data());
  if (engine_layout<S>(a, want)) {
    std::copy(src, src + n, dst.begin());
    return;
  }
  // strided: walk the index in C order (strides in elements)
  std::vector<long long> idx(want.size(), 0);
  for (size_t k = 0; k < n; ++k) {
    long long off = 0;
    for (size_t i = 0; i < want.size(); ++i) off += idx[i] * a.stride(i);
    dst[k] = src[off];
    for (size_t i = want.size(); i-- > 0;) {
      if (++idx[i] < want[i]) break;
      idx[i] = 0;
    }
  }
}

// a copy of a CPU array in C order, checked as check_array checks it (the validator's input)
template <class S>
void gather(const char* name, const nb::ndarray<nb::ro>& a, const std::vector<long long>& want,
            std::vector<S>& dst) {
  check_array<S>(name, a, want, false);
  copy_c_order<S>(a, want, dst);
}

// The memory the engine reads for one input: a's own when it has the engine's layout (no copy),
// else a C-order copy in `copy`. A CUDA array must have that layout already: the device is
// not read from the host to rearrange it.
template <class S>
const S* engine_input(const char* name, const nb::ndarray<nb::ro>& a,
                      const std::vector<long long>& want, std::vector<S>& copy, bool device_ok) {
  check_array<S>(name, a, want, device_ok);
  if (engine_layout<S>(a, want)) return static_cast<const S*>(a.data());
  if (a.device_type() == nb::device::cuda::value)
    throw nb::value_error(
        (std::string(name) +
         ": a CUDA array is read in place and must be C-contiguous; pass .contiguous()")
            .c_str());
  copy_c_order<S>(a, want, copy);
  return copy.data();
}

// The config's model in one precision as arrays in and out: the model's BatchRunner
// (src/problem/batch_runner.h, the runner the CLI's problem runs), which returns ∂L/∂θ for
// every θ slot here, and the Python-side checks and array views around it
class ArrayRunner {
 public:
  virtual ~ArrayRunner() = default;
  // buffers: the addresses of the result arrays; inputs: those the engine read x0, u, θ from
  virtual nb::dict rollout(const nb::ndarray<nb::ro>& x0, const nb::ndarray<nb::ro>& u,
                           const nb::ndarray<nb::ro>& th, bool grad, int traj_stride, int threads,
                           std::vector<std::uintptr_t>& buffers,
                           std::vector<std::uintptr_t>& inputs) = 0;
  virtual nb::dict default_batch(const ExperimentConfig& c) = 0;
  virtual BackendKind backend() const = 0;
};

template <class S>
class PrecisionRunner : public ArrayRunner {
 public:
  PrecisionRunner(const ExperimentConfig& c, BackendKind backend) {
    RunnerOptions options;
    options.every_parameter_gradient = true;
    runner_ = make_runner(c, backend, options);
    shape_ = c.checkpoint_plan().shape;
  }

  nb::dict rollout(const nb::ndarray<nb::ro>& x0, const nb::ndarray<nb::ro>& u,
                   const nb::ndarray<nb::ro>& th, bool grad, int traj_stride, int threads,
                   std::vector<std::uintptr_t>& buffers,
                   std::vector<std::uintptr_t>& inputs) override {
    const long long nx = runner_->nx(), nu = runner_->nu(), np = runner_->np(), T = shape_.steps;
    if (x0.ndim() != 2)
      throw nb::value_error(
          ("x0: shape (B, " + std::to_string(nx) + ") expected, got " + shape_of(x0)).c_str());
    const long long B = (long long)x0.shape(0);
    if (B < 1) throw nb::value_error("x0: the batch needs at least one rollout (B >= 1)");
    RolloutShape sh = shape_;
    if (traj_stride < 0 || traj_stride > T)
      throw nb::value_error(
          ("trajectory_stride: must be in [0, T] = [0, " + std::to_string(T) + "]").c_str());
    sh.traj_stride = traj_stride;
    // CUDA device arrays: all three on one device, and only to the CUDA backend of a CUDA build
#ifdef STEER_WITH_CUDA
    const bool on_device = x0.device_type() == nb::device::cuda::value;
    if (on_device && runner_->backend() != BackendKind::kCuda)
      throw nb::value_error(("x0: a CUDA device array, but this simulator runs on the " +
                             std::string(backend_name(runner_->backend())) +
                             " backend (simulation.backend = cuda or auto with a device reads "
                             "device arrays); move it to the CPU first")
                                .c_str());
#else
    const bool on_device = false;  // check_array refuses device arrays, naming the argument
#endif
    check_array<S>("x0", x0, {B, nx},
                   on_device);  // a CPU build refuses a device x0 by its name first
    const char* names[3] = {"x0", "u", "theta"};
    const nb::ndarray<nb::ro>* arrays[3] = {&x0, &u, &th};
#ifndef STEER_WITH_CUDA
    // a CPU build names a device u or theta as it names a device x0, before any device mismatch
    for (int k = 1; k < 3; ++k)
      if (arrays[k]->device_type() == nb::device::cuda::value)
        check_array<S>(names[k], *arrays[k], {}, false);
#endif
    for (int k = 1; k < 3; ++k)
      if (arrays[k]->device_type() != x0.device_type() ||
          (on_device && arrays[k]->device_id() != x0.device_id()))
        throw nb::value_error(
            (std::string(names[k]) + ": on another device than x0 (" +
             (on_device ? "CUDA device " + std::to_string(x0.device_id()) : std::string("CPU")) +
             "); pass x0, u and theta on one device")
                .c_str());
    // in place where the layout allows (Batch::view_inputs), else C-order copies kept here
    std::vector<S> copies[3];
    const S* px0 = engine_input<S>("x0", x0, {B, nx}, copies[0], on_device);
    const S* pu = engine_input<S>("u", u, {B, T, nu}, copies[1], on_device);
    const S* pth = engine_input<S>("theta", th, {B, np}, copies[2], on_device);
    Batch<S> batch;
    batch.size = int(B), batch.nx = int(nx), batch.nu = int(nu), batch.np = int(np),
    batch.steps = int(T);
    batch.view_inputs(px0, pu, pth, on_device ? Memory::kDevice : Memory::kHost,
                      on_device ? int(x0.device_id()) : 0);
    inputs.assign({std::uintptr_t(px0), std::uintptr_t(pu), std::uintptr_t(pth)});
    auto* owned = new Owned<S>();
    nb::capsule cap(owned, [](void* p) noexcept { delete static_cast<Owned<S>*>(p); });
    double engine_seconds = 0;  // run_batch alone, the rollouts' time without the binding's
    {
      // the rollouts run on the engine's OpenMP threads with the GIL released, so other
      // Python threads (another rollout included) run meanwhile; the input arrays stay
      // referenced by this call's arguments meanwhile
      nb::gil_scoped_release unlocked;
      const auto t0 = std::chrono::steady_clock::now();
      runner_->run(batch, sh, grad, owned->r, threads);
      engine_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    BatchResult<S>& r = owned->r;
    const size_t b = size_t(B), slots = size_t(sh.traj_slots());
    // the result arrays: host vectors, or the device block of a device batch
    auto result = [&](std::vector<S>& host, S* device, std::initializer_list<size_t> shape) {
      if (r.memory == Memory::kDevice) {
        buffers.push_back(std::uintptr_t(device));
        return device_view_of(device, shape, cap, int(x0.device_id()));
      }
      buffers.push_back(std::uintptr_t(host.data()));
      return view_of(host, shape, cap);
    };
    nb::dict out;
    out["engine_seconds"] = engine_seconds;
    buffers.clear();
    out["loss"] = result(r.loss, r.device.loss, {b});
    if (grad) {
      out["grad_x0"] = result(r.grad_x0, r.device.grad_x0, {b, size_t(nx)});
      out["grad_u"] = result(r.grad_u, r.device.grad_u, {b, size_t(T), size_t(nu)});
      out["grad_theta"] = result(r.grad_theta, r.device.grad_theta, {b, size_t(np)});
    }
    if (traj_stride > 0) out["trajectory"] = result(r.traj, r.device.traj, {b, slots, size_t(nx)});
    std::vector<int> events(b), nonfinite(b);
    for (size_t k = 0; k < b; ++k)
      events[k] = r.diag[k].event_step, nonfinite[k] = r.diag[k].nonfinite;
    out["event_step"] = nb::cast(events);
    out["nonfinite"] = nb::cast(nonfinite);
    return out;
  }

  nb::dict default_batch(const ExperimentConfig& c) override {
    Batch<double> b = build_batch(c);
    auto* owned = new Batch<S>();
    nb::capsule cap(owned, [](void* p) noexcept { delete static_cast<Batch<S>*>(p); });
    owned->x0.assign(b.x0.begin(), b.x0.end());
    owned->u.assign(b.u.begin(), b.u.end());
    owned->theta.assign(b.theta.begin(), b.theta.end());
    nb::dict out;
    out["x0"] = view_of(owned->x0, {size_t(b.size), size_t(b.nx)}, cap);
    out["u"] = view_of(owned->u, {size_t(b.size), size_t(b.steps), size_t(b.nu)}, cap);
    out["theta"] = view_of(owned->theta, {size_t(b.size), size_t(b.np)}, cap);
    return out;
  }

  BackendKind backend() const override { return runner_->backend(); }

 private:
  std::unique_ptr<BatchRunner> runner_;
  RolloutShape shape_;
};

class Simulator {
 public:
  explicit Simulator(ExperimentConfig c) : c_(std::move(c)) {
    check_physical_inputs(c_, false);
    f32_ = c_.precision == "float32";
    threads_ = c_.threads;
    const BackendKind kind = resolve_backend(c_.backend, &backend_note_);
    if (f32_)
      runner_ = std::make_unique<PrecisionRunner<float>>(c_, kind);
    else
      runner_ = std::make_unique<PrecisionRunner<double>>(c_, kind);
    backend_ = backend_name(runner_->backend());
  }
  const ExperimentConfig& config() const { return c_; }
  nb::dict rollout(const nb::ndarray<nb::ro>& x0, const nb::ndarray<nb::ro>& u,
                   const nb::ndarray<nb::ro>& th, bool grad, int traj_stride) {
    return runner_->rollout(x0, u, th, grad, traj_stride, threads_, buffers_, inputs_);
  }
  nb::dict default_batch() { return runner_->default_batch(c_); }
  int threads() const { return threads_; }
  void set_threads(int t) {
    if (t < 0)
      throw nb::value_error(
          ("threads: must be >= 0 (0 = all cores), got " + std::to_string(t)).c_str());
    threads_ = t;
  }
  bool f32() const { return f32_; }
  const std::string& backend() const { return backend_; }
  const std::string& backend_note() const { return backend_note_; }
  const std::vector<std::uintptr_t>& buffers() const { return buffers_; }
  const std::vector<std::uintptr_t>& inputs() const { return inputs_; }

  // The per-step API (steer.Simulator.step, step_vjp; steer.torch.step): B states stepped once
  // from step index k, x_{k+1} = f(k, x, u, θ), and the step's vector-Jacobian product, in
  // float64 on the CPU whatever the config's precision and backend (a float64 CPU runner made
  // when first asked). x (B, nx), u (B, nu), θ (B, ntheta), x̄_{k+1} (B, nx); any layout (copied
  // into C order); each rollout on its own OpenMP thread.
  nb::object step(const nb::ndarray<nb::ro>& x, const nb::ndarray<nb::ro>& u,
                  const nb::ndarray<nb::ro>& th, int k) {
    StepArrays a = step_arrays(x, u, th, nullptr, k);
    const BatchRunner& r = step_runner();
    auto* out = new std::vector<double>(a.B * a.nx);
    nb::capsule cap(out, [](void* q) noexcept { delete static_cast<std::vector<double>*>(q); });
    {
      nb::gil_scoped_release unlocked;
      const long long B = (long long)a.B;
#pragma omp parallel for num_threads(step_threads()) schedule(static)
      for (long long b = 0; b < B; ++b)
        r.step(k, a.x.data() + b * a.nx, a.u.data() + b * a.nu, a.th.data() + b * a.np,
               out->data() + b * a.nx);
    }
    return view_of(*out, {a.B, a.nx}, cap);
  }
  nb::dict step_vjp(const nb::ndarray<nb::ro>& x, const nb::ndarray<nb::ro>& u,
                    const nb::ndarray<nb::ro>& th, const nb::ndarray<nb::ro>& adj_next, int k) {
    StepArrays a = step_arrays(x, u, th, &adj_next, k);
    const BatchRunner& r = step_runner();
    auto* g = new std::vector<double>[3] {
      std::vector<double>(a.B * a.nx, 0.0), std::vector<double>(a.B * a.nu, 0.0),
          std::vector<double>(a.B * a.np, 0.0)
    };
    nb::capsule cap(g, [](void* q) noexcept { delete[] static_cast<std::vector<double>*>(q); });
    {
      nb::gil_scoped_release unlocked;
      const long long B = (long long)a.B;
#pragma omp parallel for num_threads(step_threads()) schedule(static)
      for (long long b = 0; b < B; ++b)
        r.adj_step(k, a.x.data() + b * a.nx, a.u.data() + b * a.nu, a.th.data() + b * a.np,
                   a.lam.data() + b * a.nx, g[0].data() + b * a.nx, g[1].data() + b * a.nu,
                   g[2].data() + b * a.np);
    }
    nb::dict d;
    d["adj_x"] = view_of(g[0], {a.B, a.nx}, cap);
    d["adj_u"] = view_of(g[1], {a.B, a.nu}, cap);
    d["adj_theta"] = view_of(g[2], {a.B, a.np}, cap);
    return d;
  }

  // the config's optimization variables (VariableSpec, flattened as the CLI's problem does)
  std::vector<std::string> variable_names() {
    problem();
    return problem_->var_names();
  }
  nb::dict variables() {
    Problem& p = problem();
    const size_t B = size_t(p.batch_size()), nv = size_t(p.num_vars());
    auto* v = new std::vector<double>[3] { p.initial(), p.lower(), p.upper() };
    nb::capsule cap(v, [](void* q) noexcept { delete[] static_cast<std::vector<double>*>(q); });
    nb::dict d;
    d["initial"] = view_of(v[0], {B, nv}, cap);
    d["lower"] = view_of(v[1], {nv}, cap);
    d["upper"] = view_of(v[2], {nv}, cap);
    return d;
  }
  // The validator (src/validate/validator.h) at the given values of the variables (B, nv): the
  // directional FD check with its ε sweep and every label, as `steer check` runs it at the
  // start, on the float64 twin of a float32 config (the run's float32 gradient compared to it)
  // and at h/2 when validation.timestep_check is on. Returns the report as the artifact has it.
  nb::object check_at(const nb::ndarray<nb::ro>& vars, const std::string& stage) {
    Problem& p = problem();
    std::vector<double> v;
    gather<double>("variables", vars, {(long long)p.batch_size(), (long long)p.num_vars()}, v);
    std::string note;
    const BackendKind kind = resolve_backend(c_.backend, &note);
    ExperimentConfig c64 = c_;
    c64.precision = "float64";
    std::unique_ptr<Problem> check64 = f32_ ? make_problem(c64, kind, threads_) : nullptr;
    std::unique_ptr<Problem> half;
    if (c_.validation.timestep_check) half = std::make_unique<HalfStepProblem>(c64, kind, threads_);
    ValidationReport r;
    {
      nb::gil_scoped_release unlocked;
      r = f32_ ? validate(*check64, v, c_.validation, stage, problem_.get(), half.get())
               : validate(*problem_, v, c_.validation, stage, nullptr, half.get());
    }
    nb::module_ json = nb::module_::import_("json");
    return json.attr("loads")(to_json(r, 1 << 30).dump());
  }

 private:
  ExperimentConfig c_;
  bool f32_ = false;
  int threads_ = 0;
  std::string backend_, backend_note_;
  std::unique_ptr<ArrayRunner> runner_;
  std::vector<std::uintptr_t> buffers_;  // addresses of the last rollout's result buffers
  std::vector<std::uintptr_t> inputs_;   // where the last rollout's engine read x0, u, θ
  std::unique_ptr<Problem> problem_;  // the CLI's problem over the variables, made when first asked
  std::unique_ptr<BatchRunner> step_runner_;  // the per-step API's float64 CPU runner
  // the per-step API's inputs as float64 C-order copies, their shapes checked against x's B
  struct StepArrays {
    size_t B = 0, nx = 0, nu = 0, np = 0;
    std::vector<double> x, u, th, lam;
  };
  StepArrays step_arrays(const nb::ndarray<nb::ro>& x, const nb::ndarray<nb::ro>& u,
                         const nb::ndarray<nb::ro>& th, const nb::ndarray<nb::ro>* lam, int k) {
    if (k < 0)
      throw nb::value_error(("k: the step index must be >= 0, got " + std::to_string(k)).c_str());
    if (x.ndim() != 2)
      throw nb::value_error(("x: expected shape (B, " + std::to_string(c_.info.nx()) + "), got " +
                             std::to_string(x.ndim()) + " dimensions")
                                .c_str());
    StepArrays a;
    const long long B = (long long)x.shape(0);
    a.B = size_t(B), a.nx = size_t(c_.info.nx()), a.nu = size_t(c_.info.nu()),
    a.np = size_t(c_.info.np());
    gather<double>("x", x, {B, (long long)a.nx}, a.x);
    gather<double>("u", u, {B, (long long)a.nu}, a.u);
    gather<double>("theta", th, {B, (long long)a.np}, a.th);
    if (lam) gather<double>("adj_next", *lam, {B, (long long)a.nx}, a.lam);
    return a;
  }
  const BatchRunner& step_runner() {
    if (!step_runner_) {
      ExperimentConfig c64 = c_;
      c64.precision = "float64";
      RunnerOptions o;
      o.every_parameter_gradient = true;
      step_runner_ = make_runner(c64, BackendKind::kCpu, o);
    }
    return *step_runner_;
  }
  int step_threads() const { return threads_ > 0 ? threads_ : cpu_default_threads(); }
  Problem& problem() {
    if (!problem_) {
      std::string note;
      problem_ = make_problem(c_, resolve_backend(c_.backend, &note), threads_);
    }
    return *problem_;
  }
};

// a config from JSON text, read as the CLI reads a file (reader caps, model.include relative to
// base_dir, every key checked)
ExperimentConfig config_from_text(const std::string& text, const std::string& source,
                                  const std::string& base_dir) {
  // data files (loss.reference/observations, controls.initial_file) are relative to base_dir too
  return parse_config(expand_includes(read_config_text(text, source), base_dir), base_dir);
}

nb::object json_to_py(const nlohmann::json& j) {
  nb::module_ json = nb::module_::import_("json");
  return json.attr("loads")(j.dump());
}

nb::dict run_config(const ExperimentConfig& c, const std::string& command,
                    const std::string& out_dir, int threads, bool write, bool progress) {
  RunOptions o;
  o.command = command;
  o.out_dir = out_dir;
  o.threads = threads;
  o.write = write;
  o.progress = progress;
  ExperimentConfig cc = c;
  apply_overrides(cc, o);
  RunOutcome r;
  {
    nb::gil_scoped_release unlocked;
    r = run_experiment(cc, o);
  }
  nb::dict d;
  d["artifact"] = json_to_py(r.artifact);
  d["artifact_dir"] = r.artifact_dir;
  d["summary"] = r.summary;
  d["check_passed"] = r.check_passed;
  return d;
}

#ifdef STEER_CUDA_EMULATION
// Test helpers of the module built against the emulated CUDA device (tests/python/CMakeLists.txt):
// device arrays made from and read back into host arrays with the emulator's cudaMalloc/cudaMemcpy,
// so that the device-array path of rollout runs without a GPU.
struct EmulatedDeviceArray {
  void* p = nullptr;
  ~EmulatedDeviceArray() {
    if (p) cudaFree(p);
  }
};

template <class S>
nb::object emulated_to_device(const nb::ndarray<nb::ro, S, nb::c_contig, nb::device::cpu>& a) {
  auto* d = new EmulatedDeviceArray();
  nb::capsule cap(d, [](void* q) noexcept { delete static_cast<EmulatedDeviceArray*>(q); });
  const size_t bytes = a.size() * sizeof(S);
  if (cudaMalloc(&d->p, bytes > 0 ? bytes : 1) != cudaSuccess)
    throw std::runtime_error("emulated cudaMalloc failed");
  if (cudaMemcpy(d->p, a.data(), bytes, cudaMemcpyHostToDevice) != cudaSuccess)
    throw std::runtime_error("emulated cudaMemcpy failed");
  std::vector<size_t> shape(a.ndim());
  for (size_t i = 0; i < a.ndim(); ++i) shape[i] = a.shape(i);
  return nb::cast(nb::ndarray<nb::array_api, S>(d->p, shape.size(), shape.data(), cap, nullptr,
                                                nb::dtype<S>(), nb::device::cuda::value, 0));
}

template <class S>
nb::object emulated_to_host(const nb::ndarray<nb::ro, S, nb::c_contig, nb::device::cuda>& a) {
  auto* v = new std::vector<S>(a.size());
  nb::capsule cap(v, [](void* q) noexcept { delete static_cast<std::vector<S>*>(q); });
  if (cudaMemcpy(v->data(), a.data(), a.size() * sizeof(S), cudaMemcpyDeviceToHost) != cudaSuccess)
    throw std::runtime_error("emulated cudaMemcpy failed");
  std::vector<size_t> shape(a.ndim());
  for (size_t i = 0; i < a.ndim(); ++i) shape[i] = a.shape(i);
  return nb::cast(nb::ndarray<nb::numpy, S>(v->data(), shape.size(), shape.data(), cap));
}
#endif

}  // namespace
}  // namespace steer

NB_MODULE(_steer, m) {
  using namespace steer;
  m.doc() = "steer's C++ engine (use the package steer, not this module)";
  m.attr("__version__") = STEER_VERSION;
#ifdef STEER_WITH_CUDA
  m.attr("_cuda_build") = true;  // rollout takes CUDA device arrays
#else
  m.attr("_cuda_build") = false;
#endif
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const ConfigError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });

  nb::class_<Simulator>(m, "Simulator")
      .def("_rollout", &Simulator::rollout, "x0"_a, "u"_a, "theta"_a, "grad"_a,
           "trajectory_stride"_a)
      .def("_default_batch", &Simulator::default_batch)
      .def("_step", &Simulator::step, "x"_a, "u"_a, "theta"_a, "k"_a)
      .def("_step_vjp", &Simulator::step_vjp, "x"_a, "u"_a, "theta"_a, "adj_next"_a, "k"_a)
      .def_prop_rw("threads", &Simulator::threads, &Simulator::set_threads,
                   "CPU threads for rollouts (0: the engine's default, all cores)")
      .def_prop_ro("_float32", &Simulator::f32)
      .def_prop_ro("backend", &Simulator::backend, "the backend rollouts run on (cpu or cuda)")
      .def_prop_ro("backend_note", &Simulator::backend_note)
      .def_prop_ro("_buffers", &Simulator::buffers)
      .def_prop_ro("_inputs", &Simulator::inputs)
      .def_prop_ro("_variable_names", &Simulator::variable_names)
      .def("_variables", &Simulator::variables)
      .def("_check_at", &Simulator::check_at, "variables"_a, "stage"_a)
      .def_prop_ro("_info",
                   [](const Simulator& s) {
                     const ExperimentConfig& c = s.config();
                     nb::dict d;
                     d["name"] = c.name;
                     d["model"] = c.model_type;
                     d["state_names"] = c.info.state_names;
                     d["state_units"] = c.info.state_units;
                     d["control_names"] = c.info.control_names;
                     d["control_units"] = c.info.control_units;
                     d["param_names"] = c.info.param_names;
                     d["param_units"] = c.info.param_units;
                     d["x0"] = c.x0;
                     d["theta"] = c.theta;
                     d["u"] = c.u_init;
                     d["T"] = c.steps;
                     d["dt"] = c.dt;
                     d["batch_size"] = c.batch_size;
                     d["precision"] = c.precision;
                     return d;
                   })
      .def_prop_ro("_effective_config",
                   [](const Simulator& s) { return json_to_py(s.config().to_json()); })
      .def("_run", [](const Simulator& s, const std::string& command, const std::string& out_dir,
                      int threads, bool write, bool progress) {
        return run_config(s.config(), command, out_dir, threads, write, progress);
      });

#ifdef STEER_CUDA_EMULATION
  m.attr("_emulated_device") = true;
  m.def("_to_device", &emulated_to_device<double>, "a"_a);
  m.def("_to_device", &emulated_to_device<float>, "a"_a);
  m.def("_to_host", &emulated_to_host<double>, "a"_a);
  m.def("_to_host", &emulated_to_host<float>, "a"_a);
#endif
  m.def(
      "_load_path", [](const std::string& path) { return new Simulator(load_config(path)); },
      "path"_a, nb::rv_policy::take_ownership);
  m.def(
      "_load_text",
      [](const std::string& text, const std::string& source, const std::string& base_dir) {
        return new Simulator(config_from_text(text, source, base_dir));
      },
      "text"_a, "source"_a, "base_dir"_a, nb::rv_policy::take_ownership);
}
