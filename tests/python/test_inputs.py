# How rollout inputs reach the engine (docs/python.md, "Memory"): C-contiguous arrays of the
# config's dtype are read in place (numpy, torch and jax CPU arrays alike: the address the engine
# read is the array's own), other layouts are copied once, and every way in gives the same bits.
# Device arrays: refused by a CPU build, naming the argument; the module built against the
# emulated CUDA device (tests/python/CMakeLists.txt, Python.emulated_device) runs them through the cuda
# backend's device path.
import ctypes
import json

import pytest

np = pytest.importorskip("numpy")
steer = pytest.importorskip("steer", reason="the module steer is not built (STEER_BUILD_PYTHON=OFF or nanobind missing)")

from conftest import SOURCE_DIR, projectile_config

emulated = getattr(steer._steer, "_emulated_device", False)


def _robot_a(steps=40, B=3, **sim):
    c = json.loads((SOURCE_DIR / "configs" / "difftaichi_robot_a.json").read_text())
    c["simulation"] = dict(c["simulation"], steps=steps, **sim)
    c["batch"] = {"size": B, "seed": 2}
    return steer.load(c, base_dir=str(SOURCE_DIR / "configs"))


def _projectile(B=4, **sim):
    c = projectile_config()
    c["simulation"] = dict(c["simulation"], steps=40, **sim)
    s = steer.load(c)
    rng = np.random.default_rng(7)
    x0 = np.tile(s.x0, (B, 1)) + 0.1 * rng.standard_normal((B, s.nx))
    u = 0.2 * rng.standard_normal((B, s.T, s.nu))
    th = np.tile(s.theta, (B, 1))
    return s, x0.astype(s.dtype), u.astype(s.dtype), th.astype(s.dtype)


def _same(r, q):
    """bit-for-bit equality of two results' losses, gradients and trajectories"""
    for name in ("loss", "grad_x0", "grad_u", "grad_theta", "trajectory"):
        a, b = getattr(r, name), getattr(q, name)
        assert (a is None) == (b is None), name
        if a is not None:
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b), err_msg=name)


def _addr(a):
    return a.__array_interface__["data"][0]


@pytest.mark.skipif(emulated, reason="the host-memory suite runs on the CPU build")
@pytest.mark.parametrize("model", ["projectile", "mass_spring"])
def test_contiguous_numpy_inputs_are_read_in_place(model):
    """the engine reads the caller's buffers: the addresses it read are the arrays' own"""
    if model == "projectile":
        s, x0, u, th = _projectile()
    else:
        s = _robot_a()
        b = s.default_batch()
        x0, u, th = b.x0.copy(), b.u.copy(), b.theta.copy()
    r = s.rollout(x0, u, th, grad=True, trajectory_stride=5)
    assert list(s._core._inputs) == [_addr(x0), _addr(u), _addr(th)]
    # in place means the call sees the array as it is at the call: a change made after one call
    # shows in the next with no re-wrapping, and restoring it restores the bits
    original = x0[0, 2].copy()
    x0[0, 2] = original + 0.25
    r2 = s.rollout(x0, u, th, grad=True, trajectory_stride=5)
    assert r2.loss[0] != r.loss[0]
    np.testing.assert_array_equal(r2.loss[1:], r.loss[1:])
    x0[0, 2] = original
    _same(s.rollout(x0, u, th, grad=True, trajectory_stride=5), r)


@pytest.mark.skipif(emulated, reason="the host-memory suite runs on the CPU build")
def test_other_layouts_are_copied_with_the_same_bits():
    s, x0, u, th = _projectile()
    ref = s.rollout(x0, u, th, grad=True, trajectory_stride=4)
    fortran = np.asfortranarray(u)       # column-major
    assert not fortran.flags["C_CONTIGUOUS"]
    wide = np.zeros((x0.shape[0], 2 * s.nx))
    wide[:, ::2] = x0
    strided = wide[:, ::2]               # every other column
    # misaligned: float64 data at an odd byte offset of a byte buffer
    raw = np.zeros(th.nbytes + 1, dtype=np.uint8)
    misaligned = raw[1:].view(np.float64).reshape(th.shape)
    misaligned[...] = th
    assert _addr(misaligned) % 8 != 0
    q = s.rollout(strided, fortran, misaligned, grad=True, trajectory_stride=4)
    _same(q, ref)
    read = list(s._core._inputs)
    assert read[0] != _addr(strided) and read[1] != _addr(fortran) and read[2] != _addr(misaligned)
    # a C-contiguous slice of rows is read in place at its own offset
    r1 = s.rollout(x0[1:3], u[1:3], th[1:3], grad=True)
    assert list(s._core._inputs) == [_addr(x0) + 1 * s.nx * 8, _addr(u) + 1 * s.T * s.nu * 8, _addr(th) + 1 * s.ntheta * 8]
    np.testing.assert_array_equal(r1.loss, ref.loss[1:3])
    # nested lists: copied, same bits
    _same(s.rollout(x0.tolist(), u.tolist(), th.tolist(), grad=True, trajectory_stride=4), ref)


@pytest.mark.skipif(emulated, reason="the host-memory suite runs on the CPU build")
def test_torch_cpu_tensors_are_read_in_place():
    torch = pytest.importorskip("torch", reason="torch is not installed (Debian: python3-torch)")
    s, x0, u, th = _projectile()
    ref = s.rollout(x0, u, th, grad=True)
    tx0, tu, tth = (torch.from_numpy(a.copy()) for a in (x0, u, th))
    q = s.rollout(tx0, tu, tth, grad=True)
    assert list(s._core._inputs) == [t.data_ptr() for t in (tx0, tu, tth)]
    _same(q, ref)
    # a transposed tensor (not C-contiguous) is copied, with the same bits
    tt = torch.from_numpy(np.ascontiguousarray(u.transpose(0, 2, 1))).transpose(1, 2)
    assert not tt.is_contiguous()
    _same(s.rollout(tx0, tt, tth, grad=True), ref)
    assert s._core._inputs[1] != tt.data_ptr()


def _jax():
    jax = pytest.importorskip("jax", reason="jax is not installed (pip install jax: CPU wheels)")
    return jax


@pytest.mark.skipif(emulated, reason="the host-memory suite runs on the CPU build")
@pytest.mark.parametrize("precision", ["float32", "float64"])
def test_jax_cpu_arrays_are_read_in_place(precision):
    """jax CPU arrays pass through DLPack: the engine reads jax's own buffers (no copy) and
    returns the same bits as for numpy arrays of the same values"""
    jax = _jax()
    import jax.numpy as jnp
    s, x0, u, th = _projectile(precision=precision)
    ref = s.rollout(x0, u, th, grad=True, trajectory_stride=8)
    # float64 arrays need jax's 64-bit mode (its default is float32)
    with jax.experimental.enable_x64(precision == "float64"):
        jx0, ju, jth = (jnp.asarray(a) for a in (x0, u, th))
        assert jx0.dtype == s.dtype
        q = s.rollout(jx0, ju, jth, grad=True, trajectory_stride=8)
        assert list(s._core._inputs) == [a.unsafe_buffer_pointer() for a in (jx0, ju, jth)]
    _same(q, ref)
    assert isinstance(q.loss, np.ndarray)


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32), ("dtype", _DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


_CAPSULE_NAME = b"dltensor"
_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


class _FakeCudaArray:
    """A DLPack producer that says its float64 data is in CUDA memory (device type 2): what a
    torch CUDA tensor hands over, on a machine without a GPU. The data pointer is a host array's
    and is never read: a CPU build refuses the array before any access."""

    def __init__(self, shape):
        self._host = np.zeros(shape)
        self._shape = (ctypes.c_int64 * len(shape))(*shape)
        self._mt = _DLManagedTensor()
        t = self._mt.dl_tensor
        t.data = self._host.ctypes.data
        t.device = _DLDevice(2, 0)
        t.ndim = len(shape)
        t.dtype = _DLDataType(2, 64, 1)  # kDLFloat, 64 bits
        t.shape = self._shape
        t.strides = None
        t.byte_offset = 0

    def __dlpack__(self, stream=None, max_version=None, **kwargs):
        if max_version is not None:
            raise TypeError("this producer only makes unversioned capsules")
        return _capsule_new(ctypes.addressof(self._mt), _CAPSULE_NAME, None)

    def __dlpack_device__(self):
        return (2, 0)


@pytest.mark.skipif(emulated, reason="the CPU build's refusal")
def test_cpu_build_refuses_device_arrays_naming_the_argument():
    if steer._steer._cuda_build:
        pytest.skip("a CUDA build takes device arrays (Python.emulated_device, or a GPU)")
    s, x0, u, th = _projectile(B=2)
    for name, args in (("x0", (_FakeCudaArray(x0.shape), u, th)), ("u", (x0, _FakeCudaArray(u.shape), th)),
                       ("theta", (x0, u, _FakeCudaArray(th.shape)))):
        with pytest.raises(ValueError, match=rf"^{name}: a CUDA device array, but this build of steer has no CUDA backend"):
            s.rollout(*args)


# ---- the device path, on the emulated CUDA device (or a real one with torch) ----

def _device_cases():
    return [("projectile", "float64"), ("projectile", "float32"), ("mass_spring", "float64")]


@pytest.mark.skipif(not emulated, reason="needs the module built against the emulated CUDA device (Python.emulated_device)")
@pytest.mark.parametrize("model,precision", _device_cases())
def test_device_arrays_stay_on_the_device(model, precision):
    """device inputs are read on the device (rollout-major models: in place, at the caller's
    addresses) and the results are device arrays with the same bits as the cuda backend's host
    path, and as the CPU backend's within the parity suites' tolerance"""
    core = steer._steer
    if model == "projectile":
        s, x0, u, th = _projectile(B=5, backend="cuda", precision=precision)
        host = _projectile(B=5, backend="cpu", precision=precision)[0]
    else:
        s = _robot_a(steps=12, B=3, backend="cuda", precision=precision)
        host = _robot_a(steps=12, B=3, backend="cpu", precision=precision)
        b = s.default_batch()
        x0, u, th = b.x0.copy(), b.u.copy(), b.theta.copy()
    assert s.backend == "cuda"
    ref = s.rollout(x0, u, th, grad=True, trajectory_stride=3)      # host arrays, cuda backend
    cpu = host.rollout(x0, u, th, grad=True, trajectory_stride=3)   # cpu backend
    dx0, du, dth = (core._to_device(a) for a in (x0, u, th))
    assert dx0.__dlpack_device__()[0] == 2
    q = s.rollout(dx0, du, dth, grad=True, trajectory_stride=3)
    for name in ("loss", "grad_x0", "grad_u", "grad_theta", "trajectory"):
        a = getattr(q, name)
        assert a.__dlpack_device__()[0] == 2, name
        np.testing.assert_array_equal(core._to_host(a), getattr(ref, name), err_msg=name)
        tol = 1e-4 if precision == "float32" else 1e-10
        np.testing.assert_allclose(core._to_host(a), getattr(cpu, name), rtol=tol, atol=tol, err_msg=name)
    # the engine read the caller's device arrays (rollout-major models in place, projectile's
    # structure-of-arrays through a transpose on the device) and the results are its own
    assert list(s._core._inputs) == [_device_address(a) for a in (dx0, du, dth)]
    assert list(s._core._buffers) == [_device_address(getattr(q, n)) for n in ("loss", "grad_x0", "grad_u", "grad_theta", "trajectory")]
    # only the cuda backend reads device arrays
    with pytest.raises(ValueError, match="x0: a CUDA device array, but this simulator runs on the cpu backend"):
        host.rollout(dx0, du, dth)
    with pytest.raises(ValueError, match=r"u: on another device than x0 \(CUDA device 0\)"):
        s.rollout(dx0, u, dth)


def _device_address(a):
    # the data pointer a DLPack producer hands over (the module's own arrays re-imported as numpy
    # would copy; the address is read from the capsule)
    cap = a.__dlpack__()
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype = ctypes.c_void_p
    get.argtypes = [ctypes.py_object, ctypes.c_char_p]
    mt = _DLManagedTensor.from_address(get(cap, b"dltensor"))
    # an empty array (e.g. u of a model without controls) may carry a null data pointer
    return (mt.dl_tensor.data or 0) + mt.dl_tensor.byte_offset


def _torch_cuda():
    torch = pytest.importorskip("torch", reason="torch is not installed")
    if not steer._steer._cuda_build:
        pytest.skip("a CPU build of steer (the device path runs in a CUDA build, or on the emulated device)")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device for torch")
    return torch


@pytest.mark.skipif(emulated, reason="needs a real device (torch CUDA tensors)")
@pytest.mark.parametrize("model", ["projectile", "mass_spring"])
def test_torch_cuda_tensors_stay_on_the_device(model):
    """on a GPU: torch CUDA tensors are read in place by the cuda backend and the results are
    CUDA tensors with the host path's bits; steer.torch's backward stays on the device too"""
    torch = _torch_cuda()
    import steer.torch as st
    if model == "projectile":
        s, x0, u, th = _projectile(B=64, backend="cuda")
    else:
        s = _robot_a(steps=30, B=16, backend="cuda")
        b = s.default_batch()
        x0, u, th = b.x0.copy(), b.u.copy(), b.theta.copy()
    ref = s.rollout(x0, u, th, grad=True, trajectory_stride=3)
    dx0, du, dth = (torch.from_numpy(a).cuda() for a in (x0, u, th))
    q = s.rollout(dx0, du, dth, grad=True, trajectory_stride=3)
    assert list(s._core._inputs) == [t.data_ptr() for t in (dx0, du, dth)]
    for name in ("loss", "grad_x0", "grad_u", "grad_theta", "trajectory"):
        a = getattr(q, name)
        assert isinstance(a, torch.Tensor) and a.is_cuda, name
        np.testing.assert_array_equal(a.cpu().numpy(), getattr(ref, name), err_msg=name)
    th_req = dth.clone().requires_grad_()
    loss = st.rollout(s, dx0, du, th_req)
    loss.sum().backward()
    assert loss.is_cuda and th_req.grad.is_cuda
    np.testing.assert_array_equal(th_req.grad.cpu().numpy(), ref.grad_theta)
