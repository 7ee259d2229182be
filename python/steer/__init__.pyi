# Type stubs of the package steer (python/steer/__init__.py); docs/python.md describes the API.
import os
from typing import Any, Mapping, Optional, Sequence, Union

import numpy as np
import numpy.typing as npt

__version__: str

ConfigLike = Union[str, os.PathLike[str], Mapping[str, Any]]
ArrayLike = Any  # numpy array, CPU torch tensor or jax array (buffer protocol / DLPack), or a nested list

class Batch:
    x0: npt.NDArray[np.floating]     # (B, nx)
    u: npt.NDArray[np.floating]      # (B, T, nu)
    theta: npt.NDArray[np.floating]  # (B, ntheta)
    def __init__(self, x0: npt.NDArray[np.floating], u: npt.NDArray[np.floating], theta: npt.NDArray[np.floating]) -> None: ...

class _Variables:
    initial: npt.NDArray[np.float64]  # (B, nv)
    lower: npt.NDArray[np.float64]    # (nv,)
    upper: npt.NDArray[np.float64]    # (nv,)

class RolloutResult:
    loss: npt.NDArray[np.floating]                    # (B,)
    grad_x0: Optional[npt.NDArray[np.floating]]       # (B, nx) with grad=True
    grad_u: Optional[npt.NDArray[np.floating]]        # (B, T, nu)
    grad_theta: Optional[npt.NDArray[np.floating]]    # (B, ntheta)
    trajectory: Optional[npt.NDArray[np.floating]]    # (B, T // stride + 1, nx) with trajectory_stride > 0
    event_step: Sequence[int]
    nonfinite: Sequence[int]
    engine_seconds: float

class Simulator:
    source: str
    name: str
    model: str
    state_names: list[str]
    state_units: list[str]
    control_names: list[str]
    control_units: list[str]
    param_names: list[str]
    param_units: list[str]
    T: int
    dt: float
    batch_size: int
    precision: str
    dtype: np.dtype[Any]
    x0: npt.NDArray[np.floating]     # (nx,) nominal initial state
    u: npt.NDArray[np.floating]      # (nu,) nominal control, held at every step (controls.initial_file: its first row; default_batch().u has every step)
    theta: npt.NDArray[np.floating]  # (ntheta,) nominal parameters
    @property
    def nx(self) -> int: ...
    @property
    def nu(self) -> int: ...
    @property
    def ntheta(self) -> int: ...
    @property
    def threads(self) -> int: ...
    @threads.setter
    def threads(self, n: int) -> None: ...
    @property
    def backend(self) -> str: ...
    @property
    def effective_config(self) -> dict[str, Any]: ...
    def default_batch(self) -> Batch: ...
    def rollout(self, x0: ArrayLike, u: ArrayLike, theta: ArrayLike, grad: bool = ..., trajectory_stride: int = ...) -> RolloutResult: ...
    def step(self, x: ArrayLike, u: ArrayLike, theta: ArrayLike, k: int = ...) -> np.ndarray: ...
    def step_vjp(self, x: ArrayLike, u: ArrayLike, theta: ArrayLike, adj_next: ArrayLike, k: int = ...) -> tuple[np.ndarray, np.ndarray, np.ndarray]: ...
    def run(self, out_dir: Optional[str] = ..., threads: Optional[int] = ..., write: bool = ..., progress: bool = ...) -> dict[str, Any]: ...
    def run_check(self, out_dir: Optional[str] = ..., threads: Optional[int] = ..., write: bool = ..., progress: bool = ...) -> dict[str, Any]: ...
    @property
    def variable_names(self) -> list[str]: ...
    def variables(self) -> _Variables: ...
    def check(self, variables: Optional[ArrayLike] = ..., stage: str = ...) -> dict[str, Any]: ...

def load(config: ConfigLike, base_dir: Optional[str] = ...) -> Simulator: ...
def run(config: ConfigLike, **kwargs: Any) -> dict[str, Any]: ...
def check(config: ConfigLike, **kwargs: Any) -> dict[str, Any]: ...
