"""Command line: ``python -m assocmem sweep NAME --preset P --device D --executor E``.

Examples
--------
List the library's sweeps and the sizes of their presets (read from a static index, so it answers
at once), or one sweep with its presets' configs (this imports the sweeps)::

    python -m assocmem sweep --list
    python -m assocmem sweep demo --list

Run (or resume) a sweep; results go to ``results/<NAME>/<P>.csv`` with ``<P>.json``::

    python -m assocmem sweep demo --preset quick
    python -m assocmem sweep demo --preset cpu --executor process --workers 4
    python -m assocmem sweep demo --preset paper --device cuda --executor ray --address auto

Override fields of a preset's config; the run is stored under its own name (``--label``, default
``<P>_set_<hash>``), never under the preset's::

    python -m assocmem sweep demo --preset quick --set trials=500 --set d_ks=16,32

Exit status: 0 on success, 2 for a usage error (unknown sweep, preset or option), 1 when the
sweep fails, the stored results are inconsistent or the results folder cannot be used (a path
through a file, no permission, a full disk: one line on stderr says which path and why), 130 when
interrupted.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import os
import sys

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m assocmem", description="assocmem command line")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sweep = sub.add_parser(
        "sweep",
        help="run a registered sweep (or list them)",
        description="Run a registered sweep under a preset, resuming what is already stored.",
    )
    sweep.add_argument("name", nargs="?", metavar="NAME", help="sweep to run (see --list)")
    sweep.add_argument("--list", action="store_true",
                       help="list the sweeps and their presets (with NAME: that sweep and its presets' configs)")
    sweep.add_argument("--preset", default="quick", help="preset name (default: quick)")
    sweep.add_argument("--device", default="auto", help="auto, cpu, cuda, cuda:N or mps (default: auto)")
    sweep.add_argument("--executor", default="serial", choices=("serial", "process", "ray"),
                       help="where the points run (default: serial)")
    sweep.add_argument("--address", default=None, help="Ray cluster address (default: start a local instance)")
    sweep.add_argument("--workers", type=int, default=None,
                       help="process pool size or local Ray CPUs (default: all cores)")
    sweep.add_argument("--results-dir", default=None,
                       help="folder of the results (default: $ASSOCMEM_RESULTS_DIR, else results/ "
                            "at the repository root)")
    sweep.add_argument("--force", action="store_true", help="discard stored results for this preset and start over")
    sweep.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", dest="overrides",
                       help="override one field of the preset's config (repeatable), e.g. --set trials=500 "
                            "--set d_ks=16,32; the run is stored under --label")
    sweep.add_argument("--label", default=None,
                       help="file name of a run with --set (default: PRESET_set_<hash of the config>)")
    # usage errors of the sweep command are reported with its own usage line, not the top level's
    sweep.set_defaults(command_parser=sweep)
    return parser


def _list(name: str | None = None) -> int:
    """Print the sweeps and their presets' sizes. Without ``name`` from the static index
    (:mod:`assocmem._sweep_index`, which imports nothing, so the answer is immediate); with
    ``name`` from the registry, adding each preset's config (this imports the sweeps)."""
    if name is None:
        from assocmem._sweep_index import SWEEPS

        for sweep_name, entry in SWEEPS.items():
            print(f"{sweep_name}: {entry['description']}" if entry["description"] else sweep_name)
            for label, count in entry["presets"].items():
                print(f"    {label:<8} {count} points")
        return 0
    from assocmem.sweeps import UnknownNameError, config_to_json, get_sweep

    try:
        sw = get_sweep(name)
    except UnknownNameError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{sw.name}: {sw.description}" if sw.description else sw.name)
    for label, cfg in sw.presets.items():
        print(f"    {label:<8} {len(sw.grid(cfg))} points")
        fields = ", ".join(f"{key}={json.dumps(value)}" for key, value in config_to_json(cfg).items())
        print(f"             {fields}")
    return 0


def _sweep(args, parser: argparse.ArgumentParser) -> int:
    if args.list:
        return _list(args.name)
    from assocmem.sweeps import ResultsError, SweepError, UnknownNameError, get_sweep, run_sweep
    from assocmem.sweeps._files import describe_os_error

    # This process is the sweep's own: the fast paths may cap their threads at the cores that
    # other processes leave free (assocmem.benchmarking.load_capped_threads; off in a library call).
    os.environ.setdefault("ASSOCMEM_LOAD_CAP", "1")
    if args.name is None:
        parser.error("give a sweep NAME or --list")
    if args.workers is not None and args.workers < 1:
        parser.error("--workers must be at least 1")
    if args.address is not None and args.executor != "ray":
        parser.error("--address needs --executor ray")
    try:
        base = get_sweep(args.name).config(args.preset)
    except UnknownNameError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    config, label = None, args.preset
    if args.label is not None and not args.overrides:
        parser.error("--label names a run with --set; without --set the preset names the files")
    if args.label is not None:
        from assocmem.sweeps.store import _FILE_NAME

        if not _FILE_NAME.match(args.label):  # checked here, so that the message names --label
            parser.error(f"--label must be a file name of letters, digits, '_', '.' or '-' (not starting "
                         f"with '.' or '-'), got {args.label!r}")
    if args.overrides:
        from assocmem.sweeps.config import config_to_json, override

        pairs = {}
        for item in args.overrides:
            key, sep, value = item.partition("=")
            if not sep or not key.strip():
                parser.error(f"--set takes KEY=VALUE, got {item!r}")
            pairs[key.strip()] = value
        try:
            config = override(base, pairs)
            get_sweep(args.name).grid(config)  # a grid that cannot be built fails here, not at a point
        except (TypeError, ValueError) as exc:
            parser.error(f"--set: {exc}")
        digest = hashlib.sha256(json.dumps(config_to_json(config), sort_keys=True).encode()).hexdigest()[:8]
        label = args.label or f"{args.preset}_set_{digest}"
    logging.basicConfig(level=logging.INFO, format="%(levelname)s: %(message)s")
    try:
        run = run_sweep(
            args.name,
            label,
            config=config,
            device=args.device,
            executor=args.executor,
            workers=args.workers,
            address=args.address,
            results_dir=args.results_dir,
            force=args.force,
        )
    except (ResultsError, SweepError, RuntimeError, ValueError, ImportError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:  # the results folder: unreadable, unwritable, a full disk, ...
        print(f"error: cannot read or write the results: {describe_os_error(exc)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted; finished points are stored, rerun the same command to resume", file=sys.stderr)
        return 130
    print(_summary(args.name, label, run))
    return 0


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def _summary(name: str, preset: str, run) -> str:
    """One line on what this run did, with times that say which runs they cover.

    The provenance sums wall time over every session that has worked on the results. A rerun
    that finds everything stored computes nothing and (for finished results) records no session,
    so its line must not suggest that the stored total was spent now.
    """
    sessions = list(run.provenance.get("sessions", []))
    worked = [s for s in sessions if s.get("points_computed", 0) > 0]
    total = sum(float(s.get("wall_time_s", 0.0)) for s in worked)
    where = f"{_plural(len(run.frame), 'row')} in {run.path}"
    if run.computed == 0:
        earlier = (f"computed earlier in {_plural(len(worked), 'session')}, {total:.1f} s of wall time"
                   if worked else "no session recorded computing them")
        return (f"{name}/{preset}: nothing to compute, all {_plural(run.skipped, 'point')} already "
                f"stored; {where} ({earlier})")
    this = float(sessions[-1].get("wall_time_s", 0.0)) if sessions else 0.0
    line = (f"{name}/{preset}: {_plural(run.computed, 'point')} computed, {run.skipped} already stored; "
            f"{where} (this run: {this:.1f} s of wall time")
    if len(worked) > 1:
        line += f"; all {len(worked)} sessions that computed points: {total:.1f} s"
    return line + ")"


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m assocmem``; returns the exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command == "sweep":
        return _sweep(args, args.command_parser)
    parser.print_help(sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
