"""Learnt key projections (App. B.7): does "the projections do not generalise" survive?

Bricken & Pehlevan (2021) also learn a linear map of images (MNIST, CIFAR-10) into the
``n = 64`` space of their attention setting and iterate attention/SDM reads there. The paper
reports that "the learnt projections do not generalise to test data" (App. B.7, Figs. 30-31;
seed 002, section "Convergence experiments (App. B.7)"). Reading the authors' code shows that at
test time the memory holds the *training* images while the queries and their targets are *test*
images, so no target is ever stored and no memory could return it (``LearnProjections.ipynb``,
cell 2, in [BP21-code]; quoted below under "Which images are stored"). This package
trains the projection as the authors did and evaluates it both ways.

Submodules
----------
protocol
    The authors' settings and units: :data:`AUTHORS_BASE_DIM`, :data:`AUTHORS_TRAIN_LEVELS`,
    :data:`AUTHORS_TEST_LEVELS`, :data:`AUTHORS_RADII`, :data:`AUTHORS_RULES`,
    :data:`TRAIN_RULE`, the memory / query arrangements :data:`PROTOCOLS` (tabulated there:
    ``"authors"``, which stores no test target, and the ``"stored*"`` protocols, which do) and
    the :data:`BASELINES`; perturbation levels as cosines (:func:`level_to_cosine`,
    :func:`cosine_to_level`).
training
    :func:`train_projection` learns ``W`` (``n_out x n_base``) by gradient descent through one
    softmax read, as the authors' ``train_projection`` does, and returns a
    :class:`LearntProjection` (the matrix, its random initialisation, the loss per epoch, the
    configuration :class:`ProjectionConfig`).
evaluation
    :func:`evaluate_projection` perturbs queries, iterates a read rule in the projected space for
    at most 10 steps and scores the final state against its target: a tidy frame, one row per
    query, rule and perturbation level, with whether the target is stored, the nearest-stored
    bound (:func:`nearest_stored`) and whether the state ends nearest to the stored item nearest
    the target.
experiment
    :func:`projection_experiment` runs the protocols from one trained projection, with the
    random initial matrix and the identity as baselines (a :class:`ProjectionExperiment`);
    :func:`summarize_projection` averages it.
presets
    :data:`PROJECTION_PRESETS` and :func:`run_projection_preset` hold the ``"quick"`` and
    ``"cpu"`` runs on the digits (:func:`digits_images`).

Chapter 36 runs :func:`run_projection_preset`. Every public name of the submodules is
re-exported here, so ``from assocmem.sdm.projections import run_projection_preset`` works.

What the ``"cpu"`` preset shows (seed 0; ``d = 11``, ``Cont_SDM_BFit_Attention``; mean cosine
to the target at levels 0 / 50 / 100 / 150, query cosines 1.0 / 0.87 / 0.75 / 0.62):

* ``"authors"``: 0.867 / 0.854 / 0.831 / 0.773 against a nearest-stored bound of 0.869: the
  learnt memory is at the ceiling of a memory that does not hold the target.
* ``"stored"`` (test images, never seen in training): 0.999 / 0.999 / 0.990 / 0.959, no worse
  than ``"stored_train"`` (0.996 / 0.993 / 0.979 / 0.921) or, with the 1,347 training images as
  distractors, ``"stored_all"`` (0.992 / 0.987 / 0.969 / 0.903). The projection generalises.
* Baselines under ``"stored"``: identity 0.960 / 0.953 / 0.946 / 0.910, random initial matrix
  0.941 / 0.929 / 0.900 / 0.784. Beyond the training perturbations (levels 200-300, query
  cosine <= 0.49) the learnt projection is worse than the identity (0.482 against 0.653 at 250).

The protocol as the authors ran it
----------------------------------
Sources: the repository ``TrentBrick/attention-approximates-sdm`` (commit ``0a5d55e``):
``LearnProjections.ipynb`` (cell 2, the parameters and data; cell 3, the train/test loop),
``LearnProjections-Beta.ipynb`` (the same cells, MNIST, with ``beta`` learnt too),
``utils_LearnProjections.py`` (``train_projection``, ``test_projection``),
``Implementations_Associative_Memory.py`` (``update_Cont_Attention``, ``update_using_cache``,
``convergence_loop``, ``torch_cosine_sims``) and ``Data_Processing_Associative_Memory.py``
(``cosine_perturb_queries``).

* **What is trained.** One matrix ``W_k`` of shape ``(n, n_base)`` = ``(64, 784)`` (MNIST) or
  ``(64, 1024)`` (CIFAR-10 in grayscale), initialised ``torch.randn`` (standard normal), afresh
  for each of ``n_train_repeats = 3`` repeats and each radius ``d in [5, 9, 11, 15]`` (cell 2,
  cell 3). ``beta`` is fixed to the fit to the binary circle intersection at ``n = 64``
  (``fit_beta(n, r, d, False)``: 35.5, 20.0, 15.9, 10.1); the Beta notebook also learns ``beta``
  from 3 times that value.
* **What is projected.** Keys and queries only: ``pKs = W_k @ keys`` and ``pQs = W_k @ queries``,
  each column L2-normalised. The values (pointers) are the raw, unprojected images
  (``update_Cont_Attention(pKs, keys, beta)``), so a read returns a convex combination of
  stored images in pixel space.
* **Training read and loss.** One softmax read (``train_multiple_steps = False``):
  ``out = keys @ softmax(beta * pKs.T @ pQs)``; loss ``sum((out - targets)^2) / batch_size``
  against the clean image (``train_projection``). The memory is the whole training set
  (``keys``, 60,000 images with ``m = None``), so every query's own target is stored.
* **Optimiser.** Adam on ``W_k``, ``lr = 0.005``, ``proj_epochs = 10`` (the Beta notebook:
  ``lr = 0.01``, 20 epochs), ``batch_size = 128``, shuffled: about 4,690 steps on MNIST.
* **Data.** ``transforms.ToTensor()`` pixels in ``[0, 1]``, not centred, flattened (cell 2).
* **Perturbation** (``cosine_perturb_queries``). The query is moved to cosine
  ``1 - 2 k / n_base`` from its clean image along a ``uniform(-1, 1)`` vector orthogonalised
  against it, then rescaled to the image's norm. Training draws ``k ~ uniform(10, 100)`` per
  query (``fix_perturb = False``); testing uses ``k in [0, 50, 100, 150, 200, 250, 300]``
  (``max_perturb = 300``, ``n_perturbs = 7``), cosines 1.0 down to 0.235 on MNIST. The check
  that the target stays the nearest stored image is computed but not enforced
  (``ensure_no_closer_images = False``).
* **Test reads** (``test_projection``, ``convergence_loop``). Up to ``max_conv_steps = 10``
  reads: project the current pixel-space state with ``W_k``, L2-normalise, read; a read whose
  weights are all zero leaves the state unchanged. The batch stops when no pixel of any query
  moves by more than ``epsilon = 0.05``; states are not renormalised
  (``renorm_cont_queries = False``). Rules: ``Cont_SDM_BFit_Attention``,
  ``Cont_SDM_CFit_Attention``, ``Cont_SDM(_NeuronLimit)`` and
  ``Cont_Binary_SDM(_NeuronLimit)``, with ``r`` in ``logspace(6, 20, 5)`` and unlimited.
* **Metric.** Cosine between the final state and the clean target, in pixel space
  (``torch_cosine_sims``), for the "train" and the "test" loader.
* **Which images are stored.** Training: all training images. Test: cell 2 builds the test
  memory as ``tkeys = torch.clone(cpu_keys)``, the *training* images (``cpu_tkeys``, the test
  images, only feed the test loader), and ``test_projection`` uses ``tkeys`` for the "test" run.
  So the "test" curves query a memory of training images with test images: no target is stored.

Where we differ, and why
------------------------
* **Data.** The presets use scikit-learn's digits (:func:`assocmem.datasets.load_digits_patterns`,
  1,347 training and 450 test images, centred with the training mean, then divided by 16 so that
  a pixel's full scale is 1 as with ``ToTensor``). Their ``n_base = 64`` equals ``n_out = 64``,
  so ``W`` is square: a learnt metric, not a compression, and the identity is a fair baseline.
  MNIST (``n_base = 784``) works the same way through :func:`projection_experiment` when a
  reader has the files (:func:`assocmem.datasets.load_mnist`).
* **Perturbation units.** Levels keep the authors' MNIST cosines for every ``n_base``: level
  ``k`` means cosine ``1 - 2 k / 784`` (:data:`AUTHORS_BASE_DIM`), so a digit query is as far
  from its target as an MNIST query was. The direction is uniform on the sphere orthogonal to
  the target (:func:`assocmem.sdm.read.rotate_to_cosine`); the authors' orthogonalised
  ``uniform(-1, 1)`` vector is not isotropic. Both reach the cosine exactly.
* **Number of steps, not epochs.** The ``"cpu"`` preset trains for about the authors' number of
  Adam steps (430 epochs of 11 batches = 4,730 steps), since 10 epochs of the digits would be
  110 steps.
* **Stopping per query**, as :func:`assocmem.sdm.convergence.converge` does; the authors stop a
  batch when no query in it moves. Deterministic rules give the same final states.
* **Read rules** come from :func:`assocmem.sdm.convergence.make_read_rule` (weights computed in
  the projected space, applied to the stored images); the neuron-limited rules run when ``r`` is
  given. The ``"cpu"`` preset runs the four exact rules, one projection per radius (the authors:
  three).
* **New here**: the ``"stored*"`` protocols, the random-initialisation and identity baselines,
  the nearest-stored bound, and the nearest-item check.

References
----------
- [BP21] Bricken, T., & Pehlevan, C. (2021). Attention approximates sparse distributed memory.
  NeurIPS 34. App. B.7 (convergence experiments; learnt projections, Figs. 30-31), Eq. 10 (the
  ``beta`` fit).
- [S002] Seed 002, a review of [BP21], section "Convergence experiments (App. B.7)": "The
  learnt projections do not generalise to test data (Figs. 30-31)"; claim C5.
- [BP21-code] The authors' code, ``github.com/TrentBrick/attention-approximates-sdm`` (commit
  ``0a5d55e``): the files listed under "The protocol as the authors ran it"; cell 2 of
  ``LearnProjections.ipynb`` builds the test-time memory from the training images, so the
  learnt-projection experiment never stores its test targets.
"""

from assocmem.sdm.projections.protocol import *  # noqa: F401,F403
from assocmem.sdm.projections.protocol import __all__ as _protocol_all
from assocmem.sdm.projections.training import *  # noqa: F401,F403
from assocmem.sdm.projections.training import __all__ as _training_all
from assocmem.sdm.projections.evaluation import *  # noqa: F401,F403
from assocmem.sdm.projections.evaluation import __all__ as _evaluation_all
from assocmem.sdm.projections.experiment import *  # noqa: F401,F403
from assocmem.sdm.projections.experiment import __all__ as _experiment_all
from assocmem.sdm.projections.presets import *  # noqa: F401,F403
from assocmem.sdm.projections.presets import __all__ as _presets_all

__all__ = [*_protocol_all, *_training_all, *_evaluation_all, *_experiment_all, *_presets_all]
