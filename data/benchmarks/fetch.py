"""Check or fetch the files of the bundled benchmarks in one go.

``python -m data check [NAME ...] [--verify] [--data-dir DIR]`` says, per benchmark, how many
of its files are present, missing or damaged, without touching the network; it exits 1 when
any is missing or damaged. ``python -m data fetch [NAME ...]`` downloads every missing file
(one progress bar, checksums checked) into the per-user cache, or says which could not be
fetched and why. No NAME means every benchmark.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from data.benchmarks import benchmark_info, list_benchmarks
from data.benchmarks._sources import remote_file
from data.benchmarks.download import FileCheck, check_files, resolve_files
from data.schema import DataError


@dataclass(frozen=True)
class BenchmarkFiles:
    """The files of one benchmark on this machine.

    Attributes
    ----------
    name : str
        The benchmark.
    n_files : int
        Files it reads.
    check : FileCheck
        Which are found, missing or damaged.
    """

    name: str
    n_files: int
    check: FileCheck


def check_benchmarks(
    names: Sequence[str] = (), data_dir=None, *, verify: bool = False
) -> list[BenchmarkFiles]:
    """Where the files of each benchmark stand, without downloading.

    Parameters
    ----------
    names : sequence of str
        Benchmarks to check; all when empty.
    data_dir : path, optional
        As for :func:`data.load_benchmark`.
    verify : bool
        Compare SHA-256 checksums too (sizes are always compared).

    Returns
    -------
    list of BenchmarkFiles

    Raises
    ------
    DataError
        An unknown benchmark name.
    """
    infos = [benchmark_info(n) for n in names] if names else list_benchmarks()
    out = []
    for info in infos:
        remotes = [remote_file(rel) for rel in info.files]
        out.append(
            BenchmarkFiles(info.name, len(remotes), check_files(remotes, data_dir, verify=verify))
        )
    return out


def _report(rows: list[BenchmarkFiles]) -> str:
    lines = [f"{'benchmark':<22}{'files':>7}{'present':>9}{'missing':>9}{'damaged':>9}"]
    for r in rows:
        c = r.check
        lines.append(
            f"{r.name:<22}{r.n_files:>7}{len(c.found):>9}{len(c.missing):>9}{len(c.damaged):>9}"
        )
        for _remote, path, why in c.damaged[:5]:
            lines.append(f"    damaged: {path} ({why}); delete it and fetch again")
    bad = [r.name for r in rows if not r.check.ok]
    if bad:
        lines.append(
            f"{len(bad)} benchmark(s) incomplete. Fetch their files with "
            f"`python -m data fetch {' '.join(bad)}` (needs network)."
        )
    else:
        lines.append("Every file is present.")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """The ``python -m data`` command line; returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m data", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for cmd, help_line in (
        ("check", "say which benchmark files are present, missing or damaged (offline)"),
        ("fetch", "download every missing benchmark file into the per-user cache"),
    ):
        p = sub.add_parser(cmd, help=help_line)
        p.add_argument("names", nargs="*", metavar="NAME", help="benchmarks (default: all)")
        p.add_argument("--data-dir", default=None, help="search this folder only")
        if cmd == "check":
            p.add_argument("--verify", action="store_true", help="compare SHA-256 checksums")
    args = parser.parse_args(argv)
    try:
        rows = check_benchmarks(args.names, args.data_dir, verify=getattr(args, "verify", False))
        if args.command == "fetch":
            missing = [m for r in rows for m in r.check.missing]
            if missing:
                what = f"benchmark(s) {', '.join(r.name for r in rows if r.check.missing)}"
                names = [r.name for r in rows if r.check.missing]
                resolve_files(missing, args.data_dir, what=what, names=names)
            rows = check_benchmarks(args.names, args.data_dir)
    except DataError as err:
        sys.stderr.write(f"{err}\n")
        return 1
    sys.stdout.write(_report(rows) + "\n")
    return 0 if all(r.check.ok for r in rows) else 1
