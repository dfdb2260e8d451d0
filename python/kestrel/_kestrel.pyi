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

class FitConfig:
    """A learner ("slkl", "svm", "rsvm", "krr", "lssvm", "mrrsvm", "novelty", "ssvr",
    "kpls") with its settings and its model's scalar; ``None`` is the learner's default
    ("auto" where it has one); ``class_weights`` are ``(label, weight)`` pairs (svm),
    ``partitions`` mrrsvm's, ``quantile`` the novelty detector's threshold, ``solver`` krr's
    ("auto", "exact", "cg"), ``components`` kpls's, ``epsilon`` ssvr's; ``scale`` standardises
    the features first (``kestrel train --scale``), ``relevance`` also weighs them
    (``--relevance``)."""

    def __init__(
        self,
        learner: str,
        *,
        scalar: str = "f64",
        kernel: str = "rbf",
        gamma: Optional[float] = None,
        degree: int = 3,
        coef0: float = 0.0,
        c: Optional[float] = None,
        loss: str = "squared_hinge",
        bias: float = 1.0,
        nu: Union[float, str, None] = None,
        centers: Optional[int] = None,
        tol: Optional[float] = None,
        select: str = "irsvm",
        delta: Optional[float] = None,
        alpha: Optional[float] = None,
        class_weights: Optional[list[tuple[float, float]]] = None,
        partitions: Optional[int] = None,
        quantile: float = 0.99,
        solver: str = "auto",
        components: Optional[int] = None,
        epsilon: Optional[float] = None,
        scale: bool = False,
        relevance: bool = False,
        probabilities: bool = False,
        seed: int = 1,
    ) -> None: ...

def fit(
    config: FitConfig,
    x: Rows,
    y: npt.NDArray[np.float64],
    sample_weight: npt.NDArray[np.float64] | None = None,
) -> tuple[bytes, dict[str, Any]]:
    """Fit ``config``'s learner by ``kestrel train``'s policy, each row weighed by
    ``sample_weight`` when given (finite and positive; svm, rsvm, lssvm, krr, ssvr and mrrsvm). Returns
    the model file's bytes and the training summary."""

def predict(model: bytes, x: Rows) -> npt.NDArray[np.float64]:
    """One prediction per row, as ``kestrel predict`` writes it."""

def novelty_scores(model: bytes, x: Rows) -> npt.NDArray[np.float64]:
    """A novelty detector's score d²(x) of each row (before the flag in ``kestrel predict``)."""

def decision_function(model: bytes, x: Rows) -> tuple[npt.NDArray[np.float64], list[float]]:
    """A classifier's decision values (one column per output) and its outputs' labels."""

def probabilities(model: bytes, x: Rows) -> tuple[npt.NDArray[np.float64], list[float]]:
    """A classifier's class probabilities (one column per class) and the classes' labels."""

def describe(model: bytes) -> dict[str, Any]:
    """What ``kestrel inspect`` shows."""

def with_class_names(model: bytes, names: list[str]) -> bytes:
    """The model's bytes with the names of its classes (name ``k`` for label ``k``)."""

def with_feature_names(model: bytes, names: list[str]) -> bytes:
    """The model's bytes with the names of its features, in its order (a CSV header's)."""

def held_out_values(labels: list[float], fold_model: bytes, x: Rows) -> npt.NDArray[np.float64]:
    """The decision values a cross-validation fold's model gives the rows of ``x`` as the
    outputs of the classifier of ``labels`` (a column per output; NaN for a class the fold
    model lacks)."""

def calibrated(model: bytes, values: npt.NDArray[np.float64], y: npt.NDArray[np.float64]) -> bytes:
    """The classifier's model bytes with class probabilities fitted to decision values held
    out from it elsewhere: a row of ``values`` per label of ``y``, one value per output
    (NaN where none)."""

def import_checkpoint(checkpoint: bytes, scaler: bytes | None = None) -> bytes:
    """The model file a device learner's checkpoint makes, with a scaler's statistics:
    what ``kestrel import`` writes."""

def describe_checkpoint(checkpoint: bytes) -> str:
    """What a device checkpoint holds, as the JSON text ``kestrel inspect --json`` prints."""

def read_checkpoint(data: bytes) -> dict[str, Any]:
    """A ``kestrel stream`` checkpoint's contents: learner (state bytes), probabilities (a
    classifier's class probabilities, as ``Stream.save_probabilities``), rows, seen, skipped,
    history (the run's series, as ``Stream.history``), config (flag to value)."""

class Stream:
    """A windowed learner of ``kestrel stream`` ("svm", "slkl", "rsvm", "novelty") for rows
    of ``dim`` features, ``kestrel stream``'s defaults for every setting left ``None``."""

    def __init__(
        self,
        learner: str,
        dim: int,
        *,
        scalar: str = "f64",
        window: Optional[int] = None,
        centers: Optional[int] = None,
        steps_per_sample: Optional[int] = None,
        tol: Optional[float] = None,
        kernel: str = "rbf",
        gamma: Optional[float] = None,
        degree: int = 3,
        coef0: float = 0.0,
        nu: Optional[float] = None,
        c: Optional[float] = None,
        loss: str = "squared_hinge",
        bias: float = 1.0,
        delta: Optional[float] = None,
        scale: bool = True,
        renew: bool = True,
        memory: Optional[int] = None,
        classes: Optional[int] = None,
        quantile: float = 0.99,
        warmup: int = 256,
        learn: str = "unflagged",
        seed: int = 1,
    ) -> None: ...
    def learn(self, x: Rows, y: npt.NDArray[np.float64]) -> None:
        """Learn each row with its label or target, in order (predicted first, recorded in
        the history)."""
    def history(self) -> dict[str, Any]:
        """The series of the rows learned (``kestrel.online``'s ``history_``)."""
    def predict(self, x: Rows) -> npt.NDArray[np.float64]:
        """One prediction per row (NaN while a classifier has seen no label)."""
    def scores(self, x: Rows) -> npt.NDArray[np.float64]:
        """A novelty detector's score of each row by the model before it (NaN in the warm-up)."""
    def class_labels(self) -> list[float]:
        """A classifier's labels in the order of its classes (a named class's is its code)."""
    def is_classifier(self) -> bool: ...
    def chosen(self) -> dict[str, float]:
        """The settings the learner chose itself (rsvm's raced width)."""
    def model_bytes(self) -> bytes:
        """The current model file (``kestrel stream --out``)."""
    def save_state(self) -> bytes:
        """The learner's whole state (a ``kestrel stream`` checkpoint's learner)."""
    def load_state(self, state: bytes) -> None:
        """Continue from a state of a learner of the same settings."""
    @property
    def dim(self) -> int:
        """The features of a row."""
    def save_history(self) -> bytes:
        """The history's bytes, which ``load_history`` takes back."""
    def load_history(self, history: bytes) -> None:
        """Replace the history with one ``save_history`` gave."""

def npkl_fit(
    x: npt.NDArray[np.float64],
    *,
    pairs: Optional[list[tuple[int, int, bool]]] = None,
    classes: Optional[list[int]] = None,
    fraction: float = 0.5,
    rank: Optional[int] = None,
    neighbors: int = 5,
    loss: str = "hinge",
    clusters: int = 2,
    seed: int = 1,
) -> tuple[
    "LearnedKernel",
    npt.NDArray[np.float64],
    npt.NDArray[np.uint32],
    npt.NDArray[np.float64],
    dict[str, Any],
]:
    """Learn a kernel (``kestrel npkl``) on the rows of ``x`` from ``(i, j, must)`` pairs, or
    from pairs drawn from ``classes``; cluster with it. Returns the learned kernel, the
    rows' features (n × rank), their clusters, the centroids and a summary."""

class LearnedKernel:
    """The learned kernel of the training rows: places new rows by eq. (13)."""

    def __init__(
        self, x: npt.NDArray[np.float64], neighbors: int, loss_name: str, columns: npt.NDArray[np.float64]
    ) -> None: ...
    def transform(self, x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """The learned features of the rows of ``x`` (n × rank)."""

def mrrsvm_parts(config: FitConfig, x: Rows, y: npt.NDArray[np.float64]) -> npt.NDArray[np.int64]:
    """The MapReduce RSVM part of each row (``config``'s partitions and seed)."""

def mrrsvm_part(
    config: FitConfig,
    x: Rows,
    y: npt.NDArray[np.float64],
    sample_weight: npt.NDArray[np.float64] | None = None,
) -> bytes:
    """The Map step: one part's model (its rows weighed by ``sample_weight`` when given),
    as bytes for :func:`mrrsvm_reduce`."""

def mrrsvm_reduce(config: FitConfig, parts: list[bytes], dim: int) -> tuple[bytes, dict[str, Any]]:
    """The Reduce step: the model file of the parts (in part order) and its summary."""

def projection_fit(
    x: npt.NDArray[np.float64],
    y: Optional[npt.NDArray[np.float64]] = None,
    *,
    method: str = "kpca",
    components: int = 2,
    centres: Optional[int] = None,
    gamma: Optional[float] = None,
    mu: float = 1e-3,
    slices: Optional[int] = None,
    seed: int = 1,
) -> tuple[bytes, list[float]]:
    """Fits kpca, ksir or kfd (``kestrel transform``): the model file's bytes and the eigenvalues."""

def kcca_fit(
    x: npt.NDArray[np.float64],
    x2: npt.NDArray[np.float64],
    *,
    components: int = 2,
    centres: Optional[int] = None,
    gamma: Optional[float] = None,
    mu: float = 1e-3,
    seed: int = 1,
) -> tuple[bytes, bytes, list[float]]:
    """Fits reduced KCCA of two views: each view's model file's bytes and the correlations."""

def projection_transform(model: bytes, x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """The projections (n × k) of the rows of ``x`` through a projection model file."""

def spectral_cluster(
    x: npt.NDArray[np.float64], *, clusters: int, neighbors: int = 10, seed: int = 0
) -> tuple[npt.NDArray[np.uint32], float, int, float]:
    """Spectral clustering (``kestrel cluster``): each row's cluster, the k-means inertia,
    Lanczos's products and final relative residual."""

def eigenmap(
    x: npt.NDArray[np.float64], *, components: int = 2, neighbors: int = 10
) -> tuple[npt.NDArray[np.float64], list[float]]:
    """The Laplacian eigenmap of the rows (n × components) and its eigenvalues."""

def lpp_fit(
    x: npt.NDArray[np.float64], *, components: int = 2, neighbors: int = 10
) -> tuple[bytes, list[float]]:
    """The locality preserving projection: the model file's bytes and the μ (increasing)."""
