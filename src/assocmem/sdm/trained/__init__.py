"""Claims of seed 002 about trained networks, tested on attention models the book trains.

The review of Bricken & Pehlevan (2021) (seed 002) lists claims about trained Transformers that
the paper supports with third-party checkpoints or GPT-2 (claims C6-C8, C10-C14) and asks whether
recall in a trained QK-norm model degrades with context length along the shape of the SDM
capacity formula (Eq. 26). No pretrained weights are available offline, so this package trains
small attention models on an associative-recall task on the CPU and measures them; the GPT-2
code runs on any ``transformers`` GPT-2, and is tested on one built from a small config.

Submodules
----------
recall
    The task (random bipolar addresses and value tokens in context, a noisy query) and the
    one-layer attention model with QK-norm and a learned ``beta`` (or LayerNorm, or plain
    dot-product scores; raw or L2-normalised values), trained by AdamW in float64
    (:class:`RecallConfig`, :class:`RecallAttention`, :func:`train_recall`,
    :func:`evaluate_recall`). Chapter 37.
reference
    The CD-, SNR- and memory-optimal ``beta`` at the model's head dimension and context length
    (:func:`reference_betas`, claim C7) and the recall curve against ``m`` fitted by the shape
    of Eqs. 25-26 and by a free logistic (:func:`fit_accuracy_curves`, the open question).
    Chapter 37.
effective_beta
    App. A.2's "maximum observed softmax input" (:func:`max_softmax_input`) against the
    log-linear slope of Eq. 10 fitted to a head's weights (:func:`log_linear_beta`), and the
    same two readings per layer and head of a Hugging Face GPT-2 (:func:`gpt2_effective_betas`,
    :func:`load_gpt2`; claim C8). Chapter 37.
value_norms
    Weight against weight x value norm (App. A.3, claim C12: :func:`weight_contribution`),
    LayerNorm's distance from the sphere and the spread of ``beta`` it causes (claim C11:
    :func:`sphere_distance`, :func:`beta_spread`), and a single head reading a key stored with
    several values (claim C14: :func:`duplicate_key_read`). Chapter 37.

The sweep that trains and measures the models is :mod:`assocmem.sdm.trained_sweeps`
(``trained_recall``). Chapter 37 uses every submodule.
"""

from assocmem.sdm.trained.effective_beta import *  # noqa: F401,F403
from assocmem.sdm.trained.effective_beta import __all__ as _effective_all
from assocmem.sdm.trained.recall import *  # noqa: F401,F403
from assocmem.sdm.trained.recall import __all__ as _recall_all
from assocmem.sdm.trained.reference import *  # noqa: F401,F403
from assocmem.sdm.trained.reference import __all__ as _reference_all
from assocmem.sdm.trained.value_norms import *  # noqa: F401,F403
from assocmem.sdm.trained.value_norms import __all__ as _value_all

__all__ = list(_recall_all) + list(_reference_all) + list(_effective_all) + list(_value_all)
