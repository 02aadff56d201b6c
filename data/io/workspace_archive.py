"""A workspace file read within bounds: its zip archive, its members and its JSON.

A workspace file comes from someone else as often as from the user, so nothing in it is
read before it is checked: the archive's own record of its size and member count before the
central directory is parsed; each member's flags, compression method, declared size and
inflation before it is decompressed, and then read through a bounded reader (never
``ZipFile.read`` of an unchecked member); JSON for its nesting depth and its integers'
digits. Every refusal is a :class:`~data.schema.DataError` that names the file, the member,
what is wrong, the limit (and its name in :mod:`data.limits`) and what to do.
"""

from __future__ import annotations

import io
import json
import math
import zipfile
from dataclasses import dataclass, field

from data.limits import (
    MAX_INFLATION,
    MAX_INT_DIGITS,
    MAX_JSON_DEPTH,
    MAX_MANIFEST_BYTES,
    MAX_REPORT_BYTES,
    MAX_WORKSPACE_BYTES,
    MAX_WORKSPACE_DATASETS,
    MAX_WORKSPACE_MEMBERS,
    UPLOAD_LIMITS,
    Limits,
)
from data.schema import DataError

#: Members below this size (decompressed) are never refused for inflating much.
SMALL_MEMBER = 1 << 20
#: Bytes of the central directory per member allowed (46 fixed bytes, a name, extra fields).
_DIRECTORY_ENTRY = 1024
#: What the user can do about a file JudgeScope did not write.
RESAVE = "save the workspace again from JudgeScope's sidebar (Workspace, Save workspace)"


def _upload_bytes() -> int:
    from data.validate import MAX_UPLOAD_BYTES

    return MAX_UPLOAD_BYTES


@dataclass(frozen=True)
class WorkspaceLimits:
    """Bounds of a workspace file (defaults from :mod:`data.limits`).

    Attributes
    ----------
    tables : data.limits.Limits
        Every table member: rows, columns, cells and decompressed (and expanded) bytes, the
        limits of an upload.
    max_file_bytes, max_member_bytes : int
        The file, and any one member decompressed: the upload byte limit
        (``data.validate.MAX_UPLOAD_BYTES``).
    max_total_bytes : int
        All members together, decompressed; and the tables' values together, expanded.
    max_members, max_datasets : int
        Members of the archive, datasets of the manifest.
    max_manifest_bytes, max_report_bytes : int
        ``workspace.json`` and ``report.json``, decompressed.
    max_inflation : int
        Decompressed over compressed bytes of a member over 1 MiB.
    max_json_depth, max_int_digits : int
        Nesting of the JSON members, digits of their integers.
    """

    tables: Limits = UPLOAD_LIMITS
    max_file_bytes: int = field(default_factory=_upload_bytes)
    max_member_bytes: int = field(default_factory=_upload_bytes)
    max_total_bytes: int = MAX_WORKSPACE_BYTES
    max_members: int = MAX_WORKSPACE_MEMBERS
    max_datasets: int = MAX_WORKSPACE_DATASETS
    max_manifest_bytes: int = MAX_MANIFEST_BYTES
    max_report_bytes: int = MAX_REPORT_BYTES
    max_inflation: int = MAX_INFLATION
    max_json_depth: int = MAX_JSON_DEPTH
    max_int_digits: int = MAX_INT_DIGITS


def _mb(n: int) -> str:
    return f"{n / 1e6:,.1f} MB ({n:,} bytes)"


class Archive:
    """The members of a workspace's zip archive, each read at most once, within bounds.

    Parameters
    ----------
    content, file_name
        The file and its name (for messages), as :func:`data.io.workspace.read_workspace`
        takes them.
    limits : WorkspaceLimits
        The bounds.

    Raises
    ------
    DataError
        The file is too large, not a zip archive, damaged (its end record and directory
        disagree, the directory is not where the end record says), holds more members than
        ``limits.max_members`` or two members of one name.
    """

    def __init__(self, content: bytes, file_name: str, limits: WorkspaceLimits):
        self.file_name, self.limits, self.total = file_name, limits, 0
        if len(content) > limits.max_file_bytes:
            raise self.error(
                f"the file is {_mb(len(content))}, more than the limit of "
                f"{_mb(limits.max_file_bytes)} (MAX_UPLOAD_BYTES in data.validate); save the "
                "large datasets in separate workspace files"
            )
        buffer = io.BytesIO(content)
        try:
            end = zipfile._EndRecData(buffer)  # what ZipFile itself reads first
        except Exception:  # a seek outside the file, a ZIP64 record that spans disks
            end = None
        if end is None:
            raise DataError(
                f"{file_name}: not a JudgeScope workspace (not a zip archive); save one with "
                "the sidebar's Workspace section"
            )
        n_members, directory = int(end[4]), int(end[5])
        if n_members > limits.max_members or directory > limits.max_members * _DIRECTORY_ENTRY:
            raise self.error(
                f"the archive says it holds {n_members:,} members in a directory of "
                f"{directory:,} bytes, more than the limit of {limits.max_members:,} members "
                f"(MAX_WORKSPACE_MEMBERS in data.limits); {RESAVE}"
            )
        try:
            self.zf = zipfile.ZipFile(buffer)
            infos = self.zf.infolist()
        except Exception as err:  # BadZipFile, a negative seek (ValueError), EOFError, ...
            raise self.error(
                f"the zip archive is damaged ({type(err).__name__}: {str(err)[:200]}); {RESAVE}"
            ) from None
        if len(infos) != n_members:
            raise self.error(
                f"the zip archive is damaged (its end record counts {n_members:,} members, "
                f"its directory holds {len(infos):,}); {RESAVE}"
            )
        self.members: dict[str, zipfile.ZipInfo] = {}
        for info in infos:
            if info.filename in self.members:
                raise self.error(
                    f"two members are named {info.filename!r}; a workspace holds each member "
                    f"once, so this archive was not written by JudgeScope; {RESAVE}"
                )
            self.members[info.filename] = info

    def error(self, text: str, member: str | None = None) -> DataError:
        where = f"{self.file_name}, member {member}" if member else self.file_name
        return DataError(f"{where}: {text}")

    def __contains__(self, name: str) -> bool:
        return name in self.members

    def read(
        self, name: str, max_bytes: int, what: str, limit_name: str, advice: str = RESAVE
    ) -> bytes:
        """The member ``name`` decompressed, after checking it against the bounds.

        ``max_bytes`` is its own limit (``limit_name`` says where it is set), ``what`` says
        what the member is and ``advice`` what to do when it is too large, for the message.

        Raises
        ------
        KeyError
            No such member.
        DataError
            Encrypted, compressed with a method JudgeScope does not write, declared larger
            than ``max_bytes`` or than what is left of ``limits.max_total_bytes``, inflating
            more than ``limits.max_inflation`` times, damaged (CRC, truncated, its local
            header names another file) or not the size its directory says.
        """
        info = self.members[name]
        limits = self.limits
        if info.flag_bits & 0x1:
            raise self.error(
                f"{what} is encrypted; JudgeScope reads workspaces without a password, so {RESAVE}",
                name,
            )
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise self.error(
                f"{what} is compressed with method {info.compress_type}; JudgeScope reads "
                f"Deflate (8) and stored (0) members only; {RESAVE}",
                name,
            )
        size = int(info.file_size)
        if size > max_bytes:
            raise self.error(
                f"{what} declares {size:,} bytes decompressed ({size / 1e6:,.1f} MB), more "
                f"than the limit of {max_bytes:,} bytes ({limit_name}); {advice}",
                name,
            )
        if self.total + size > limits.max_total_bytes:
            raise self.error(
                f"with {what} the members decompress to {_mb(self.total + size)}, more than "
                f"the limit of {_mb(limits.max_total_bytes)} for one workspace "
                "(MAX_WORKSPACE_BYTES in data.limits); save the large datasets in separate "
                "workspace files",
                name,
            )
        if size > SMALL_MEMBER and size > limits.max_inflation * max(info.compress_size, 1):
            raise self.error(
                f"{what} inflates {size / max(info.compress_size, 1):,.0f} times (from "
                f"{info.compress_size:,} to {size:,} bytes), more than the limit of "
                f"{limits.max_inflation} times for a member over 1 MiB (MAX_INFLATION in "
                f"data.limits): a compression bomb, not a workspace JudgeScope wrote; {RESAVE}",
                name,
            )
        try:
            with self.zf.open(info) as member:
                data = member.read(size + 1)  # stops at the declared size (and checks CRC)
                extra = member.read(1)
        except Exception as err:  # Bad CRC-32, a truncated stream, a local header that lies
            raise self.error(
                f"{what} is damaged ({type(err).__name__}: {str(err)[:200]}); {RESAVE}", name
            ) from None
        if len(data) != size or extra:
            raise self.error(
                f"{what} holds {len(data):,} bytes, not the {size:,} its directory declares; "
                f"{RESAVE}",
                name,
            )
        self.total += size
        return data

    def close(self) -> None:
        self.zf.close()


# ---------------------------------------------------------------------------------------
# JSON


class _Refused(ValueError):
    """A JSON value refused while parsing (the message says why)."""


def _no_repeats(pairs):
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set = set()
        twice = next(k for k, _ in pairs if k in seen or seen.add(k))
        raise _Refused(f"an object names the key {twice[:60]!r} twice")
    return obj


def _depth(obj, limit: int) -> bool:
    """Whether ``obj`` nests deeper than ``limit`` (without recursion)."""
    stack = [(obj, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict | list):
            if depth > limit:
                return True
            items = value.values() if isinstance(value, dict) else value
            stack.extend((v, depth + 1) for v in items if isinstance(v, dict | list))
    return False


def parse_json(raw: bytes, source: str, limits: WorkspaceLimits):
    """A JSON member of a workspace parsed strictly and within bounds.

    Parameters
    ----------
    raw : bytes
        The member, UTF-8 without a byte order mark.
    source : str
        The file and member, for messages.
    limits : WorkspaceLimits
        Nesting depth and integer digits.

    Returns
    -------
    object
        The value; numbers are finite, integers have at most ``limits.max_int_digits``
        digits, no object repeats a key, nothing nests deeper than ``limits.max_json_depth``.

    Raises
    ------
    DataError
        Not UTF-8, not JSON (line and column), over a bound.
    """
    digits, depth = limits.max_int_digits, limits.max_json_depth

    def integer(text: str) -> int:
        if len(text.lstrip("-")) > digits:
            raise _Refused(
                f"an integer of {len(text.lstrip('-')):,} digits ({text[:20]}…), more than "
                f"the limit of {digits} digits (MAX_INT_DIGITS in data.limits)"
            )
        return int(text)

    def number(text: str) -> float:
        value = float(text)
        if not math.isfinite(value):
            raise _Refused(f"the number {text[:30]} is not finite")
        return value

    def constant(text: str):
        raise _Refused(f"{text} is not JSON (a number must be finite)")

    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise DataError(f"{source}: not UTF-8 text (byte {err.start:,}); {RESAVE}") from None
    try:
        value = json.loads(
            text,
            parse_int=integer,
            parse_float=number,
            parse_constant=constant,
            object_pairs_hook=_no_repeats,
        )
    except _Refused as err:
        raise DataError(f"{source}: {err}; {RESAVE}") from None
    except json.JSONDecodeError as err:
        raise DataError(
            f"{source}, line {err.lineno}, column {err.colno}: not valid JSON ({err.msg}); {RESAVE}"
        ) from None
    except RecursionError:
        value = None
        nested = True
    else:
        nested = _depth(value, depth)
    if nested:
        raise DataError(
            f"{source}: the JSON nests more than {depth} levels deep (MAX_JSON_DEPTH in "
            f"data.limits); {RESAVE}"
        )
    return value
