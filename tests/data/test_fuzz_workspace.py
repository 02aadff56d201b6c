"""Seeded fuzz test of workspace files (issue 23): every hostile archive opens exactly or is
refused with a ``DataError`` naming the file, in bounded memory and time, and reads nothing
outside the cache.

The archives are built byte by byte (:func:`raw_zip`), so the zip itself can lie: CRC errors,
the encrypted flag, unknown compression methods, a central directory at a wrong offset,
declared sizes that are not the real ones, members whose local name differs, two members of
one name, thousands of members, deflate bombs (a manifest of 4 GiB from 4 MB). The manifest
is damaged value by value (``"active": [1]``, settings ``[1]`` or nested 900 deep, 100,000-deep
JSON, 5,000-digit integers, ``"version": true``, 20,000 datasets on one table, ...) and the
Parquet members too (a dictionary bomb, crafted ``pandas`` metadata, an index written as a
column, nested columns, 6 million rows of nothing, a column chunk in another file). Valid
workspaces with extra columns of every kind the readers make, and random settings, must come
back exactly.

The inputs run in a child process under a memory cap (``RLIMIT_AS``), with an audit hook
that records every file it opens: a crash, a MemoryError at the cap, an inexact reading or a
file opened outside the cache fails the test. ``python tests/data/test_fuzz_workspace.py``
prints the counts; ``--bombs`` measures the peak RSS of each bomb on its own.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import io
import json
import os
import random
import resource
import signal
import struct
import subprocess
import sys
import time
import zipfile
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SEED = 23
N_INPUTS = 300
#: Extra peak RSS (over the child's RSS before it) that any one input may cost, and the
#: address space the child may add once its inputs are made (a bomb fails there, not the
#: machine).
MEMORY_BOUND = 400 * 2**20
ADDRESS_CAP = 2 * 2**30
#: CPU seconds any one input may take (20,000 datasets on one table took 267 s).
CPU_BOUND = 5.0
#: CPU seconds after which the child stops an input (counted as a crash).
CPU_LIMIT = 30.0


# ---------------------------------------------------------------------------------------
# Archives built byte by byte


@dataclasses.dataclass
class Member:
    """One zip member as it is written: ``data`` is the stored payload (compressed or not)."""

    name: bytes
    data: bytes
    crc: int
    size: int  # declared uncompressed size
    method: int = zipfile.ZIP_DEFLATED
    flags: int = 0
    local_name: bytes | None = None

    @classmethod
    def of(cls, name: str, body: bytes, method: int = zipfile.ZIP_DEFLATED) -> Member:
        data = deflate(body) if method == zipfile.ZIP_DEFLATED else body
        return cls(name.encode(), data, zlib.crc32(body), len(body), method)


def deflate(body: bytes) -> bytes:
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    return c.compress(body) + c.flush()


def raw_zip(members: list[Member], *, cd_shift: int = 0, entries: int | None = None) -> bytes:
    """A zip archive of ``members`` exactly as given (``cd_shift`` moves the central
    directory's recorded offset; ``entries`` overrides the recorded member count)."""
    out, cd = bytearray(), bytearray()
    for m in members:
        offset = len(out)
        local = m.local_name if m.local_name is not None else m.name
        out += struct.pack(
            "<IHHHHHIIIHH", 0x04034B50, 20, m.flags, m.method, 0, 0x21, m.crc,
            len(m.data), m.size & 0xFFFFFFFF, len(local), 0,
        )  # fmt: skip
        out += local + m.data
        cd += struct.pack(
            "<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, m.flags, m.method, 0, 0x21, m.crc,
            len(m.data), m.size & 0xFFFFFFFF, len(m.name), 0, 0, 0, 0, 0, offset,
        )  # fmt: skip
        cd += m.name
    n = len(members) if entries is None else entries
    start = len(out)
    out += cd
    out += struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, n, n, len(cd), start + cd_shift, 0)
    return bytes(out)


_BOMBS: dict[tuple[int, int], tuple[bytes, int]] = {}


def zero_bomb(size: int, fill: int = 0x20) -> tuple[bytes, int]:
    """(deflate stream, CRC) of ``size`` bytes of ``fill``, made in O(size / 1000): one MiB
    compressed after a full flush is a block that can be repeated."""
    key = (size, fill)
    if key not in _BOMBS:
        chunk = bytes([fill]) * 2**20
        c = zlib.compressobj(9, zlib.DEFLATED, -15)
        block = c.compress(chunk) + c.flush(zlib.Z_FULL_FLUSH)
        n, rest = divmod(size, len(chunk))
        tail = c.compress(chunk[:rest]) + c.flush()
        crc = 0
        for _ in range(n):
            crc = zlib.crc32(chunk, crc)
        crc = zlib.crc32(chunk[:rest], crc)
        _BOMBS[key] = (block * n + tail, crc)
    return _BOMBS[key]


# ---------------------------------------------------------------------------------------
# The workspaces fuzzed


def base_dataset():
    """A small valid dataset (three tables, so that validation stays cheap)."""
    from data.synthetic.simulate import simulate

    ds = simulate(2, 3, mode="samples", n_samples=2, random_state=0)
    return dataclasses.replace(
        ds, name="mine", human_scores=ds.human_scores.iloc[:0], ratings=ds.ratings.iloc[:0]
    )


def with_extras(ds, rng: random.Random):
    """``ds`` with extra columns of the kinds the readers make (text with gaps, floats,
    integers, booleans, integers past 2**53 with gaps), validated."""
    import numpy as np
    import pandas as pd

    from data.validate import validate_dataset

    comps = ds.comparisons.copy()
    n = len(comps)
    kinds = rng.sample(["text", "float", "int", "bool", "bigint", "unicode"], rng.randint(1, 4))
    for kind in kinds:
        if kind == "text":
            comps["note"] = pd.Series(
                [None if i % 3 == 0 else f"n{i}" for i in range(n)], dtype="str"
            )
        elif kind == "unicode":
            comps["注释 ✓"] = pd.Series(["連貫性 — ok\n二行"] * n, dtype="str")
        elif kind == "float":
            comps["cost"] = np.where(np.arange(n) % 4 == 0, np.nan, np.arange(n) / 7)
        elif kind == "int":
            comps["tokens"] = np.arange(n, dtype=np.int64) * 1_000_003
        elif kind == "bool":
            comps["flagged"] = np.arange(n) % 2 == 0
        else:
            comps["big"] = pd.Series(
                [None if i % 5 == 0 else 2**60 + i for i in range(n)], dtype=object
            )
    return validate_dataset(dataclasses.replace(ds, comparisons=comps))


def random_settings(rng: random.Random) -> dict:
    out = {"app.debias.tau": round(rng.random(), 6), "app.debias.mode": "tau"}
    for k in range(rng.randint(0, 4)):
        value = rng.choice(
            [[1, 2, "x"], {"a": [True, None]}, "ü\u2028\x00ok", -(2**62), 1e-300, [[[]]]]
        )
        out[f"page{k}.setting ✓"] = value
    return out


class Base:
    """A valid workspace and its parts, rebuilt member by member for each damage."""

    def __init__(self):
        from data.io.workspace import BenchmarkRef, load_workspace, save_workspace

        self.ds = base_dataset()
        self.settings = {"app.debias.tau": 0.7, "rank.methods": ["elo", "bt"]}
        blob = save_workspace(
            {"demo": BenchmarkRef("demo"), "mine": self.ds}, "mine", self.settings
        )
        self.expected = load_workspace(blob, "base.zip")
        with zipfile.ZipFile(io.BytesIO(blob)) as zf:
            self.bodies = {name: zf.read(name) for name in zf.namelist()}
        self.manifest = json.loads(self.bodies["workspace.json"])

    def members(self, bodies: dict | None = None) -> list[Member]:
        return [Member.of(n, b) for n, b in (bodies or self.bodies).items()]

    def with_manifest(self, manifest=None, text: bytes | None = None) -> bytes:
        bodies = dict(self.bodies)
        bodies["workspace.json"] = text if text is not None else json.dumps(manifest).encode()
        return raw_zip(self.members(bodies))


def parquet_bytes(table, **kw) -> bytes:
    import pyarrow.parquet as pq

    out = io.BytesIO()
    pq.write_table(table, out, **kw)
    return out.getvalue()


@functools.cache
def dictionary_bomb(rows: int, width: int) -> bytes:
    """A contexts table of ``rows`` rows whose text is one ``width``-character value,
    dictionary-encoded: a few KB that expand to rows x width bytes (no Arrow schema kept,
    so a reader decodes it to plain text)."""
    import numpy as np
    import pyarrow as pa

    zeros = pa.array(np.zeros(rows, np.int32))
    table = pa.table(
        {
            "context_id": pa.DictionaryArray.from_arrays(zeros, pa.array(["c"])),
            "text": pa.DictionaryArray.from_arrays(zeros, pa.array(["x" * width])),
        }
    )
    return parquet_bytes(table, store_schema=False, compression="zstd")


@functools.cache
def empty_rows(rows: int) -> bytes:
    import pyarrow as pa

    nulls = pa.nulls(rows, pa.string())
    return parquet_bytes(pa.table({"context_id": nulls, "text": nulls}), compression="zstd")


@functools.cache
def fixed_width_bomb(rows: int, width: int) -> bytes:
    """A text column of ``width``-byte fixed-size values, all null: a few KB that a reader
    allocates as rows x width bytes."""
    import pyarrow as pa

    table = pa.table(
        {
            "context_id": pa.array([str(i) for i in range(rows)]),
            "text": pa.nulls(rows, pa.binary(width)),
        }
    )
    return parquet_bytes(table, store_schema=False, compression="zstd")


def external_chunk(body: bytes, path: str) -> bytes:
    """``body`` (a Parquet file) with its column chunks said to live in ``path``."""
    import pyarrow.parquet as pq

    meta = pq.ParquetFile(io.BytesIO(body)).metadata
    meta.set_file_path(path)
    sink = io.BytesIO()
    meta.write_metadata_file(sink)
    footer = sink.getvalue()[4:-8]  # drop "PAR1" and (length, "PAR1")
    (old,) = struct.unpack("<I", body[-8:-4])
    return body[: -8 - old] + footer + struct.pack("<I", len(footer)) + b"PAR1"


# ---------------------------------------------------------------------------------------
# Damage: each returns (archive, expectation); expectation is "refuse", "either" (damage
# that may leave the file intact) or ("open", (datasets, settings)) to compare against.


def _entry(manifest) -> dict:
    return next(e for e in manifest["datasets"] if "folder" in e)


def manifest_damage(base: Base, rng: random.Random):
    m = copy.deepcopy(base.manifest)
    e = _entry(m)
    deep = rng.choice([100, 900, 3_000])
    kinds = {
        "active list": lambda: m.update(active=[1]),
        "active object": lambda: m.update(active={"a": 1}),
        "settings list": lambda: m.update(settings=[1]),
        "settings text": lambda: m.update(settings="x"),
        "settings nested": lambda: m.update(settings={"a": "@@deep@@"}),
        "tables number": lambda: e.update(tables=5),
        "tables unknown": lambda: e.update(tables=["contexts", "secrets"]),
        "tables numbers": lambda: e.update(tables=[5]),
        "tables twice": lambda: e.update(tables=e["tables"] + e["tables"][:1]),
        "version true": lambda: m.update(version=True),
        "version text": lambda: m.update(version="1"),
        "version float": lambda: m.update(version=1.0),
        "format": lambda: m.update(format=["judgescope-workspace"]),
        "datasets object": lambda: m.update(datasets={"a": 1}),
        "entry list": lambda: m["datasets"].append([1]),
        "name list": lambda: e.update(name=[1]),
        "name empty": lambda: e.update(name=""),
        "scales text": lambda: e.update(scales="x"),
        "scales triple": lambda: e.update(scales={"quality": [1, 2, 3]}),
        "scales bool": lambda: e.update(scales={"quality": [True, 5]}),
        "references text": lambda: e.update(reference_systems="lead"),
        "description list": lambda: e.update(description=["x"]),
        "folder up": lambda: e.update(folder="../" + e["folder"]),
        "folder slash": lambda: e.update(folder=e["folder"] + "/"),
        "two names": lambda: m["datasets"].append(dict(e)),
        "two folders": lambda: m["datasets"].append({**e, "name": "again"}),
        "many datasets": lambda: m["datasets"].extend(
            {**e, "name": f"n{k}", "folder": f"f{k}"} for k in range(rng.choice([100, 20_000]))
        ),
        "benchmark unknown": lambda: m["datasets"].append({"name": "b", "benchmark": "../../etc"}),
        "benchmark list": lambda: m["datasets"].append({"name": "b", "benchmark": ["demo"]}),
        "settings bomb": lambda: m.update(settings={f"k{k}": "x" * 1000 for k in range(5_000)}),
    }
    what = rng.choice(sorted(kinds))
    kinds[what]()
    text = json.dumps(m).replace('"@@deep@@"', "[" * deep + "]" * deep)
    return what, base.with_manifest(text=text.encode()), "refuse"


def json_damage(base: Base, rng: random.Random):
    text = json.dumps(base.manifest)
    digits = "9" * rng.randint(4_400, 6_000)
    kinds = {
        "100k deep": ("[" * 100_000 + "]" * 100_000).encode(),
        "big integer": text.replace('"version": 1', f'"version": {digits}').encode(),
        "big integer in settings": text.replace('"app.debias.tau": 0.7', f'"a": {digits}').encode(),
        "30-digit integer": text.replace('"app.debias.tau": 0.7', '"a": ' + "1" * 30).encode(),
        "nan": text.replace('"app.debias.tau": 0.7', '"a": NaN').encode(),
        "infinity": text.replace('"app.debias.tau": 0.7', '"a": 1e999').encode(),
        "repeated key": text.replace('"version": 1', '"version": 1, "version": 1').encode(),
        "not utf-8": text.encode()[:40] + b"\xff\xfe" + text.encode()[40:],
        "not json": b"{" + text.encode()[:-5],
        "list": b"[]",
        "empty": b"",
        "bom": b"\xef\xbb\xbf" + text.encode(),
    }
    what = rng.choice(sorted(kinds))
    return what, base.with_manifest(text=kinds[what]), "refuse"


def zip_damage(base: Base, rng: random.Random):
    members = base.members()
    pick = rng.randrange(len(members))
    m = members[pick]
    what = rng.choice(
        [
            "crc", "encrypted", "method 99", "method bzip2", "cd offset", "cd offset back",
            "truncated", "two members", "many members", "declared small", "declared large",
            "local name", "no end record", "entries lie", "manifest bomb", "member bomb",
            "stored bomb", "flip", "flip", "flip",
        ]
    )  # fmt: skip
    cd_shift, entries, expect = 0, None, "refuse"
    if what == "crc":
        m.crc ^= 1 << rng.randrange(32)
    elif what == "encrypted":
        m.flags |= 1
    elif what == "method 99":
        m.method = 99
    elif what == "method bzip2":
        m.method = zipfile.ZIP_BZIP2
    elif what == "cd offset":
        cd_shift = rng.choice([1, 7, 10_000, 2**31])
    elif what == "cd offset back":
        cd_shift = -rng.randint(1, 60)
    elif what == "two members":
        members.append(dataclasses.replace(m))
    elif what == "many members":
        members += [Member.of(f"junk/{k}", b"") for k in range(rng.choice([500, 5_000]))]
    elif what == "declared small":
        m.size = max(m.size - rng.randint(1, 50), 0)
    elif what == "declared large":
        m.size = rng.choice([m.size + 1, 2**31, 2**32 - 1])
    elif what == "local name":
        m.local_name = b"x" + m.name[1:]
    elif what == "manifest bomb":
        size = rng.choice([300, 600]) * 2**20
        data, crc = zero_bomb(size)
        members = [x for x in members if x.name != b"workspace.json"]
        members.append(Member(b"workspace.json", data, crc, size))
    elif what in ("member bomb", "stored bomb"):
        size = 200 * 2**20
        data, crc = zero_bomb(size, 0)
        bomb = Member(
            f"{_entry(base.manifest)['folder']}/contexts.parquet".encode(), data, crc, size
        )
        if what == "stored bomb":  # declared small, stored as a method the reader must check
            bomb.size = 1_000
        members = [x for x in members if x.name != bomb.name] + [bomb]
    blob = raw_zip(members, cd_shift=cd_shift, entries=entries)
    if what == "truncated":
        blob = blob[: rng.randrange(len(blob))]
    elif what == "no end record":
        blob = blob[:-22]
    elif what == "entries lie":
        blob = blob[:-12] + struct.pack("<H", 60_000) + blob[-10:]
    elif what == "flip":
        pos = rng.randrange(len(blob))
        blob = blob[:pos] + bytes([blob[pos] ^ (1 << rng.randrange(8))]) + blob[pos + 1 :]
        expect = "either"
    return what, blob, expect


def parquet_damage(base: Base, rng: random.Random):
    import pyarrow as pa

    folder = _entry(base.manifest)["folder"]
    bodies = dict(base.bodies)
    what = rng.choice(
        [
            "dictionary bomb", "pandas metadata", "index as column", "nested", "same names",
            "wide", "rows", "fixed width", "not utf-8", "external chunk", "bytes",
        ]
    )  # fmt: skip
    contexts = base.ds.contexts
    expect = "refuse"
    if what == "dictionary bomb":
        body = dictionary_bomb(rng.choice([2_000_000, 4_000_000]), rng.choice([2_000, 8_000]))
    elif what == "pandas metadata":
        table = pa.Table.from_pandas(contexts, preserve_index=False)
        meta = json.loads(table.schema.metadata[b"pandas"])
        cols = {c["name"]: c for c in meta["columns"]}
        cols["context_id"]["name"], cols["text"]["name"] = "text", "context_id"
        table = table.replace_schema_metadata({b"pandas": json.dumps(meta).encode()})
        body = parquet_bytes(table)
        expect = ("open", base.expected)  # read as stored: the tables are the saved ones
    elif what == "index as column":
        out = io.BytesIO()
        base.ds.candidates.set_index("system").to_parquet(out)
        bodies[f"{folder}/candidates.parquet"] = out.getvalue()
        return what, raw_zip(base.members(bodies)), ("open", base.expected)
    elif what == "nested":
        body = parquet_bytes(
            pa.table({"context_id": ["a", "b"], "text": pa.array([["x"], ["y", "z"]])})
        )
    elif what == "same names":
        body = parquet_bytes(
            pa.Table.from_arrays([pa.array(["a"]), pa.array(["t"]), pa.array(["u"])],
                                 names=["context_id", "text", "text"])
        )  # fmt: skip
    elif what == "wide":
        cols = {"context_id": ["a"], "text": ["t"]}
        cols.update({f"c{k}": [k] for k in range(rng.choice([1_001, 3_000]))})
        body = parquet_bytes(pa.table(cols))
    elif what == "rows":
        body = empty_rows(rng.choice([5_000_001, 6_000_000]))
    elif what == "fixed width":
        body = fixed_width_bomb(3_000, 400_000)
    elif what == "not utf-8":
        body = parquet_bytes(pa.table({"context_id": ["a", "b"], "text": [b"ok", b"\xff\xfe"]}))
    elif what == "external chunk":
        body = external_chunk(parquet_bytes(pa.Table.from_pandas(contexts)), "/etc/hostname")
    else:  # bytes: damage inside the Parquet file (the zip's CRC is right)
        body = bytearray(bodies[f"{folder}/contexts.parquet"])
        for _ in range(rng.randint(1, 4)):
            body[rng.randrange(len(body))] = rng.randrange(256)
        body = bytes(body)
        expect = "parquet"
    bodies[f"{folder}/contexts.parquet"] = body
    return what, raw_zip(base.members(bodies)), expect


def valid_variant(base: Base, rng: random.Random):
    from data.io.workspace import BenchmarkRef, save_workspace

    ds = with_extras(base.ds, rng) if rng.random() < 0.7 else base.ds
    settings = random_settings(rng)
    entries = {"demo": BenchmarkRef("demo"), "mine ✓ 連貫性": ds}
    if rng.random() < 0.3:
        entries["second"] = dataclasses.replace(ds, name="second", description="again")
    active = rng.choice([*entries, None])
    blob = save_workspace(entries, active, settings)
    datasets = {n: v for n, v in entries.items()}
    want = (datasets, {**settings, "app.active": active})
    return "valid", blob, ("open", want)


KINDS = {
    "manifest": manifest_damage,
    "json": json_damage,
    "zip": zip_damage,
    "parquet": parquet_damage,
    "valid": valid_variant,
}
WEIGHTS = {"manifest": 5, "json": 2, "zip": 4, "parquet": 3, "valid": 3}


def inputs(n: int = N_INPUTS, seed: int = SEED):
    rng = random.Random(seed)
    base = _cached()
    families = [k for k, w in WEIGHTS.items() for _ in range(w)]
    for k in range(n):
        family = families[k % len(families)] if k < len(families) else rng.choice(families)
        what, blob, expect = KINDS[family](base, rng)
        yield f"fuzz{k}.zip", f"{family}: {what}", blob, expect


# ---------------------------------------------------------------------------------------
# Checking one outcome


def same_dataset(got, want) -> None:
    import pandas as pd

    from data.io.workspace import BenchmarkRef
    from data.schema import TABLE_NAMES

    if isinstance(want, BenchmarkRef):
        assert got == want, (got, want)
        return
    for table in TABLE_NAMES:
        pd.testing.assert_frame_equal(got.table(table), want.table(table), check_dtype=True)
        for col in want.table(table).columns:  # integers past 2**53 stay exact
            assert list(map(repr, got.table(table)[col])) == list(
                map(repr, want.table(table)[col])
            ), (table, col)
    for field in ("scales", "description", "source", "reference_systems"):
        assert getattr(got, field) == getattr(want, field), field


def same_workspace(got, want) -> None:
    datasets, settings = got
    want_sets, want_settings = want
    assert list(datasets) == list(want_sets), (list(datasets), list(want_sets))
    for name in want_sets:
        same_dataset(datasets[name], want_sets[name])
    assert settings == want_settings, (settings, want_settings)


def parquet_reference(blob: bytes):
    """The damaged contexts member as an independent reading gives it (pyarrow, the
    columns as stored)."""
    import pyarrow.parquet as pq

    with zipfile.ZipFile(io.BytesIO(blob)) as zf:
        body = next(zf.read(n) for n in zf.namelist() if n.endswith("contexts.parquet"))
    return pq.ParquetFile(io.BytesIO(body)).read().to_pandas(ignore_metadata=True)


def outcome(name: str, blob: bytes, expect) -> str:
    """'exact' or 'refused'; raises for a crash, an inexact reading or a hostile file opened."""
    from data.io.workspace import load_workspace
    from data.schema import DataError

    try:
        got = load_workspace(blob, name)
    except DataError as err:
        assert name in str(err), f"the message does not name the file: {err}"
        return "refused"
    if expect == "refuse":
        raise AssertionError(f"opened a file that must be refused: {got[1]!r:.300}")
    if expect == "either":  # the zip's CRCs guard the members: intact, or refused
        same_workspace(got, _cached().expected)
    elif expect == "parquet":  # the damaged member as pyarrow reads it, validated
        from data.validate import validate_table

        want = validate_table(parquet_reference(blob), "contexts")
        same_dataset(
            got[0]["mine"], dataclasses.replace(_cached().expected[0]["mine"], contexts=want)
        )
    else:
        same_workspace(got, expect[1])
    return "exact"


_BASE: list[Base] = []


def _cached() -> Base:
    if not _BASE:
        _BASE.append(Base())
    return _BASE[0]


# ---------------------------------------------------------------------------------------
# The child process: memory cap, audit hook, per-input peak RSS and CPU


def status_bytes(field: str, default: int | None = 0) -> int | None:
    """Line ``field`` of /proc/self/status in bytes (VmHWM: the peak resident memory, VmSize:
    the address space); ``default`` where the file has no such line (also used by
    benchmarks/bench_uploads.py)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(f"{field}:"):
                return int(line.split()[1]) * 1024
    return default


def _rss_peak() -> int:
    peak = status_bytes("VmHWM", None)
    return peak if peak is not None else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _reset_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _too_long(signum, frame):
    raise TimeoutError(f"more than {CPU_LIMIT} s of CPU")


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def child(n: int, seed: int, address_cap: int, only: str | None = None) -> dict:
    """Run the fuzz here (a child process): the counts, crashes, peak RSS and files."""
    import pyarrow  # noqa: F401  (imported before the cap and the hook)

    import data.io.workspace  # noqa: F401
    from data.paths import user_cache_dir

    base = _cached()
    made = list(inputs(n, seed))
    if only:
        made = [x for x in made if only in x[1]]
    outcome(made[0][0], base.with_manifest(base.manifest), ("open", base.expected))  # warm
    cache = str(user_cache_dir())
    opened: list[str] = []
    allowed = (cache, sys.prefix, sys.base_prefix, str(ROOT), "/proc/self/")

    def hook(event, args):
        if event == "open" and args and isinstance(args[0], str | bytes | os.PathLike):
            path = os.fsdecode(args[0])
            if not os.path.abspath(path).startswith(allowed):
                opened.append(path)

    sys.addaudithook(hook)
    signal.signal(signal.SIGPROF, _too_long)
    if address_cap:
        cap = status_bytes("VmSize") + address_cap
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    counts = {"inputs": 0, "exact": 0, "refused": 0, "wrong": 0, "crashes": 0}
    crashes, worst, per_kind = [], {"rss": 0, "cpu": 0.0}, {}
    _reset_peak()
    baseline = _rss_peak()
    for name, story, blob, expect in made:
        counts["inputs"] += 1
        _reset_peak()
        before_rss, before_cpu = _rss_peak(), _cpu()
        signal.setitimer(signal.ITIMER_PROF, CPU_LIMIT)  # a runaway input stops here
        failure = None
        try:
            result = outcome(name, blob, expect)
        except BaseException as err:  # MemoryError at the cap counts as a crash too
            failure = (type(err), err.args)  # the traceback (and what it holds) goes now
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
        if failure is not None:  # wrong: opened a hostile file, or read one inexactly
            result = "wrong" if failure[0] is AssertionError else "crashes"
            crashes.append(f"{name} ({story}): {failure[0].__name__}: {str(failure[1])[:300]}")
        counts[result] += 1
        rss, cpu = max(_rss_peak() - before_rss, 0), _cpu() - before_cpu
        key = story
        kind = per_kind.setdefault(key, {"n": 0, "rss": 0, "cpu": 0.0, "outcomes": {}})
        kind["n"] += 1
        kind["rss"], kind["cpu"] = max(kind["rss"], rss), max(kind["cpu"], cpu)
        kind["outcomes"][result] = kind["outcomes"].get(result, 0) + 1
        if rss > worst["rss"]:
            worst.update(rss=rss, rss_input=f"{name} ({story})")
        if cpu > worst["cpu"]:
            worst.update(cpu=cpu, cpu_input=f"{name} ({story})")
    return {
        "counts": counts,
        "crashes": crashes,
        "worst": worst,
        "baseline_rss": baseline,
        "opened_outside": sorted(set(opened)),
        "kinds": per_kind,
    }


def run_child(
    n: int = N_INPUTS,
    seed: int = SEED,
    *,
    cache: Path,
    address_cap: int = ADDRESS_CAP,
    only: str | None = None,
    timeout: float = 900,
) -> dict:
    env = {**os.environ, "JUDGESCOPE_CACHE": str(cache), "PYTHONPATH": str(ROOT)}
    code = (
        "import json, sys; from tests.data.test_fuzz_workspace import child; "
        f"print('RESULT' + json.dumps(child({n}, {seed}, {address_cap}, {only!r})))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    lines = [x for x in proc.stdout.splitlines() if x.startswith("RESULT")]
    assert lines, f"the child failed (rc {proc.returncode}): {proc.stderr[-3000:]}"
    return json.loads(lines[-1][len("RESULT") :])


def test_hostile_workspaces_open_exactly_or_are_refused(tmp_path):
    start = time.monotonic()
    report = run_child(cache=tmp_path / "cache")
    counts = report["counts"]
    print(f"fuzzed workspaces: {counts}; worst input {report['worst']}")
    assert not report["crashes"], "\n".join(report["crashes"][:10])
    assert counts["crashes"] == counts["wrong"] == 0 and counts["inputs"] == N_INPUTS
    assert counts["exact"] >= 40 and counts["refused"] >= 150, counts
    assert report["worst"]["rss"] < MEMORY_BOUND, report["worst"]
    assert report["worst"]["cpu"] < CPU_BOUND, report["worst"]
    assert not report["opened_outside"], report["opened_outside"]
    assert time.monotonic() - start < 600


# ---------------------------------------------------------------------------------------
# By hand: python tests/data/test_fuzz_workspace.py [--bombs]

BOMBS = {
    # the cases, each on its own: a manifest of 4 GiB from 4 MB, a Parquet member
    # of 1 GiB from 1 MB, a 6 KB dictionary-encoded member, 20,000 datasets on one table
    "manifest 4 GiB": "manifest bomb 4g",
    "member 1 GiB": "member bomb 1g",
    "dictionary bomb": "dictionary bomb",
    "20,000 datasets": "many datasets",
}


def bomb(kind: str) -> bytes:
    base = _cached()
    if kind == "manifest bomb 4g":
        size = 2**32 - 1
        data, crc = zero_bomb(size)
        members = [m for m in base.members() if m.name != b"workspace.json"]
        return raw_zip(members + [Member(b"workspace.json", data, crc, size)])
    if kind == "member bomb 1g":
        size = 2**30
        data, crc = zero_bomb(size, 0)
        folder = _entry(base.manifest)["folder"]
        name = f"{folder}/contexts.parquet".encode()
        members = [m for m in base.members() if m.name != name]
        return raw_zip(members + [Member(name, data, crc, size)])
    rng = random.Random(0)
    while True:  # the first such input of the generator
        damage = parquet_damage if kind == "dictionary bomb" else manifest_damage
        what, blob, _ = damage(base, rng)
        if what == kind:
            return blob


def bomb_child(kind: str, address_cap: int) -> dict:
    import data.io.workspace  # noqa: F401
    from data.io.workspace import load_workspace

    blob = bomb(kind)
    if address_cap:
        cap = status_bytes("VmSize") + address_cap
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    _reset_peak()
    rss0, cpu0 = _rss_peak(), _cpu()
    try:
        load_workspace(blob, "bomb.zip")
        result = "opened"
    except BaseException as err:
        result = f"{type(err).__name__}: {str(err)[:160]}"
    return {
        "bytes": len(blob),
        "result": result,
        "peak_rss_mb": round(_rss_peak() / 2**20),
        "extra_rss_mb": round((_rss_peak() - rss0) / 2**20),
        "cpu_s": round(_cpu() - cpu0, 2),
    }


if __name__ == "__main__":
    cache = Path(os.environ.get("JUDGESCOPE_CACHE", "/tmp/judgescope-fuzz-cache"))
    if "--bombs" in sys.argv:
        cap = int(os.environ.get("FUZZ_CAP", 6 * 2**30))
        for label, kind in BOMBS.items():
            code = (
                "import json; from tests.data.test_fuzz_workspace import bomb_child; "
                f"print('RESULT' + json.dumps(bomb_child({kind!r}, {cap})))"
            )
            try:
                proc = subprocess.run(
                    [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                    env={**os.environ, "PYTHONPATH": str(ROOT)},
                    timeout=float(os.environ.get("FUZZ_TIMEOUT", 120)),
                )  # fmt: skip
                out = [x for x in proc.stdout.splitlines() if x.startswith("RESULT")]
                print(label, out[-1][6:] if out else f"rc {proc.returncode}: {proc.stderr[-400:]}")
            except subprocess.TimeoutExpired:
                print(label, "timed out")
    else:
        report = run_child(
            cache=cache,
            address_cap=int(os.environ.get("FUZZ_CAP", ADDRESS_CAP)),
            only=os.environ.get("FUZZ_ONLY"),
        )
        print(json.dumps({k: report[k] for k in ("counts", "worst", "baseline_rss")}))
        print("\n".join(report["crashes"]))
        print("opened outside:", report["opened_outside"][:10])
        for story, kind in sorted(report["kinds"].items()):
            print(f"{story:40s} {kind}")
