"""Type stubs of the Rust extension ``kestrel._kestrel`` (python/src/lib.rs)."""

from typing import Any, Optional, Union

import numpy as np
import numpy.typing as npt

# A C-ordered float64 matrix, or a CSR matrix as (indptr, indices, data, n_features) with
# int64 offsets and indices (sorted, distinct per row) and float64 values.
Rows = Union[
    npt.NDArray[np.float64],
    tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.float64], int],
]

def fit(
    learner: str,
    x: Rows,
    y: npt.NDArray[np.float64],
    *,
    scalar: str = "f64",
    kernel: str = "rbf",
    gamma: Optional[float] = None,
    degree: int = 3,
    coef0: float = 0.0,
    c: Optional[float] = None,
    loss: str = "squared_hinge",
    bias: float = 1.0,
    nu: Optional[float] = None,
    centers: Optional[int] = None,
    tol: Optional[float] = None,
    select: str = "irsvm",
    delta: Optional[float] = None,
    alpha: Optional[float] = None,
    seed: int = 1,
) -> tuple[bytes, dict[str, Any]]:
    """Fit ``learner`` ("slkl", "svm", "rsvm", "krr", "lssvm") by ``kestrel train``'s
    policy; ``None`` is the learner's default ("auto" where it has one). Returns the model
    file's bytes and the training summary."""

def predict(model: bytes, x: Rows) -> npt.NDArray[np.float64]:
    """One prediction per row, as ``kestrel predict`` writes it."""

def decision_function(model: bytes, x: Rows) -> tuple[npt.NDArray[np.float64], list[float]]:
    """A classifier's decision values (one column per output) and its outputs' labels."""

def describe(model: bytes) -> dict[str, Any]:
    """What ``kestrel inspect`` shows."""

def with_class_names(model: bytes, names: list[str]) -> bytes:
    """The model's bytes with the names of its classes (name ``k`` for label ``k``)."""
