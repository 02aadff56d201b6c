"""Find benchmark files in the data folders, or fetch them from their public source.

Each benchmark file is named by its path relative to a data folder
(``hanna/data/hanna.jsonl``). :func:`resolve_files` looks for every file in the folders of
:func:`data.paths.data_dirs` in order; a file found nowhere is downloaded from its pinned public
source (a raw GitHub URL at a fixed commit) into the per-user cache folder
(``data.paths.user_cache_dir() / "data"``), with a progress bar and a SHA-256 check. When the
network is not there, or ``JUDGESCOPE_OFFLINE=1`` is set, the :class:`~data.schema.DataError`
names the missing file, the folders searched, the URL and where to put the file.

``python -m data.benchmarks.download checksums ROOT`` prints the checksum manifest of the files
under ROOT (how ``data/benchmarks/checksums.json`` was made).
"""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import sys
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from data.paths import data_dirs, user_cache_dir
from data.schema import DataError

__all__ = [
    "RemoteFile",
    "raw_github_url",
    "sha256_file",
    "download_file",
    "resolve_files",
    "check_files",
    "FileCheck",
    "downloads_enabled",
]

_CHUNK = 1 << 16
_TIMEOUT_S = 30.0
_USER_AGENT = "JudgeScope-data-download"


@dataclass(frozen=True)
class RemoteFile:
    """One benchmark file: where it lives under a data folder and where to fetch it.

    Attributes
    ----------
    relpath : str
        Path relative to a data folder, with forward slashes (``"hanna/data/hanna.jsonl"``).
    url : str
        Public download address (raw GitHub URL at a pinned commit).
    sha256 : str
        Expected SHA-256 hex digest of the file.
    n_bytes : int
        Expected size in bytes (for the progress bar and a quick check).
    """

    relpath: str
    url: str
    sha256: str
    n_bytes: int


def raw_github_url(repo: str, commit: str, path: str) -> str:
    """``https://raw.githubusercontent.com/<repo>/<commit>/<path>``, path percent-encoded.

    Parameters
    ----------
    repo : str
        ``"owner/name"`` on GitHub.
    commit : str
        The commit (or any ref) to pin.
    path : str
        Path inside the repository; percent-encoded with ``/`` kept.

    Returns
    -------
    str
        The raw-file URL.
    """
    return f"https://raw.githubusercontent.com/{repo}/{commit}/{urllib.parse.quote(path, safe='/')}"


def sha256_file(path: str | os.PathLike) -> str:
    """SHA-256 hex digest of a file, read in chunks.

    Parameters
    ----------
    path : path
        The file.

    Returns
    -------
    str
        Lower-case hex digest (64 characters).
    """
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(_CHUNK), b""):
            h.update(block)
    return h.hexdigest()


def downloads_enabled() -> bool:
    """False when ``JUDGESCOPE_OFFLINE`` is set to a true value (1, true, yes).

    Returns
    -------
    bool
        False when ``JUDGESCOPE_OFFLINE``, stripped and lower-cased, is ``"1"``, ``"true"``
        or ``"yes"``; True otherwise (also when it is unset).
    """
    return os.environ.get("JUDGESCOPE_OFFLINE", "").strip().lower() not in {"1", "true", "yes"}


def download_file(remote: RemoteFile, dest: str | os.PathLike, *, progress=None) -> Path:
    """Download ``remote.url`` to ``dest`` and check its SHA-256.

    The bytes go to a temporary file beside ``dest`` that is renamed only after the checksum
    matches, so an interrupted or corrupt download never leaves a file behind.

    Parameters
    ----------
    remote : RemoteFile
        What to fetch and the checksum to expect.
    dest : path
        Final location; parent folders are created.
    progress : tqdm, optional
        A byte-counting progress bar to advance (one is not created here so that a set of
        files shares one bar).

    Returns
    -------
    Path
        ``dest``.

    Raises
    ------
    OSError
        Network or disk problems (``urllib.error.URLError`` is an ``OSError``).
    DataError
        The downloaded bytes do not have the expected SHA-256.
    """
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    request = urllib.request.Request(remote.url, headers={"User-Agent": _USER_AGENT})
    h = hashlib.sha256()
    fd, tmp_name = tempfile.mkstemp(prefix=dest.name + ".", suffix=".part", dir=dest.parent)
    tmp = Path(tmp_name)
    try:
        with (
            os.fdopen(fd, "wb") as out,
            urllib.request.urlopen(request, timeout=_TIMEOUT_S) as resp,
        ):
            for block in iter(lambda: resp.read(_CHUNK), b""):
                out.write(block)
                h.update(block)
                if progress is not None:
                    progress.update(len(block))
        got = h.hexdigest()
        if got != remote.sha256:
            raise DataError(
                f"checksum mismatch for '{remote.relpath}' downloaded from {remote.url}: "
                f"expected SHA-256 {remote.sha256}, got {got}. The file was not kept; the "
                f"source may have changed. Put a copy of the original file at "
                f"{dest} yourself, or report the problem."
            )
        os.replace(tmp, dest)
    finally:
        if tmp.exists():
            tmp.unlink()
    return dest


def _find_local(relpath: str, folders: Sequence[Path]) -> Path | None:
    for folder in folders:
        p = folder / relpath
        if p.is_file():
            return p
    return None


def _folder_of(relpath: str) -> str:
    """The first two folders of a relpath (``"summeval_llm_eval/comp_res/"``)."""
    parts = relpath.split("/")[:-1][:2]
    return "/".join(parts) + "/" if parts else relpath


def _missing_problems(missing: Sequence[RemoteFile]) -> list[str]:
    """One problem per folder of missing files, with the count and the first few names."""
    groups: dict[str, list[str]] = {}
    for m in missing:
        folder = _folder_of(m.relpath)
        groups.setdefault(folder, []).append(
            m.relpath[len(folder) :] if folder != m.relpath else m.relpath
        )
    out = []
    for folder, names in groups.items():
        shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
        out.append(f"'{folder}': {len(names)} file(s) missing ({shown})")
    return out


def _missing_error(
    what: str, missing: Sequence[RemoteFile], folders: Sequence[Path], reason: str, names=()
) -> DataError:
    """The DataError for files found nowhere: how many, where searched, how to get them.

    Its problems are one per folder of missing files, so a benchmark with 534 missing
    annotation files in four folders is four problems that together count 534 files.
    """
    n_bytes = sum(m.n_bytes for m in missing)
    target = " ".join(names) if names else ""
    problems = _missing_problems(missing)
    first = missing[0]
    lines = [
        f"{what}: {len(missing)} file(s) ({n_bytes / 1e6:.1f} MB) are in no data folder searched:",
        *(f"  - {folder}" for folder in folders),
        f"and they could not be downloaded ({reason}).",
        f"Fetch them all with `{f'python -m data fetch {target}'.strip()}` when online (or check what is there with `python -m data check`), put them "
        f"under {folders[0]} yourself (e.g. '{first.relpath}' from {first.url}), or set the "
        "environment variable JUDGESCOPE_DATA to a folder that holds them. Downloads go to "
        f"{user_cache_dir() / 'data'}.",
        *problems,
    ]
    return DataError("\n".join(lines), problems=problems)


@dataclass(frozen=True)
class FileCheck:
    """Where the files of a set stand on this machine.

    Attributes
    ----------
    found : dict of str to Path
        relpath -> local file with the expected size (the SHA-256 too when checked).
    missing : list of RemoteFile
        Files in no data folder.
    damaged : list of (RemoteFile, Path, str)
        Files present with the wrong size or checksum, with what is wrong.
    """

    found: dict[str, Path]
    missing: list[RemoteFile]
    damaged: list[tuple[RemoteFile, Path, str]]

    @property
    def ok(self) -> bool:
        """True when every file is present and intact."""
        return not self.missing and not self.damaged


def check_files(
    remotes: Iterable[RemoteFile],
    data_dir: str | os.PathLike | None = None,
    *,
    verify: bool = False,
) -> FileCheck:
    """Look for every file in the data folders without downloading anything.

    Parameters
    ----------
    remotes : iterable of RemoteFile
        The files to look for.
    data_dir : path, optional
        As for :func:`resolve_files`.
    verify : bool
        Also compare each file's SHA-256 (slower); the size is always compared.

    Returns
    -------
    FileCheck
    """
    search = _search_folders(data_dir)
    found: dict[str, Path] = {}
    missing: list[RemoteFile] = []
    damaged: list[tuple[RemoteFile, Path, str]] = []
    for remote in remotes:
        local = _find_local(remote.relpath, search)
        if local is None:
            missing.append(remote)
            continue
        size = local.stat().st_size
        if size != remote.n_bytes:
            damaged.append((remote, local, f"{size:,} bytes, expected {remote.n_bytes:,}"))
        elif verify and sha256_file(local) != remote.sha256:
            damaged.append((remote, local, "SHA-256 differs from the manifest"))
        else:
            found[remote.relpath] = local
    return FileCheck(found, missing, damaged)


def _search_folders(data_dir) -> list[Path]:
    folders = data_dirs(data_dir)
    cache = user_cache_dir() / "data"
    # Downloads go to the cache folder; search it even when an explicit data_dir was given,
    # so a file fetched once is found next time.
    return folders if cache in folders else [*folders, cache]


def resolve_files(
    remotes: Iterable[RemoteFile],
    data_dir: str | os.PathLike | None = None,
    *,
    what: str = "this benchmark",
    names: Sequence[str] = (),
) -> dict[str, Path]:
    """Local paths of the given files, downloading the missing ones when possible.

    Parameters
    ----------
    remotes : iterable of RemoteFile
        The files needed.
    data_dir : path, optional
        Passed to :func:`data.paths.data_dirs`; searched instead of ``JUDGESCOPE_DATA``.
    what : str
        Who needs the files, for the error message (``"benchmark 'hanna'"``).
    names : sequence of str
        The benchmarks they belong to, for the ``python -m data fetch NAME`` hint.

    Returns
    -------
    dict
        relpath -> Path of an existing file, in the order given.

    Raises
    ------
    DataError
        A file is found nowhere and could not be downloaded (offline, ``JUDGESCOPE_OFFLINE``
        set, HTTP error) or its download failed the checksum. The message names the file,
        the folders searched and where to put it.
    """
    remotes = list(remotes)
    cache = user_cache_dir() / "data"
    search = _search_folders(data_dir)
    found: dict[str, Path] = {}
    missing: list[RemoteFile] = []
    for remote in remotes:
        local = _find_local(remote.relpath, search)
        if local is None:
            missing.append(remote)
        else:
            found[remote.relpath] = local
    if missing:
        if not downloads_enabled():
            raise _missing_error(
                what, missing, search, "downloads are off: JUDGESCOPE_OFFLINE is set", names
            )
        found.update(_download_all(missing, cache, what, search, names))
    return {r.relpath: found[r.relpath] for r in remotes}


def _download_all(
    missing: Sequence[RemoteFile], cache: Path, what: str, search: Sequence[Path], names=()
) -> dict[str, Path]:
    from tqdm.auto import tqdm

    out: dict[str, Path] = {}
    total = sum(m.n_bytes for m in missing)
    with tqdm(total=total, unit="B", unit_scale=True, desc=f"Downloading {what}") as bar:
        for i, remote in enumerate(missing):
            try:
                out[remote.relpath] = download_file(remote, cache / remote.relpath, progress=bar)
            except DataError:
                raise
            except (OSError, http.client.HTTPException) as exc:
                # OSError covers URLError, HTTPError and timeouts; HTTPException a cut transfer.
                reason = getattr(exc, "reason", None) or exc
                raise _missing_error(
                    what, missing[i:], search, f"{type(exc).__name__}: {reason}", names
                ) from exc
    return out


def checksum_manifest(root: str | os.PathLike, relpaths: Iterable[str]) -> dict[str, list]:
    """``{relpath: [sha256, n_bytes]}`` for files under ``root`` (sorted by relpath).

    Parameters
    ----------
    root : path
        The folder the relpaths are relative to.
    relpaths : iterable of str
        The files to describe.

    Returns
    -------
    dict of str to list
        relpath -> ``[sha256 hex digest, size in bytes]``, keys in sorted order (the format
        of ``data/benchmarks/checksums.json``).
    """
    root = Path(root)
    return {rel: [sha256_file(root / rel), (root / rel).stat().st_size] for rel in sorted(relpaths)}


def _main(argv: Sequence[str]) -> int:
    if len(argv) != 2 or argv[0] != "checksums":
        sys.stderr.write("usage: python -m data.benchmarks.download checksums ROOT\n")
        return 2
    root = Path(argv[1])
    rels = [
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_file() and p.name != "PROVENANCE.md"
    ]
    manifest = checksum_manifest(root, rels)
    # One file per line keeps the committed manifest readable and its diffs small.
    lines = [f"{json.dumps(rel)}: {json.dumps(v)}" for rel, v in manifest.items()]
    sys.stdout.write("{\n" + ",\n".join(lines) + "\n}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))
