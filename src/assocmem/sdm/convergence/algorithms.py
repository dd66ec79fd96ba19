"""The read rules of App. B.7 by name: what each computes, and the paper's settings for them.

Bricken & Pehlevan (2021), App. B.7, compare eight read rules, named as in the authors' code
(``Binary_SDM``, ..., ``Cont_SDM_CFit_Attention``), plus ``Binary_Neuron_SDM`` with explicit
neurons. :class:`Algorithm` enumerates them, :class:`AlgorithmSpec` records what each does
(binary or continuous space, intersection, cap or softmax weights, neuron-limited or not, which
intersection ``beta`` is fitted to), :func:`resolve_algorithm` accepts any spelling and
:func:`algorithm_spec` looks a rule up. The settings of the paper's runs live here too: the
neurons of the neuron-limited rules (:data:`PAPER_NEURONS`), the ball fractions the radii come
from (:data:`PAPER_FRACTIONS`, :func:`paper_radii`) and the largest perturbation
(:data:`PAPER_MAX_PERTURBATION`). Used by chapter 36 (``conv.ALGORITHMS``,
``conv.PAPER_NEURONS``).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from assocmem.sdm.capacity.optimal_radii import radius_for_fraction

__all__ = [
    "Algorithm",
    "AlgorithmSpec",
    "ALGORITHMS",
    "ALL_ALGORITHMS",
    "PAPER_NEURONS",
    "PAPER_FRACTIONS",
    "PAPER_MAX_PERTURBATION",
    "algorithm_spec",
    "resolve_algorithm",
    "paper_radii",
]


class Algorithm(str, enum.Enum):
    """The read rules of App. B.7, named as in the authors' code.

    Members compare equal to their string values, so ``Algorithm.CONT_SDM == "Cont_SDM"``.
    """

    BINARY_SDM = "Binary_SDM"
    BINARY_SDM_NEURON_LIMIT = "Binary_SDM_NeuronLimit"
    BINARY_SDM_BFIT_ATTENTION = "Binary_SDM_BFit_Attention"
    CONT_SDM = "Cont_SDM"
    CONT_SDM_NEURON_LIMIT = "Cont_SDM_NeuronLimit"
    CONT_BINARY_SDM = "Cont_Binary_SDM"
    CONT_SDM_BFIT_ATTENTION = "Cont_SDM_BFit_Attention"
    CONT_SDM_CFIT_ATTENTION = "Cont_SDM_CFit_Attention"
    BINARY_NEURON_SDM = "Binary_Neuron_SDM"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class AlgorithmSpec:
    """What a read rule does.

    Attributes
    ----------
    name : str
        The authors' name, e.g. ``"Cont_SDM"``.
    space : {"binary", "continuous"}
        Binary rules take and return 0/1 vectors; continuous rules take any nonzero real
        vectors (L2-normalised on entry) and return unit vectors.
    weights : str
        ``"intersection"`` (exact ``I``), ``"cap"`` (``Ic``), ``"softmax"`` (``exp(beta x)``),
        ``"neurons"`` (explicit random neurons).
    neuron_limited : bool
        Weights are expected neuron counts stochastically rounded to integers (needs ``r``).
    beta_fit : {None, "binary", "cap"}
        For softmax rules: which intersection ``beta`` is fitted to.
    description : str
        One line for tables.
    """

    name: str
    space: str
    weights: str
    neuron_limited: bool
    beta_fit: str | None
    description: str

    @property
    def needs_r(self) -> bool:
        """Whether the rule needs a number of neurons ``r``."""
        return self.neuron_limited or self.weights == "neurons"


_SPECS: dict[str, AlgorithmSpec] = {
    s.name: s
    for s in (
        AlgorithmSpec("Binary_SDM", "binary", "intersection", False, None,
                      "binary SDM, exact circle-intersection weights I(dv, d, n), majority output"),
        AlgorithmSpec("Binary_SDM_NeuronLimit", "binary", "intersection", True, None,
                      "binary SDM, weights I r / 2^n stochastically rounded, majority output"),
        AlgorithmSpec("Binary_SDM_BFit_Attention", "binary", "softmax", False, "binary",
                      "softmax of beta (1 - 2 dv / n), beta fit to I, majority output"),
        AlgorithmSpec("Cont_SDM", "continuous", "cap", False, None,
                      "continuous SDM, cap-intersection weights Ic(rho), unit-norm output"),
        AlgorithmSpec("Cont_SDM_NeuronLimit", "continuous", "cap", True, None,
                      "continuous SDM, weights Ic r stochastically rounded, unit-norm output"),
        AlgorithmSpec("Cont_Binary_SDM", "continuous", "intersection", False, None,
                      "continuous queries, weights I(floor(n/2 (1 - rho))), unit-norm output"),
        AlgorithmSpec("Cont_SDM_BFit_Attention", "continuous", "softmax", False, "binary",
                      "softmax of beta rho, beta fit to I, unit-norm output"),
        AlgorithmSpec("Cont_SDM_CFit_Attention", "continuous", "softmax", False, "cap",
                      "softmax of beta rho, beta fit to Ic, unit-norm output"),
        AlgorithmSpec("Binary_Neuron_SDM", "binary", "neurons", False, None,
                      "binary SDM with r explicit random neurons, majority output"),
    )
}
#: The eight rules compared in App. B.7, in the paper's order.
ALGORITHMS: tuple[str, ...] = tuple(a.value for a in Algorithm if a is not Algorithm.BINARY_NEURON_SDM)
#: The eight plus ``Binary_Neuron_SDM``.
ALL_ALGORITHMS: tuple[str, ...] = tuple(a.value for a in Algorithm)
#: Neurons the authors gave the neuron-limited rules, by ``n`` (``r = 2^64`` for ``n = 64`` and
#: MNIST's ``n = 784``; ``10^6`` for ``n = 1000``).
PAPER_NEURONS: dict[int, int] = {64: 2**64, 784: 2**64, 1000: 10**6}
#: Ball fractions the radii come from (App. B.7).
PAPER_FRACTIONS: tuple[float, ...] = (1e-13, 1e-9, 1e-8, 7e-6, 3.68e-4, 0.1)
#: Largest perturbation (bits) by ``n``.
PAPER_MAX_PERTURBATION: dict[int, int] = {64: 12, 784: 300, 1000: 375}


def _key(name: str) -> str:
    return name.lower().replace("_", "").replace("-", "").replace(" ", "")


_BY_KEY = {_key(name): name for name in _SPECS}


def resolve_algorithm(name: str | Algorithm) -> str:
    """The canonical name of an algorithm.

    Parameters
    ----------
    name : str or Algorithm
        An :class:`Algorithm` or a name, matched ignoring case, ``_``, ``-`` and spaces
        (``"cont_sdm_neuron_limit"`` is ``"Cont_SDM_NeuronLimit"``).

    Returns
    -------
    str

    Raises
    ------
    ValueError
        If the name is unknown; the message lists the valid names.
    """
    if isinstance(name, Algorithm):
        return name.value
    if isinstance(name, str):
        found = _BY_KEY.get(_key(name))
        if found is not None:
            return found
    raise ValueError(f"unknown algorithm {name!r}; valid names are {', '.join(ALL_ALGORITHMS)}")


def _algorithm_names(algorithms) -> list[str]:
    """Canonical names of ``algorithms``: one name (a str or :class:`Algorithm`) or an iterable."""
    if isinstance(algorithms, (str, Algorithm)):  # one rule, not the letters of its name
        algorithms = [algorithms]
    try:
        items = list(algorithms)
    except TypeError:
        raise ValueError(f"algorithms must be a rule name or an iterable of rule names; got "
                         f"{algorithms!r}") from None
    return [resolve_algorithm(a) for a in items]


def algorithm_spec(name: str | Algorithm) -> AlgorithmSpec:
    """The :class:`AlgorithmSpec` of an algorithm (see :func:`resolve_algorithm`).

    Raises
    ------
    ValueError
        If the name is unknown (the message lists the valid names).
    """
    return _SPECS[resolve_algorithm(name)]


def paper_radii(n: int) -> list[int]:
    """Radii of App. B.7: the binomial quantiles of :data:`PAPER_FRACTIONS`.

    Parameters
    ----------
    n : int
        Dimension, ``>= 1``.

    Returns
    -------
    list of int
        ``[5, 9, 11, 15, 19, 27]`` at ``n = 64``; ``[384, 405, 411, 431, 447, 480]`` at
        ``n = 1000``.

    Raises
    ------
    ValueError
        If ``n < 1``.

    References
    ----------
    Bricken & Pehlevan (2021), App. B.7 (``space_frac_to_hamm_radius`` in their code).
    """
    return [radius_for_fraction(n, p) for p in PAPER_FRACTIONS]
