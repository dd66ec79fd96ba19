"""The library against the seed's own public code, timed interleaved in one process (issue 30).

    python benchmarks/bench_authors.py --hebbian-mlps PATH            # 10-20 min, most of it their search
    python benchmarks/bench_authors.py --hebbian-mlps PATH --quick    # fewer steps and rounds
    python benchmarks/bench_authors.py --sdm SDMPATH                  # the SDM geometry pairs only

``PATH`` is a checkout of https://github.com/HazyResearch/hebbian-mlps at commit
41443978d2261f30a9749fe7a286c95be08b331e (fetched by whoever runs the benchmark; none of its
code is in this repository). ``PATH/src`` goes on ``sys.path`` and its package ``hebbian`` is
imported as published; nothing of it is patched, except that the capacity search may hand their
``run_mlp_experiment`` our fact set (see below).

Pairs (theirs against ours, the same inputs on both sides):

* **GD MLP** (d = 64, F = 256, m = 8 and m = 256; float32; a fixed number of full-batch Adam
  steps, the loss cutoff off on both sides): theirs ``hebbian.mlp_core.mlp_gd.get_gd_mlp`` with
  the config their capacity experiment uses (identity gate, no bias), ``cutoff=None`` and
  ``verbose`` off (their metric evaluation every 1,000 epochs and final accuracy and MSE kept as
  published); ours
  ``train_mlp(facts, m, epochs=N, tol=0, dtype=torch.float32)``, and, where the library has it,
  the batched trainer ``train_mlps(facts, [m], ...)`` timed in the same rounds (and once more for
  both widths in one call against their two calls).
* **GD capacity search** (d = 32, F = 64, the same number of epochs on both sides): theirs is the
  loop of their ``expts/mlp_capacity/run.py::_run_binary_searches_locally`` (bisection over a
  float m in [1, 65536] until ``hi - lo < 0.05``, every probe ``max(1, round(m))`` trained from
  scratch by their ``run_mlp_experiment`` with method ``gd``, ``gd_num_epochs`` set, seed 42, and
  success at accuracy 1), written out here and calling their function; ours
  ``capacity_search(facts, "gd", 0, epochs=N)`` (gallop, bisection, two verification widths).
  Both keep their published loss cutoff 1e-7. By default their ``run_mlp_experiment`` is handed
  our fact set (its call to ``hebbian.data.synthetics.generate_factset`` is answered with our
  facts, converted to their ``Factset``); ``--their-factsets`` lets it draw its own, a different
  fact set of the same (d, F) at every probe (their mapping is drawn from numpy's unseeded global
  generator).
* **Whitened construction + accuracy** (d = 64, F = 1024, m = 512, ridge 1e-6, float64): theirs
  ``HebbianMethod`` (``variant="whitened"``) through their registry, as their
  ``run_mlp_experiment`` calls it (``fit_or_construct`` builds and scores); ours
  ``hebbian_mlp(facts, m, "full", ridge=1e-6)`` and ``accuracy``.
* **Data-dependent + accuracy** (the same facts, m = 256): theirs ``variant="data_dependent"``;
  ours ``data_dependent_mlp(facts, 256, ridge=1e-6)`` and ``accuracy`` (their construction
  scores its model inside, so ours is scored too).

* **SSFR Transformer training** (attention pretraining with the identity MLP: d = 64, F = 512,
  J = V_J = 9, batch 256, float32, AdamW lr 2e-4, weight decay 0.1, betas (0.9, 0.999); 100
  steps a round, 20 with ``--quick``): theirs the inner step of their
  ``hebbian.transformer.train_attention.train_attention`` written out here (their ``GPT`` with
  the settings of their ``build_attn_pretrain_config``, their batch generator, their
  ``configure_optimizers``; the batch accuracy and the loss read with ``.item()`` every step, as
  published); ours ``train_attention`` with ``W_V``, ``W_O`` trained and the attention residual
  off, as theirs. Both use our embedding table (copied into their tied ``wte``, frozen). Not an
  equality check (different parametrisations, initialisations and batch streams): the script
  checks both first losses are near log(classes) and prints both loss trajectories' ends.

With ``--sdm SDMPATH`` (a checkout of https://github.com/TrentBrick/attention-approximates-sdm;
the file benchmarked is its ``SDM_Circ_Inter_Funcs.py`` as of commit
0a5d55ecf1b7b0859c5d1199d46758e6dec81fbf, imported from ``SDMPATH`` as published) three more
pairs run, each checked for agreement before it is timed (the script stops if a check fails):

* **exact intersection table** (n = 1000, d = 447, dv = 0..2d): theirs
  ``expected_intersection_lune(1000, dvs, 447, None)`` (Kanerva's lune, float64 binomials);
  ours ``circle_intersection_table(1000, 447, dvs)`` (exact integers). Check: the absolute gap is
  at most 1e-10 I(0) at every dv (their binomials come from gamma functions); the script prints
  up to which dv theirs is within 1e-9 relative (beyond it their ``area - lune`` cancels).
* **cap intersections** (n = 64, d = 11, 10,000 cosines ``linspace(-1, 1)`` with the last moved
  1e-15 below 1, as their ``get_binary_and_continuous_caches`` does): theirs
  ``cap_intersection(64, rho, 11, 1)`` (scipy ``quad`` per cosine); ours
  ``cap_intersection(rho, 11, 64)``. Check: the same cosines overlap, and their log counts minus
  their constant ``2 - log 2`` (see ``log_cap_intersection``) are within 1e-6 of ours.
* **beta fit** (n = 64, d = 5, 9, 11, 15, window dv = 0..d-1): theirs ``fit_beta_regression`` on
  their ``expected_intersection_lune`` table; ours ``fit_beta(64, d, convention="authors")``
  (which builds its table too). Check: betas within 1e-9 relative.

``--hebbian-mlps`` and ``--sdm`` are each optional (at least one is needed); a pair group whose
checkout is not given is skipped.

Each pair is timed in rounds, alternating which side goes first; the ratio of a round is their
time / our time, and the table gives the median over rounds and the range, at
``torch.set_num_threads(1)`` and then 2. For each block the script records the 1-minute load
average at its start and end and the share of the machine's CPU that other processes used
(:class:`assocmem.benchmarking.CpuLoad`). The library's thread rule (``ASSOCMEM_LOAD_CAP``) is
left as the environment sets it (off by default), so both sides run at torch's thread setting.
Their code prints a line per GD training, and in the capacity search (their config leaves
``verbose`` on there) a tqdm bar and a log line every 100 epochs; the standard output and error
of both sides go to an in-memory sink while timed.

Absolute times are this machine's only; the ratios are what carries over.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import math
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import torch

from assocmem.benchmarking import CpuLoad, load_cap_enabled, machine_info

COMMIT = "41443978d2261f30a9749fe7a286c95be08b331e"
SDM_COMMIT = "0a5d55ecf1b7b0859c5d1199d46758e6dec81fbf"  # TrentBrick/attention-approximates-sdm
PRECISION = 0.05  # their binary_search_precision
SEARCH_RANGE = (1.0, 65536.0)  # their binary_search_range
THEIR_SEED = 42  # their ExperimentConfig.seed


@dataclass
class Pair:
    name: str
    ours: object
    theirs: object
    rounds: int
    calls: tuple[int, int] = (1, 1)  # calls per round (ours, theirs)
    extra: dict = field(default_factory=dict)  # label -> another "ours", timed in the same rounds
    warmup: bool = True
    notes: list = field(default_factory=list)


@contextlib.contextmanager
def _quiet():
    """Swallow standard output and error (their GD prints a line per training, and the
    capacity experiment's config leaves their tqdm bar and per-100-epoch log on)."""
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        yield


def _time(fn, calls: int) -> float:
    """Median seconds of ``calls`` calls, standard output and error swallowed."""
    times = []
    for _ in range(calls):
        with _quiet():
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
    return statistics.median(times)


def run_pair(pair: Pair) -> dict:
    """Interleaved rounds; ratios their time / our time, medians and ranges over rounds."""
    if pair.warmup:
        for fn in (pair.ours, pair.theirs, *pair.extra.values()):
            with _quiet():
                fn()
    t_ours, t_theirs, ratios = [], [], []
    t_extra = {k: [] for k in pair.extra}
    r_extra = {k: [] for k in pair.extra}
    with CpuLoad() as load:
        for r in range(pair.rounds):
            sides = [("ours", pair.ours, pair.calls[0]), ("theirs", pair.theirs, pair.calls[1])]
            sides += [(k, fn, pair.calls[0]) for k, fn in pair.extra.items()]
            if r % 2:
                sides.reverse()
            t = {name: _time(fn, calls) for name, fn, calls in sides}
            t_ours.append(t["ours"])
            t_theirs.append(t["theirs"])
            ratios.append(t["theirs"] / t["ours"])
            for k in pair.extra:
                t_extra[k].append(t[k])
                r_extra[k].append(t["theirs"] / t[k])
    out = {"ours": statistics.median(t_ours), "theirs": statistics.median(t_theirs),
           "ratio": (statistics.median(ratios), min(ratios), max(ratios)),
           "extra": {k: (statistics.median(t_extra[k]), statistics.median(v), min(v), max(v))
                     for k, v in r_extra.items()}}
    out.update(load.summary())
    return out


# ------------------------------------------------------------------------------------------------
# their side: a Factset from ours


def their_factset(facts, dtype=None):
    """Their ``Factset`` holding our keys, value table and map (no copy of their code)."""
    from hebbian.data.synthetics.factsets import BijectiveMapping, Factset

    keys, values = facts.keys, facts.values
    if dtype is not None:
        keys, values = keys.to(dtype), values.to(dtype)
    mapping = BijectiveMapping(inputs=list(range(facts.num_facts)),
                               outputs=[int(v) for v in facts.mapping.tolist()])
    return Factset(input_embeddings=keys, output_embeddings=values, mapping=mapping,
                   d_model=facts.dim, vocab_size=facts.num_facts)


def their_gd(factset, m: int, epochs: int):
    """Their GD baseline with the capacity experiment's config (``_run_gd``), the cutoff off."""
    from hebbian.mlp_core.mlp_gd import GDMLPConfig, get_gd_mlp

    cfg = GDMLPConfig()
    cfg.m = m
    cfg.shared.device = "cpu"
    cfg.shared.build_dtype = torch.float32
    cfg.shared.verbose = False
    cfg.shared.mlp_config.activation.activation = "identity"
    cfg.bias = False
    cfg.num_epochs = epochs
    cfg.cutoff = None
    return get_gd_mlp(factset, cfg)


def their_hebbian(factset, m: int, variant: str):
    """Their Hebbian construction through their registry, as their ``_run_hebbian`` calls it."""
    import hebbian.methods.hebbian  # noqa: F401  (registers the method)
    from hebbian.core.registry import Registry
    from hebbian.methods.hebbian import HebbianConfig
    from hebbian.mlp_core.task import SharedConstructionConfig

    cfg = HebbianConfig(m=m, variant=variant, ridge=1e-6)
    cfg.shared = SharedConstructionConfig(device="cpu", build_dtype=torch.float64, verbose=False)
    method = Registry.get_method("hebbian")()
    method.initialize(cfg)
    return method.fit_or_construct(factset)


@contextlib.contextmanager
def feed_factset(factset):
    """Answer their ``generate_factset`` with ``factset`` for the duration (None: leave it)."""
    if factset is None:
        yield
        return
    import hebbian.data.synthetics as synthetics

    original = synthetics.generate_factset

    def fake(*, d_model, vocab_size, **kwargs):
        if (d_model, vocab_size) != (factset.d_model, factset.vocab_size):
            raise RuntimeError(f"asked for d={d_model}, F={vocab_size}; fed d={factset.d_model}, "
                               f"F={factset.vocab_size}")
        return factset

    synthetics.generate_factset = fake
    try:
        yield
    finally:
        synthetics.generate_factset = original


def their_search(d: int, F: int, epochs: int, factset=None) -> tuple[int | None, int, int]:
    """The loop of their ``_run_binary_searches_locally`` for one (gd, d, F) point.

    Returns (the m their search reports, probes trained, distinct widths trained).
    """
    from hebbian.expts.mlp_capacity.helpers import run_mlp_experiment

    spec = {"mlp_method": "gd", "mlp_dtype": None, "mlp_method_kwargs": None,
            "capacity_multiplier": 1.0, "gd_num_epochs": epochs}  # their _METHOD_SPECS["gd"]
    lo, hi = SEARCH_RANGE
    achieved, probes, widths = None, 0, set()
    with feed_factset(factset):
        while (hi - lo) >= PRECISION:
            mid = (lo + hi) / 2
            m_int = max(1, int(round(float(mid))))
            probes += 1
            widths.add(m_int)
            try:
                res = run_mlp_experiment(
                    d_model=d, num_facts=F, m=m_int, method_label="gd", method_spec=spec,
                    device="cpu", seed=THEIR_SEED, mapping_type="random",
                    facts_multiplier=F / d**2, embedding_init="spherical", tie_embeddings=True,
                    spike_beta=0.0, spike_target="both", spike_seed=42, embeddings_dir=None)
                ok = res.get("best_acc", 0.0) >= 1.0
            except Exception:  # a failed job counts as a failed probe, as in their loop
                ok = False
            if ok:
                achieved, hi = m_int, mid
            else:
                lo = mid
    return achieved, probes, len(widths)


# ------------------------------------------------------------------------------------------------
# the pairs


def _train_mlps():
    try:
        from assocmem.mlps.mlp.gradient_descent import train_mlps
    except ImportError:
        return None
    return train_mlps


def gd_pairs(steps: int, rounds: int) -> list[Pair]:
    from assocmem.mlps.facts import make_fact_set
    from assocmem.mlps.mlp import train_mlp

    d, F, widths = 64, 256, (8, 256)
    facts = make_fact_set(F, d, tied=True, seed=0)
    theirs_fs = their_factset(facts)
    train_mlps = _train_mlps()
    pairs = []
    for m in widths:
        pair = Pair(f"GD MLP m={m}, {steps} steps",
                    lambda m=m: train_mlp(facts, m, epochs=steps, tol=0, dtype=torch.float32),
                    lambda m=m: their_gd(theirs_fs, m, steps), rounds)
        if train_mlps is not None:
            pair.extra["ours batched: train_mlps(facts, [m])"] = (
                lambda m=m: train_mlps(facts, [m], epochs=steps, tol=0, dtype=torch.float32))
        pair.warmup = False  # the accuracy check below is both sides' untimed first call
        ours = train_mlp(facts, m, epochs=steps, tol=0, dtype=torch.float32)
        with _quiet():
            _, info = their_gd(theirs_fs, m, steps)
        for fn in pair.extra.values():
            fn()
        pair.notes.append(f"accuracy after {steps} steps: ours {ours.info['accuracy']:.3f}, "
                          f"theirs {info['final_accuracy']:.3f} (d={d}, F={F}, float32)")
        pairs.append(pair)
    if train_mlps is not None:
        pairs.append(Pair(f"GD MLP m={widths[0]} and {widths[1]}, {steps} steps",
                          lambda: train_mlps(facts, list(widths), epochs=steps, tol=0,
                                             dtype=torch.float32),
                          lambda: [their_gd(theirs_fs, m, steps) for m in widths], rounds,
                          notes=["ours: one train_mlps call; theirs: one get_gd_mlp per width"]))
    else:
        pairs[0].notes.append("train_mlps (batched trainer) not importable: its lines skipped")
    return pairs


def search_pair(epochs: int, rounds: int, feed: bool) -> Pair:
    from assocmem.mlps.capacity_sweeps import capacity_search
    from assocmem.mlps.facts import make_fact_set

    d, F = 32, 64
    facts = make_fact_set(F, d, tied=True, seed=0)
    fs = their_factset(facts) if feed else None
    found = {}

    def ours():
        res = capacity_search(facts, "gd", 0, epochs=epochs)
        found["ours"] = (res.m, len(res.evaluations), len(res.evaluations))

    def theirs():
        found["theirs"] = their_search(d, F, epochs, fs)

    pair = Pair(f"GD capacity search d={d} F={F}, {epochs} epochs", ours, theirs, rounds,
                warmup=False)
    pair.found = found
    pair.notes.append("their loop: bisection over float m in [1, 65536] to 0.05, each probe "
                      "round(m) trained from scratch (repeats included); ours: gallop, bisection, "
                      "2 verification widths, no width twice; loss cutoff 1e-7 on both sides")
    pair.notes.append("fact set: " + ("the same on both sides (ours, handed to their "
                                      "run_mlp_experiment)" if feed else
                                      "theirs drawn by their generator at every probe (seed 42 "
                                      "embeddings, numpy-global mapping): not the same as ours"))
    return pair


def hebbian_pairs(rounds: int, calls: int) -> list[Pair]:
    from assocmem.mlps.facts import make_fact_set
    from assocmem.mlps.margins import accuracy
    from assocmem.mlps.mlp import data_dependent_mlp, hebbian_mlp

    d, F = 64, 1024
    facts = make_fact_set(F, d, tied=True, seed=0)
    fs = their_factset(facts, torch.float64)

    def ours_whitened():
        return accuracy(hebbian_mlp(facts, 512, "full", ridge=1e-6), facts)

    def ours_dd():
        return accuracy(data_dependent_mlp(facts, 256, ridge=1e-6), facts)

    out = []
    for name, ours, theirs in (
            ("whitened + accuracy m=512", ours_whitened, lambda: their_hebbian(fs, 512, "whitened")),
            ("data-dependent + accuracy m=256", ours_dd,
             lambda: their_hebbian(fs, 256, "data_dependent"))):
        pair = Pair(name, ours, theirs, rounds, calls=(calls, calls), warmup=False)  # warmed below
        pair.notes.append(f"accuracy: ours {ours():.4f}, theirs {theirs()[1]['accuracy']:.4f} "
                          f"(d={d}, F={F}, ridge 1e-6, float64)")
        out.append(pair)
    return out


# ------------------------------------------------------------------------------------------------
# the SSFR Transformer training step against their hebbian.transformer GPT

TF_SETTINGS = {"d": 64, "F": 512, "J": 9, "V_J": 9, "batch": 256, "lr": 2e-4, "weight_decay": 0.1}


def transformer_pair(steps: int, rounds: int) -> Pair:
    """``steps`` attention-training steps on each side (identity MLP, float32, CPU).

    Theirs: the inner step of their ``hebbian.transformer.train_attention.train_attention``
    (default cross-entropy path), written out here and calling their ``GPT``, their
    ``AssociativeRecallBatchGenerator`` and their ``configure_optimizers``: next batch, forward
    with targets, batch accuracy read with ``.item()``, ``zero_grad``, backward, ``step``, loss
    read with ``.item()``. The model is built as their ``build_attn_pretrain_config`` and
    ``create_gpt_config`` set it (1 layer, 1 head, no bias, no dropout, no positional encoding,
    identity MLP, RMSNorm before attention, unit RMS norms before the MLP and the head, W_V and
    c_proj trained, attention residual off, tied embeddings frozen), with our embedding table
    copied into their ``wte`` (as their ``copy_embeddings_to_gpt`` does). Ours:
    ``train_attention`` with ``freeze_value_output=False`` and ``attention_residual=False``.
    Their loop's evaluation every 100 steps and its tqdm bar are not part of the timed step.
    """
    from hebbian.data.synthetics.factsets import BijectiveMapping
    from hebbian.transformer.data import AssociativeRecallBatchGenerator
    from hebbian.transformer.model import GPT, GPTConfig

    from assocmem.mlps.transformer import (SSFRTask, SSFRTransformer, TrainConfig,
                                           TransformerConfig, embedding_table, fact_map,
                                           train_attention)

    s = TF_SETTINGS
    d, F, J, VJ, B = s["d"], s["F"], s["J"], s["V_J"], s["batch"]
    task = SSFRTask(F, VJ, J)
    E = embedding_table(task, d, seed=0).to(torch.float32)
    f = fact_map(task, 1)
    model = SSFRTransformer(TransformerConfig(d=d, dtype=torch.float32, freeze_value_output=False,
                                              attention_residual=False), E, None, task=task)
    cfg = TrainConfig(steps=steps, batch_size=B, lr=s["lr"], weight_decay=s["weight_decay"])

    torch.manual_seed(0)
    gpt = GPT(GPTConfig(block_size=2 * J + 3, vocab_size=task.vocab_size, n_layer=1, n_head=1,
                        n_embd=d, dropout=0.0, bias=False, attn_residual=False,
                        no_positional_encoding=True, mlp_norm_type="unit_rmsnorm",
                        attn_norm_type="rmsnorm", lm_head_norm_type="unit_rmsnorm",
                        tie_embeddings=True, freeze_value_dense_identity=False,
                        use_identity_mlp=True))
    gpt.to(device="cpu", dtype=torch.float32)
    gpt.transformer.wte.weight.data.copy_(E)
    gpt.transformer.wte.weight.requires_grad = False  # tied: the head is frozen with it
    opt = gpt.configure_optimizers(weight_decay=s["weight_decay"], learning_rate=s["lr"],
                                   betas=(0.9, 0.999), device_type="cpu")
    mapping = BijectiveMapping(inputs=list(range(F)), outputs=[int(v) for v in f.tolist()])
    batches = AssociativeRecallBatchGenerator(mapping, F, VJ, J, J, B, steps)
    their_losses = []

    def theirs():
        gpt.train()
        for inputs, targets in batches:  # their loop: steps_per_dataset batches per epoch
            logits, loss = gpt(inputs, targets=targets)
            mask = targets != -100
            preds = logits.argmax(dim=-1)
            (preds[mask] == targets[mask]).float().mean().item()
            opt.zero_grad()
            loss.backward()
            opt.step()
            their_losses.append(loss.item())

    our_losses = []

    def ours():
        our_losses.append(train_attention(model, task, f, cfg).losses)

    ours()
    theirs()
    o_first, o_last = float(our_losses[0][0]), float(our_losses[-1][-1])
    t_first, t_last = their_losses[0], their_losses[-1]
    # both start from near-uniform logits: the first loss is close to log(number of classes)
    for side, a, b, k in (("ours", o_first, o_last, F), ("theirs", t_first, t_last, task.vocab_size)):
        if not (math.isfinite(a) and math.isfinite(b) and abs(a - math.log(k)) < 0.1):
            raise RuntimeError(f"transformer pair: {side} loss {a:.4f} -> {b:.4f} over {steps} "
                               f"steps (first step expected within 0.1 of log {k} = "
                               f"{math.log(k):.4f})")
    pair = Pair(f"SSFR Transformer training, {steps} steps", ours, theirs, rounds, warmup=False)
    pair.notes.append(f"d={d}, F={F}, J=V_J={J}, batch {B}, float32, AdamW lr {s['lr']:g} wd "
                      f"{s['weight_decay']:g}, identity MLP; loss over the first {steps} steps: "
                      f"ours {o_first:.3f} -> {o_last:.3f}, theirs {t_first:.3f} -> {t_last:.3f} "
                      f"(checked: finite, first within 0.1 of log F resp. log vocab; not an equality "
                      f"check: different parametrisations, initialisations and batches)")
    pair.notes.append(f"theirs: GPT forward at all {2 * J + 3} positions, logits over the "
                      f"{task.vocab_size}-token vocabulary, loss at the query (ignore_index); "
                      f"ours: query position only, logits over the {F} facts")
    return pair


# ------------------------------------------------------------------------------------------------
# SDM geometry against TrentBrick/attention-approximates-sdm (their SDM_Circ_Inter_Funcs.py)

SDM_BETA_RADII = (5, 9, 11, 15)  # the paper's n = 64 radii (Bricken & Pehlevan 2021, Fig. 2)


def _their_sdm():
    import SDM_Circ_Inter_Funcs as theirs  # on sys.path from --sdm

    return theirs


def sdm_pairs(rounds: int, calls: int, cosines: int) -> list[Pair]:
    """The three SDM geometry rows of issue 30, each checked for agreement before timing."""
    import math

    import numpy as np

    from assocmem.sdm.geometry.beta_fit import fit_beta
    from assocmem.sdm.geometry.intersection import circle_intersection_table
    from assocmem.sdm.geometry.spherical_caps import cap_intersection, log_cap_intersection

    A = _their_sdm()
    pairs = []

    # exact table: ours exact integers, theirs float64 area - lune (scipy comb, exact=False)
    n, d = 1000, 447
    dvs = list(range(2 * d + 1))
    ours_t = np.array([float(v) for v in circle_intersection_table(n, d, dvs)])
    with _quiet():
        theirs_t = A.expected_intersection_lune(n, dvs, d, None)
    # theirs: float64 binomials from gamma functions (scipy comb, exact=False), each good to about
    # 1e-13 relative, summed over up to d terms: tolerance 1e-10 of I(0) on the absolute gap
    err = np.abs(theirs_t - ours_t) / ours_t[0]
    if not err.max() <= 1e-10:
        raise RuntimeError(f"intersection table: |theirs - ours| / I(0) = {err.max():.2e} > 1e-10")
    rel = np.abs(theirs_t - ours_t) / np.where(ours_t > 0, ours_t, np.inf)
    good = int(np.argmax(rel > 1e-9)) if (rel > 1e-9).any() else len(dvs)
    pair = Pair(f"exact intersection table n={n} d={d}",
                lambda n=n, d=d: circle_intersection_table(n, d, dvs),
                lambda n=n, d=d: A.expected_intersection_lune(n, dvs, d, None), rounds,
                calls=(calls, 1))
    pair.notes.append(f"dv = 0..{2 * d}; |theirs - ours| <= {err.max():.1e} I(0) at every dv "
                      f"(checked: <= 1e-10 I(0)); within 1e-9 relative for dv < {good}, "
                      f"beyond that their float subtraction area - lune loses the digits (ours: "
                      f"exact integers, max relative gap {rel.max():.1e})")
    pairs.append(pair)

    # cap intersections: n = 64, d = 11, cosines in [-1, 1) (theirs divides by sin(t) at rho = 1)
    n, d = 64, 11
    rho = np.linspace(-1.0, 1.0, cosines)
    rho[-1] -= 1e-15  # as their get_binary_and_continuous_caches does
    ours_l = log_cap_intersection(rho, d, n)
    with _quiet():
        theirs_l = A.cap_intersection(n, rho, d, 1, return_log=True)
    theirs_ok, ours_ok = theirs_l > -1e29, np.isfinite(ours_l)
    shift = 2 - math.log(2)  # their log space adds 2 where it means log 2 (ours: docstring)
    gap = np.abs(theirs_l[ours_ok] - shift - ours_l[ours_ok]).max() if ours_ok.any() else 0.0
    if (theirs_ok != ours_ok).any() or not gap <= 1e-6:
        raise RuntimeError(f"cap intersections disagree: {int((theirs_ok != ours_ok).sum())} "
                           f"overlap flags differ, max |log gap| {gap:.2e} (tolerance 1e-6)")
    pair = Pair(f"cap intersections n={n} d={d}, {cosines} cosines",
                lambda n=n, d=d: cap_intersection(rho, d, n),
                lambda n=n, d=d: A.cap_intersection(n, rho, d, 1), rounds, calls=(calls, 1))
    pair.notes.append(f"theirs: scipy quad per cosine, r = 1 (a fraction of the sphere, times "
                      f"their e^2/2); ours: Gauss-Legendre, vectorised. Same overlap set "
                      f"({int(ours_ok.sum())} of {cosines}); log counts within {gap:.1e} after "
                      f"their constant 2 - log 2 (checked: <= 1e-6)")
    pairs.append(pair)

    # beta fit: the paper's four radii at n = 64, window dv = 0..d-1, their slope convention
    n = 64

    def ours_betas():
        return [fit_beta(n, r, convention="authors").beta for r in SDM_BETA_RADII]

    def theirs_betas():
        return [A.fit_beta_regression(n, list(range(r)),
                                      A.expected_intersection_lune(n, list(range(r)), r, None))
                for r in SDM_BETA_RADII]

    b_o, b_t = ours_betas(), theirs_betas()
    worst = max(abs(t - o) / abs(o) for o, t in zip(b_o, b_t))
    if not worst <= 1e-9:
        raise RuntimeError(f"betas differ: ours {b_o}, theirs {b_t} (tolerance 1e-9 relative)")
    pair = Pair(f"beta fit n={n} d={','.join(map(str, SDM_BETA_RADII))}", ours_betas,
                theirs_betas, rounds, calls=(calls, calls))
    pair.notes.append("betas " + ", ".join(f"{b:.2f}" for b in b_o) + f" on both sides (within "
                      f"{worst:.1e} relative; checked <= 1e-9); ours fit_beta(64, d, "
                      f"convention='authors'), theirs fit_beta_regression on their lune table")
    pairs.append(pair)
    return pairs


# ------------------------------------------------------------------------------------------------


def _fmt_time(s: float) -> str:
    return f"{s:.3f} s" if s >= 1 else f"{s * 1e3:.1f} ms"


def _fmt_ratio(r) -> str:
    med, lo, hi = r
    return f"{med:.2f}x [{lo:.2f}-{hi:.2f}]"


def _their_commit(path: Path, expected: str = COMMIT) -> str:
    try:
        out = subprocess.run(["git", "-C", str(path), "rev-parse", "HEAD"], capture_output=True,
                             text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return "unknown (git not available)"
    if out.returncode != 0:
        return "unknown (not a git checkout)"
    sha = out.stdout.strip()
    return sha + ("" if sha == expected else f"  (NOT the benchmarked commit {expected})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hebbian-mlps", type=Path, default=None,
                        help=f"checkout of HazyResearch/hebbian-mlps (commit {COMMIT[:8]}); "
                             "without it the MLP pairs are skipped")
    parser.add_argument("--sdm", type=Path, default=None,
                        help="checkout of TrentBrick/attention-approximates-sdm (commit "
                             f"{SDM_COMMIT[:8]}); without it the SDM pairs are skipped")
    parser.add_argument("--quick", action="store_true",
                        help="200 GD steps, 3 rounds, search at 200 epochs, one round")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2],
                        help="torch thread counts, in order (default 1 2)")
    parser.add_argument("--steps", type=int, default=None, help="GD steps (default 1000; quick 200)")
    parser.add_argument("--search-epochs", type=int, default=None,
                        help="epochs of every search probe, both sides (default 2000; quick 200)")
    parser.add_argument("--search-rounds", type=int, default=None,
                        help="rounds of the capacity search pair (default 1)")
    parser.add_argument("--no-search", action="store_true", help="skip the capacity search pair")
    parser.add_argument("--their-factsets", action="store_true",
                        help="let their run_mlp_experiment draw its own fact sets in the search")
    parser.add_argument("--only", nargs="*", default=None, help="pair names to run (substring match)")
    parser.add_argument("--record", action="store_true",
                        help="write the table to benchmarks/authors_same_run.json (make bench prints it)")
    args = parser.parse_args(argv)

    if args.hebbian_mlps is None and args.sdm is None:
        parser.error("give --hebbian-mlps PATH, --sdm PATH or both")
    src = None
    if args.hebbian_mlps is not None:
        src = args.hebbian_mlps.resolve() / "src"
        if not (src / "hebbian" / "__init__.py").is_file():
            parser.error(f"{src}/hebbian is not a package: give the root of a hebbian-mlps checkout")
        sys.path.insert(0, str(src))
        import hebbian  # noqa: F401
    if args.sdm is not None:
        if not (args.sdm.resolve() / "SDM_Circ_Inter_Funcs.py").is_file():
            parser.error(f"{args.sdm}/SDM_Circ_Inter_Funcs.py not found: give the root of an "
                         "attention-approximates-sdm checkout")
        sys.path.insert(0, str(args.sdm.resolve()))

    steps = args.steps or (200 if args.quick else 1000)
    search_epochs = args.search_epochs or (200 if args.quick else 2000)
    search_rounds = args.search_rounds or 1  # theirs starts at m = 32768: minutes per round
    rounds, calls = (3, 1) if args.quick else (5, 3)
    tf_steps = 20 if args.quick else 100

    start = time.perf_counter()
    info = machine_info("cpu", None, load_average=True)
    print("# ours / the authors' code (HazyResearch/hebbian-mlps, TrentBrick/attention-approximates-"
          "sdm), timed interleaved in one process (issue 30)")
    for key in ("cpu", "cpu_cores", "torch", "python", "os", "load_average"):
        print(f"#   {key}: {info[key]}")
    if src is not None:
        print(f"#   their code: {src}, commit {_their_commit(args.hebbian_mlps)}")
    if args.sdm is not None:
        print(f"#   their SDM code: {args.sdm.resolve()}, commit "
              f"{_their_commit(args.sdm, SDM_COMMIT)}")
    print(f"#   thread rule (ASSOCMEM_LOAD_CAP): {'on' if load_cap_enabled() else 'off'}")
    if src is not None:
        print(f"#   GD: {steps} full-batch Adam steps, cutoff off; search: {search_epochs} epochs "
              f"per probe on both sides, {search_rounds} round(s)")
    print("# ratio = their time / our time, median over rounds [min-max]; absolute times are this"
          " machine's only\n")

    table: dict[str, dict[int, str]] = {}
    for threads in args.threads:
        torch.set_num_threads(threads)
        print(f"## {threads} thread{'s' if threads > 1 else ''}")
        builders = []
        if args.hebbian_mlps is not None:
            builders.append((("GD MLP",), lambda: gd_pairs(steps, rounds)))
            if not args.no_search:
                builders.append((("GD capacity search",), lambda: [
                    search_pair(search_epochs, search_rounds, not args.their_factsets)]))
            builders.append((("whitened + accuracy", "data-dependent + accuracy"),
                             lambda: hebbian_pairs(rounds, calls)))
            builders.append((("SSFR Transformer training",),
                             lambda: [transformer_pair(tf_steps, rounds)]))
        if args.sdm is not None:
            builders.append((("exact intersection table", "cap intersections", "beta fit"),
                             lambda: sdm_pairs(rounds, calls, 10_000)))
        for names, build in builders:
            if args.only and not any(s in n for s in args.only for n in names):
                continue  # nothing of this group asked for: do not build (or train) it
            for pair in build():
                if args.only and not any(s in pair.name for s in args.only):
                    continue
                res = run_pair(pair)
                load = (f" | load {res['loadavg_start']:.2f}->{res['loadavg_end']:.2f}, others "
                        f"{100 * res['others_share']:.0f} % CPU" if res["others_share"] is not None
                        else "")
                print(f"   {pair.name:<42s} ours {_fmt_time(res['ours']):>10s}  theirs "
                      f"{_fmt_time(res['theirs']):>10s}  ratio {_fmt_ratio(res['ratio'])}{load}")
                table.setdefault(pair.name, {})[threads] = _fmt_ratio(res["ratio"])
                for k, (t, *r) in res["extra"].items():
                    print(f"   {'':<42s} {k}: {_fmt_time(t)} (ratio {_fmt_ratio(r)})")
                    table.setdefault(f"{pair.name} ({k})", {})[threads] = _fmt_ratio(r)
                if hasattr(pair, "found"):
                    (m_o, p_o, _), (m_t, p_t, w_t) = pair.found["ours"], pair.found["theirs"]
                    print(f"   {'':<42s} m found: ours {m_o} ({p_o} probes), theirs {m_t} "
                          f"({p_t} probes, {w_t} distinct widths)")
                for note in pair.notes:
                    print(f"   {'':<42s} {note}")
        print()
    torch.set_num_threads(1)

    print("## table (ratio = their time / our time, median [min-max] over rounds)\n")
    heads = [f"{t} thread{'s' if t > 1 else ''}" for t in args.threads]
    print("| path | " + " | ".join(heads) + " |")
    print("| --- | " + " | ".join("---" for _ in heads) + " |")
    for name, cells in table.items():
        print(f"| {name} | " + " | ".join(cells.get(t, "-") for t in args.threads) + " |")
    total = time.perf_counter() - start
    print(f"\n# total {total:.0f} s")
    if args.record:
        import json
        import subprocess

        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                cwd=Path(__file__).resolve().parent).stdout.strip()
        out = Path(__file__).resolve().parent / "authors_same_run.json"
        when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        rows = {name: {"path": name, "date": when, "ratios": {str(t): cells[t] for t in args.threads if t in cells}}
                for name, cells in table.items()}
        if out.exists():  # a run of some pairs (--only, --no-search) replaces those rows, keeps the others
            for row in json.loads(out.read_text())["rows"]:
                rows.setdefault(row["path"], row)
        out.write_text(json.dumps({
            "written_by": "benchmarks/bench_authors.py --record",
            "date": when,
            "machine": f"{info['cpu']}, {info['cpu_cores']} cores, torch {info['torch']}",
            "load_average_at_start": info["load_average"],
            "our_commit": commit,
            "their_commit": None if src is None else _their_commit(args.hebbian_mlps),
            "their_sdm_commit": None if args.sdm is None else _their_commit(args.sdm, SDM_COMMIT),
            "settings": {"gd_steps": steps, "search_epochs": search_epochs, "search_rounds": search_rounds,
                         "transformer_steps": tf_steps, "transformer": TF_SETTINGS,
                         "quick": bool(args.quick)},
            "total_s": round(total),
            "rows": list(rows.values()),
        }, indent=1) + "\n")
        print(f"# recorded in {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
