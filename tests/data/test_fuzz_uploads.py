"""Seeded fuzz test of uploads: every malformed file is read exactly or refused with a
``DataError`` naming the file and the row, line or column; nothing else is ever raised.

Valid tables in the three layouts (long canonical tables, wide, pairwise verdicts) are
damaged at the table level (odd cell values, repeated rows, dropped, added, renamed and
duplicated columns) and at the byte level (truncation, stray quotes, delimiters, brackets,
line breaks, invalid UTF-8, deep nesting, extra and missing cells), then written as CSV, TSV,
JSON, JSONL and Parquet. An accepted file is checked against an independent reading (Python's
csv and json modules, pyarrow): the raw cells must be the file's cells exactly, and the
dataset may hold no id, sample or number that is not in the file.
"""

from __future__ import annotations

import csv
import io
import json
import math
import random
import re
import sys

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from data.coerce import normalise_column
from data.io import read_frame, read_upload
from data.schema import TABLES, DataError
from data.synthetic.simulate import simulate

SEED = 9
N_INPUTS = 400
FORMATS = ("csv", "tsv", "json", "jsonl", "parquet")
NAMES_A_PLACE = re.compile(r"\b(rows?|columns?|line)\b")
#: Problems of the whole file, where no row or column applies.
WHOLE_FILE = (
    "the file is empty",
    "the file has no data rows",
    "the file has no header row",
    "not a readable Parquet file",
    "expected a JSON list of row objects",
    "the JSON columns have different lengths",
    "the top-level object names",
)
ODD_VALUES = [
    "",
    " ",
    "NA",
    "nan",
    None,
    "1e20",
    1e20,
    2**63,
    -(2**63) - 1,
    2**53 + 1,
    2.0**63,
    float("inf"),
    float("nan"),
    "-inf",
    "-0.5",
    "=cmd",
    "a\u2028b",
    "c\x85d",
    "x\ny",
    '"',
    ",",
    "\t",
    "x" * 300,
    True,
    0.1 + 0.2,
    "\uff10",
    7.0,
    "A",
    "tie",
    "2",
]
COLUMN_NAMES = ["winner", "Score", "score", "text", "notes", "sample", "", "first", "p", "judge"]
BYTES = [b'"', b",", b"\t", b"\n", b"\r", b"[", b"{", b"}", b"]", b"\\", b"\x00", b"\xff", b":"]
DEFAULTS = {"all", "overall", "uploaded", "human"}
PANDAS_INDEX = re.compile(r"__index_level_\d+__")


def base_tables() -> dict[str, pd.DataFrame]:
    ds = simulate(2, 3, mode="samples", n_samples=2, random_state=0)
    wide = ds.human_scores.pivot_table(
        index=["context_id", "candidate_id", "annotator"],
        columns="attribute",
        values="score",
    ).reset_index()
    wide.columns.name = None
    comps = ds.comparisons.head(8)
    pairwise = pd.DataFrame(
        {
            "context": comps["context_id"],
            "first": comps["first_id"],
            "second": comps["second_id"],
            "verdict": comps["verdict"],
            "p": comps["p_first"],
        }
    )
    tables = {name: ds.table(name).head(8) for name in ("contexts", "candidates", "ratings")}
    tables["human_scores"] = ds.human_scores.head(8)
    tables["comparisons"] = comps
    tables = {**tables, "wide": wide.head(8), "pairwise": pairwise}
    # cells as plain Python values (None for missing), so damage can put anything anywhere
    return {
        name: pd.DataFrame(
            {c: pd.Series([None if pd.isna(v) else v for v in t[c]], dtype=object) for c in t}
        )
        for name, t in tables.items()
    }


# ---------------------------------------------------------------------------------------
# Damage


def damage_table(df: pd.DataFrame, rng: random.Random) -> tuple[pd.DataFrame, str]:
    df = df.astype(object)  # a copy that takes any value in any cell
    what = rng.choice(["cell", "cell", "cell", "repeat", "drop", "add", "rename", "swap"])
    if what == "cell" and len(df):
        row, col = rng.randrange(len(df)), rng.randrange(df.shape[1])
        value = rng.choice(ODD_VALUES)
        df.iat[row, col] = value
        return df, f"cell ({row}, {df.columns[col]!r}) = {value!r}"
    if what == "repeat" and len(df):
        row = rng.randrange(len(df))
        return pd.concat([df, df.iloc[[row]]], ignore_index=True), f"row {row} repeated"
    if what == "drop" and df.shape[1] > 1:
        col = rng.choice(list(df.columns))
        return df.drop(columns=[col]), f"column {col!r} dropped"
    if what == "add":
        name = rng.choice(COLUMN_NAMES)
        if name in df.columns:
            return df, "nothing"
        df[name] = [rng.choice(ODD_VALUES[:12] + [1, 2, 3]) for _ in range(len(df))]
        return df, f"column {name!r} added"
    if what == "rename":
        old, new = rng.choice(list(df.columns)), rng.choice(COLUMN_NAMES + list(df.columns))
        if new in df.columns:
            return df, "nothing"
        return df.rename(columns={old: new}), f"column {old!r} renamed {new!r}"
    if what == "swap" and df.shape[1] > 1:
        a, b = rng.sample(list(df.columns), 2)
        return df.rename(columns={a: b, b: a}), f"columns {a!r} and {b!r} swapped"
    return df, "nothing"


def write(df: pd.DataFrame, fmt: str) -> bytes:
    if fmt in ("csv", "tsv"):
        return df.to_csv(index=False, sep="," if fmt == "csv" else "\t").encode("utf-8")
    if fmt == "parquet":
        buf = io.BytesIO()
        try:
            df.to_parquet(buf, index=False)
        except (pa.ArrowException, ValueError, TypeError, OverflowError):
            buf = io.BytesIO()
            df.astype(str).to_parquet(buf, index=False)  # mixed types: as text
        return buf.getvalue()
    records = [{str(k): v for k, v in row.items()} for row in df.to_dict("records")]
    if fmt == "json":
        return json.dumps(records, ensure_ascii=False).encode("utf-8")
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode("utf-8")


def damage_bytes(data: bytes, fmt: str, rng: random.Random) -> tuple[bytes, str]:
    pos = rng.randrange(len(data) + 1)
    what = rng.choice(
        ["truncate", "insert", "insert", "delete", "line", "cells", "deep", "bom", "crlf"]
        + (["key", "surrogate"] if fmt.startswith("json") else [])
    )
    if fmt == "parquet":
        what = rng.choice(["truncate", "flip"])
        if what == "flip" and data:
            pos = min(pos, len(data) - 1)
            return data[:pos] + bytes([data[pos] ^ 0xFF]) + data[pos + 1 :], f"byte {pos} flipped"
        return data[:pos], f"truncated at {pos}"
    if what == "truncate":
        return data[:pos], f"truncated at {pos}"
    if what == "insert":
        b = rng.choice(BYTES)
        return data[:pos] + b + data[pos:], f"{b!r} inserted at {pos}"
    if what == "delete":
        n = rng.randint(1, 8)
        return data[:pos] + data[pos + n :], f"{n} bytes deleted at {pos}"
    if what == "bom":
        return b"\xef\xbb\xbf" + data, "byte-order mark"
    if what == "crlf":
        return data.replace(b"\n", b"\r\n"), "CRLF line ends"
    if what == "key":
        return data.replace(b'{"', b'{"context_id": "zz", "', 1), "context_id key repeated"
    if what == "surrogate":
        return data.replace(b'": "', b'": "\\udc00', 1), "unpaired surrogate escape"
    lines = data.split(b"\n")
    k = rng.randrange(len(lines))
    if what == "line":
        lines.insert(k, lines[k])
        return b"\n".join(lines), f"line {k + 1} repeated"
    if what == "cells":
        sep = b"\t" if fmt == "tsv" else b","
        extra = rng.random() < 0.5
        lines[k] = lines[k] + sep + b"EXTRA" if extra else lines[k].rpartition(sep)[0]
        return b"\n".join(lines), f"line {k + 1} {'extra' if extra else 'missing'} cell"
    nest = b"[" * 3000 + b"]" * 3000
    return data[:pos] + nest + data[pos:], f"deep nesting at {pos}"


# ---------------------------------------------------------------------------------------
# Independent readings of the same bytes


def _json(text: str):
    """json.loads, an integer longer than Python converts kept as its digits (text)."""
    limit = sys.get_int_max_str_digits()
    return json.loads(
        text, parse_int=lambda d: d if limit and len(d.lstrip("-")) > limit else int(d)
    )


def _text(data: bytes) -> str:
    return data.decode("utf-8").removeprefix("\ufeff")


def reference(data: bytes, fmt: str) -> tuple[list[str], list[list]] | None:
    """(columns, rows) as another reader sees the file, or None when it has no one reading."""
    if fmt in ("csv", "tsv"):
        rows = [
            r
            for r in csv.reader(
                io.StringIO(_text(data), newline=""),
                delimiter=fmt[0] * 0 + ("," if fmt == "csv" else "\t"),
            )
            if r
        ]
        header = [h if h != "" else f"Unnamed: {i}" for i, h in enumerate(rows[0])]
        return header, rows[1:]
    if fmt == "parquet":  # the columns as stored (no pandas metadata), less a pandas index
        records = pq.read_table(io.BytesIO(data)).to_pylist()
        columns = [
            c for c in pq.read_schema(io.BytesIO(data)).names if not PANDAS_INDEX.fullmatch(c)
        ]
        return columns, [[r[c] for c in columns] for r in records]
    if fmt == "json":
        obj = _json(_text(data))
        if isinstance(obj, dict) and len(obj) == 1 and isinstance(next(iter(obj.values())), list):
            inner = next(iter(obj.values()))
            obj = inner if all(isinstance(r, dict) for r in inner) else obj
        if isinstance(obj, dict):
            columns = list(obj)
            return columns, [list(r) for r in zip(*obj.values(), strict=True)]
        records = obj
    else:
        records = [_json(line) for line in _text(data).split("\n") if line.strip()]
    columns = list(dict.fromkeys(k for r in records for k in r))
    return columns, [[r.get(c) for c in columns] for r in records]


def same(got, want) -> bool:
    if isinstance(want, bytes):  # a binary Parquet column: read as the text it encodes
        return got == want.decode("utf-8")
    if want is None or (isinstance(want, float) and math.isnan(want)):
        return got is None or got is pd.NA or (isinstance(got, float) and math.isnan(got))
    if isinstance(want, bool) or isinstance(got, bool | np.bool_):
        return isinstance(got, bool | np.bool_) and isinstance(want, bool) and bool(got) == want
    if isinstance(want, int | float):
        return isinstance(got, int | float | np.integer | np.floating) and got == want
    return got == want


def id_text(value) -> str | None:
    if isinstance(value, bytes):  # a binary Parquet column: read as the text it encodes
        value = value.decode("utf-8")
    if value is None or isinstance(value, bool):
        return None if value is None else str(value)
    if isinstance(value, float):
        return (
            None if math.isnan(value) else (str(int(value)) if value.is_integer() else repr(value))
        )
    return str(value).strip()


def check_exact_frame(frame: pd.DataFrame, ref) -> None:
    columns, rows = ref
    assert list(map(str, frame.columns)) == list(map(str, columns)), (frame.columns, columns)
    assert len(frame) == len(rows), f"{len(frame)} rows read, the file has {len(rows)}"
    for got_row, want_row in zip(frame.itertuples(index=False), rows, strict=True):
        for got, want in zip(got_row, want_row, strict=True):
            assert same(got, want), f"cell {got!r} read, the file has {want!r}"


def check_nothing_invented(ds, ref) -> None:
    columns, rows = ref
    cells = [v for row in rows for v in row]
    texts = {id_text(v) for v in cells} | DEFAULTS | {normalise_column(c) for c in columns}
    numbers = set()
    for v in cells:
        try:
            numbers.add(float(v))
        except (TypeError, ValueError, OverflowError):
            pass
    for name, spec in TABLES.items():
        table = ds.table(name)[list(spec)]  # extra columns are kept as they were read
        for col in ("context_id", "candidate_id", "first_id", "second_id", "annotator", "judge"):
            if col in table.columns:
                unknown = set(table[col]) - texts
                assert not unknown, f"{name}.{col} holds {unknown}, not in the file"
        for col in ("score", "p_first"):
            if col in table.columns:
                vals = table[col].to_numpy(dtype=float)
                assert not np.isinf(vals).any(), f"{name}.{col} holds infinity"
                finite = vals[np.isfinite(vals)]
                invented = [v for v in finite if v not in numbers and v not in (0.0, 0.5, 1.0)]
                assert not invented, f"{name}.{col} holds {invented}, not in the file"
        if "sample" in table.columns and len(table):
            assert table["sample"].dtype == np.int64
            assert (table["sample"] >= -(2**63)).all()


# ---------------------------------------------------------------------------------------
# The run


def inputs():
    rng = random.Random(SEED)
    tables = base_tables()
    for k in range(N_INPUTS):
        fmt = FORMATS[k % len(FORMATS)]
        layout = rng.choice(list(tables))
        df, story = tables[layout], []
        for _ in range(rng.randint(1, 3)):
            df, what = damage_table(df, rng)
            story.append(what)
        data = write(df, fmt)
        if rng.random() < 0.6:
            data, what = damage_bytes(data, fmt, rng)
            story.append(what)
        kind = rng.choice(
            [None, None, None, "long" if layout not in ("wide", "pairwise") else layout]
        )
        yield f"fuzz{k}.{fmt}", data, fmt, kind, f"{layout}: {'; '.join(story)}"


# ---------------------------------------------------------------------------------------
# Hostile and awkward files made on purpose (issue 23, items 8-10): each with what must
# happen ("refuse"; "open": read exactly; "either": read exactly or refused with a message)


def _parquet(table) -> bytes:
    out = io.BytesIO()
    pq.write_table(table, out)
    return out.getvalue()


def _pandas_parquet(df: pd.DataFrame, **kw) -> bytes:
    out = io.BytesIO()
    df.to_parquet(out, **kw)
    return out.getvalue()


def _swapped_metadata(df: pd.DataFrame, a: str, b: str) -> bytes:
    table = pa.Table.from_pandas(df, preserve_index=False)
    meta = json.loads(table.schema.metadata[b"pandas"])
    for col in meta["columns"]:
        col["name"] = {a: b, b: a}.get(col["name"], col["name"])
    return _parquet(table.replace_schema_metadata({b"pandas": json.dumps(meta).encode()}))


BIG = "1" + "0" * 5_000  # more digits than Python's int() converts


def special_inputs():
    from tests.data.test_fuzz_workspace import dictionary_bomb

    tables = base_tables()
    contexts = pd.DataFrame({"context_id": ["c1", "c2"], "text": ["one text", "two text"]})
    cands = tables["candidates"].astype(str)
    ratings = tables["ratings"].astype(str)
    head = ",".join(ratings.columns)
    row = ratings.iloc[0].tolist()
    at = {c: i for i, c in enumerate(ratings.columns)}

    def ratings_csv(col: str, value: str) -> bytes:
        cells = list(row)
        cells[at[col]] = value
        return f"{head}\n{','.join(cells)}\n".encode()

    def ratings_jsonl(col: str, value: str) -> bytes:
        cells = {c: json.dumps(v) for c, v in zip(ratings.columns, row, strict=True)}
        cells[col] = value
        return ("{" + ", ".join(f'"{c}": {v}' for c, v in cells.items()) + "}\n").encode()

    wide_header = ["context_id", "candidate_id"] + [f"sc{k:03d}" for k in range(998)]
    wide_rows = [["c1", c] + [str((k + j) % 10) for k in range(998)] for j, c in enumerate("ab")]
    yield (
        "bomb5k.parquet",
        dictionary_bomb(1_000_000, 5_500),
        None,
        "dictionary bomb 5 KB",
        "refuse",
    )
    yield (
        "bomb9k.parquet",
        dictionary_bomb(1_700_000, 6_000),
        None,
        "dictionary bomb 9 KB",
        "refuse",
    )
    yield (
        "swap.parquet", _swapped_metadata(contexts, "context_id", "text"), "long",
        "pandas metadata swaps two columns", "open",
    )  # fmt: skip
    yield (
        "index.parquet", _pandas_parquet(cands.set_index("system")), None,
        "system written as the pandas index", "open",
    )  # fmt: skip
    for layout, df in tables.items():
        df = df.convert_dtypes()
        body = _pandas_parquet(df.set_index(df.columns[0]))
        want = "either" if layout == "wide" else "open"  # wide: ambiguous without a kind
        yield f"indexed_{layout}.parquet", body, None, f"{layout}: first column as index", want
    yield (
        "unnamed.parquet", _pandas_parquet(contexts[contexts["context_id"] == "c2"]), None,
        "an unnamed pandas index", "open",
    )  # fmt: skip
    for what, column in [
        ("list", pa.array([["x"], ["y", "z"]])),
        ("struct", pa.array([{"a": 1}, {"a": 2}])),
        ("map", pa.array([[("k", 1)], [("j", 2)]], pa.map_(pa.string(), pa.int64()))),
        ("large list", pa.array([[1], [2]], pa.large_list(pa.int64()))),
    ]:
        body = _parquet(pa.table({"context_id": ["c1", "c2"], "text": column}))
        yield f"nested_{what.replace(' ', '_')}.parquet", body, None, f"nested: {what}", "refuse"
    yield (
        "big.json",
        f'[{{"context_id": {BIG}, "text": "t"}}]'.encode(),
        None,
        "5,000 digits",
        "either",
    )
    yield (
        "big.jsonl",
        f'{{"context_id": "c", "text": -{BIG}}}\n'.encode(),
        None,
        "5,000 digits",
        "either",
    )
    for col in ("sample", "score", "context_id"):
        want = "open" if col == "context_id" else "refuse"
        yield f"big_{col}.csv", ratings_csv(col, BIG), "long", f"5,000 digits in {col}", want
        yield f"big_{col}.jsonl", ratings_jsonl(col, BIG), "long", f"5,000 digits in {col}", want
    for fmt, sep in (("csv", ","), ("tsv", "\t")):
        for last, tail in (("\n", "\n"), ("\n", ""), ("a\r\n", "\r\n"), ('x"\n', "\n")):
            quoted = '"' + last.replace('"', '""') + '"'
            body = f"context_id{sep}text\nc1{sep}t\nc2{sep}{quoted}{tail}".encode()
            yield f"quoted.{fmt}", body, "long", f"last cell {last!r} quoted", "open"
        yield (
            f"open.{fmt}",
            f'context_id{sep}text\nc{sep}"\n'.encode(),
            "long",
            "quote never closed",
            "refuse",
        )
    body = "".join(",".join(r) + "\n" for r in [wide_header, *wide_rows]).encode()
    yield "wide.csv", body, None, "1,000 columns", "open"


def outcome(name, data, fmt, kind) -> str:
    """'accepted' or 'refused'; raises AssertionError (with the reason) for anything else."""
    try:
        frame = read_frame(name, data)
    except DataError as err:
        check_message(name, str(err))
        return "refused"
    ref = reference(data, fmt)
    check_exact_frame(frame, ref)
    try:
        ds = read_upload(name, data, kind=kind)
    except DataError as err:
        check_message(name, str(err))
        return "refused"
    check_nothing_invented(ds, ref)
    return "accepted"


def check_message(name: str, msg: str) -> None:
    assert name in msg, f"the message does not name the file: {msg}"
    if not NAMES_A_PLACE.search(msg):
        assert any(w in msg for w in WHOLE_FILE), f"no row, line or column named: {msg}"


def run_all() -> tuple[dict, list[str]]:
    """Counts (inputs, exact, refused, wrong, crashes) and what went wrong: 'wrong' is a
    file read inexactly or a hostile one opened, 'crashes' any exception but a DataError."""
    counts = {"inputs": 0, "exact": 0, "refused": 0, "wrong": 0, "crashes": 0}
    failures = []
    made = [(*x, "either") for x in inputs()]
    for name, data, kind, story, expect in special_inputs():
        made.append((name, data, name.rsplit(".", 1)[1], kind, f"special: {story}", expect))
    for name, data, fmt, kind, story, expect in made:
        counts["inputs"] += 1
        try:
            result = outcome(name, data, fmt, kind)
            if result == "accepted" and expect == "refuse":
                raise AssertionError("a file that must be refused was read")
            if result == "refused" and expect == "open":
                raise AssertionError("a file that must be read was refused")
            counts["exact" if result == "accepted" else "refused"] += 1
        except AssertionError as err:
            counts["wrong"] += 1
            failures.append(f"{name} (kind={kind}; {story}): {str(err)[:300]}")
        except Exception as err:  # anything but a DataError
            counts["crashes"] += 1
            failures.append(f"{name} (kind={kind}; {story}): {type(err).__name__}: {err!s:.300}")
    return counts, failures


def test_fuzzed_uploads_are_read_exactly_or_refused():
    counts, failures = run_all()
    print(f"fuzzed uploads: {counts}")
    assert not failures, "\n".join(failures[:10])
    assert counts["wrong"] == counts["crashes"] == 0
    # the damage is varied enough to exercise both outcomes in every format
    assert counts["exact"] > 40 and counts["refused"] > 100, counts


if __name__ == "__main__":  # python tests/data/test_fuzz_uploads.py: the counts
    counts, failures = run_all()
    print(json.dumps(counts))
    print("\n".join(failures))
