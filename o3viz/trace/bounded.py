"""The one bounded way to read a record out of an untrusted file: a line (JSONL records, the
store's ``labels.jsonl``, golden-set label files), a row of a table (Parquet, through Arrow) and a
member of an archive (an Inspect ``.eval`` zip). Every importer reads through these, so a cap is
written once (the figures are listed in ``docs/limits.md``):

- a record is at most ``MAX_RECORD_BYTES`` as read (a longer line is skipped in 1 MiB pieces, never
  held whole; a longer row is skipped from its Arrow size, before it becomes Python objects);
- a file holds at most ``MAX_RECORDS`` records;
- what a file decodes to, summed over its records, is at most ``MAX_EXPANSION`` bytes per byte of
  the file (and ``EXPANSION_FLOOR`` for any file), so a small compressed file cannot make an import
  decode gigabytes (``Budget``);
- an archive is at most ``MAX_ARCHIVE_BYTES`` on disk, and its member count and central directory
  are read from its end record and checked before ``zipfile`` parses anything.

Each problem is one ``TraceError`` line, or a ``(n, None, problem)`` item for a record that is
skipped while the rest of the file is read.

>>> import io
>>> [(n, raw, why) for n, raw, why in read_lines(io.BytesIO(b'{"a": 1}\\n' + b"x" * 40 + b"\\n{}"), 16)]
[(1, b'{"a": 1}\\n', None), (2, None, 'record larger than the limit of 16 bytes'), (3, b'{}', None)]
"""

from __future__ import annotations

import io
import os
import struct
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any

from o3viz.errors import TraceError, one_line, printable

MAX_RECORD_BYTES = 16 * 1024 * 1024  # one record (a line, a row, a sample's JSON) as read
MAX_RECORDS = 10_000_000  # records in one file
MAX_EXPANSION = 64  # decoded bytes per byte of the file, summed over its records
EXPANSION_FLOOR = 64 * 1024 * 1024  # decoded bytes any file may reach, however small
MAX_ARCHIVE_BYTES = 4 * 1024**3  # an archive (.eval zip) on disk
MAX_CD_ENTRY_BYTES = 512  # central directory bytes per member allowed (name + extra + comment)
ZSTD = 93  # the zip method number inspect_ai writes
_PIECE = 1 << 20


class BudgetError(TraceError):
    """A file as a whole is over a cap (records, decoded bytes): the rest of it is not read."""


@dataclass
class Budget:
    """How much a file has decoded so far, against what its size allows (``take`` raises past it).

    >>> b = Budget("f.parquet", input_bytes=1000)
    >>> b.limit == EXPANSION_FLOOR
    True
    >>> b.take(EXPANSION_FLOOR + 1)
    Traceback (most recent call last):
    ...
    o3viz.trace.bounded.BudgetError: f.parquet: decodes to more than 67,108,864 bytes (64 per byte of the file, at least 64 MiB) by record 1; the rest is not read
    """

    where: str
    input_bytes: int
    decoded: int = 0
    records: int = 0
    max_records: int = MAX_RECORDS

    @property
    def limit(self) -> int:
        return max(EXPANSION_FLOOR, MAX_EXPANSION * self.input_bytes)

    def check(self, nbytes: int, what: str = "record") -> None:
        """Refuse, before decoding it, something declared to hold ``nbytes`` more than is left."""
        if self.decoded + nbytes > self.limit:
            raise BudgetError(
                f"{self.where}: {what} declares {nbytes:,} bytes, more than the {self.limit - self.decoded:,} "
                f"left of what the file may decode to ({MAX_EXPANSION} per byte of the file, at least 64 MiB)"
            )

    def take(self, nbytes: int) -> None:
        """Count one record of ``nbytes`` decoded bytes; one ``TraceError`` line past a cap."""
        self.records += 1
        self.decoded += nbytes
        if self.records > self.max_records:
            raise BudgetError(f"{self.where}: more than {self.max_records:,} records; split the file")
        if self.decoded > self.limit:
            raise BudgetError(
                f"{self.where}: decodes to more than {self.limit:,} bytes ({MAX_EXPANSION} per byte of "
                f"the file, at least 64 MiB) by record {self.records}; the rest is not read"
            )


# ---------------------------------------------------------------- lines


def read_lines(
    f: IO[bytes], limit: int = MAX_RECORD_BYTES, budget: Budget | None = None
) -> Iterator[tuple[int, bytes | None, str | None]]:
    """``(n, raw, problem)`` per line of a binary file (``n`` from 1, blank lines included): the
    line's bytes, or ``None`` and why it is skipped. A line over ``limit`` bytes is read past in
    1 MiB pieces, so it never sits in memory whole. Non-blank lines count against ``budget``."""
    n = 0
    while True:
        raw = f.readline(limit + 1)
        if not raw:
            return
        n += 1
        if len(raw) > limit and not raw.endswith(b"\n"):
            size = len(raw)
            while raw and not raw.endswith(b"\n"):  # skip the rest of the long line
                raw = f.readline(_PIECE)
                size += len(raw)
            if budget is not None:
                budget.take(size)
            yield n, None, f"record larger than the limit of {limit} bytes"
            continue
        if budget is not None and raw.strip():
            budget.take(len(raw))
        yield n, raw, None


# ---------------------------------------------------------------- table rows


def arrow_rows(
    batch: Any, budget: Budget, limit: int = MAX_RECORD_BYTES
) -> Iterator[tuple[dict | None, str | None]]:
    """``(row, problem)`` per row of an Arrow record batch: the row as a dict, or ``None`` and why.
    A row's size is taken from its Arrow buffers before it becomes Python objects, so a row over
    ``limit`` is never converted, and every row counts against ``budget``."""
    for i in range(batch.num_rows):
        row = batch.slice(i, 1)
        size = row.nbytes  # the buffer ranges this row references (a slice's own share)
        budget.take(size)
        if size > limit:
            yield None, f"row of {size:,} bytes, larger than the limit of {limit} bytes"
        else:
            yield row.to_pylist()[0], None


def batch_rows(declared_bytes: int, most: int, batch_bytes: int = MAX_RECORD_BYTES) -> int:
    """Rows per Arrow batch for a row group declaring ``declared_bytes``: a dense batch of k rows
    can repeat a dictionary value k times, so k times the declared size stays within ``batch_bytes``.

    >>> batch_rows(100_000, 64), batch_rows(8 << 20, 64), batch_rows(1 << 30, 64)
    (64, 2, 1)
    """
    return max(1, min(most, batch_bytes // max(1, declared_bytes)))


# ---------------------------------------------------------------- archive members


def _end_record(f: IO[bytes], size: int, where: str, what: str) -> tuple[int, int]:
    """(members, central directory bytes) as the zip's end record (zip64 too) declares them."""
    tail_len = min(size, 22 + 0xFFFF)
    f.seek(size - tail_len)
    tail = f.read(tail_len)
    at = tail.rfind(b"PK\x05\x06")
    if at < 0 or len(tail) - at < 22:
        raise TraceError(f"{where}: not a readable {what} (no end of central directory)")
    _, _, _, _, members, cd_size, _, _ = struct.unpack("<4sHHHHIIH", tail[at : at + 22])
    if members == 0xFFFF or cd_size == 0xFFFFFFFF:  # zip64: the real figures are in its own record
        loc = tail[at - 20 : at] if at >= 20 else b""
        if loc[:4] != b"PK\x06\x07":
            raise TraceError(f"{where}: not a readable {what} (broken zip64 end record)")
        f.seek(struct.unpack("<4sIQI", loc)[2])
        rec = f.read(56)
        if len(rec) < 56 or rec[:4] != b"PK\x06\x06":
            raise TraceError(f"{where}: not a readable {what} (broken zip64 end record)")
        members, cd_size = struct.unpack("<4sQHHIIQQQQ", rec)[7:9]
    return members, cd_size


def open_archive(
    path: str | os.PathLike, max_members: int, max_bytes: int = MAX_ARCHIVE_BYTES, what: str = "zip"
) -> zipfile.ZipFile:
    """A zip opened only after its size, its member count and its central directory's size (as its
    end record declares them) are within the caps; zipfile parses the directory after that."""
    where = os.path.basename(os.fspath(path))
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size > max_bytes:
                raise TraceError(f"{where}: {size:,} bytes, over the limit of {max_bytes:,} for an archive")
            members, cd_size = _end_record(f, size, where, what)
    except OSError as exc:
        raise TraceError(f"{where}: cannot read it ({exc.strerror or exc})") from None
    if members > max_members:
        raise TraceError(f"{where}: more than {max_members:,} members ({members:,}); not read")
    if cd_size > max(members, 1) * MAX_CD_ENTRY_BYTES:  # a directory longer than its count says
        raise TraceError(
            f"{where}: its directory of {cd_size:,} bytes is too long for {members:,} members; not read"
        )
    try:
        z = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError, struct.error) as exc:
        raise TraceError(f"{where}: not a readable {what} ({one_line(exc, 120)})") from None
    if len(z.infolist()) > max_members:
        z.close()
        raise TraceError(f"{where}: more than {max_members:,} members; not read")
    return z


def _zstd(raw: bytes, cap: int, where: str) -> bytes:
    try:
        import zstandard
    except ImportError:
        raise TraceError(f"{where}: zstd-compressed (inspect_ai's default); pip install zstandard") from None
    out, reader = bytearray(), zstandard.ZstdDecompressor().stream_reader(io.BytesIO(raw))
    try:
        while len(out) <= cap:
            chunk = reader.read(min(_PIECE, cap + 1 - len(out)))
            if not chunk:
                break
            out += chunk
    except zstandard.ZstdError as exc:
        raise TraceError(f"{where}: broken zstd data ({one_line(exc, 120)})") from None
    return bytes(out)


def _raw_member(f, info: zipfile.ZipInfo, where: str) -> bytes:
    """The stored (still compressed) bytes of a member: zipfile cannot open method 93 itself."""
    f.seek(info.header_offset)
    head = f.read(30)
    if len(head) < 30 or head[:4] != b"PK\x03\x04":
        raise TraceError(f"{where}: broken zip (no local header)")
    name_len, extra_len = struct.unpack("<HH", head[26:30])
    f.seek(info.header_offset + 30 + name_len + extra_len)
    return f.read(info.compress_size)


def read_member(
    z: zipfile.ZipFile, info: zipfile.ZipInfo, where: str, cap: int, budget: Budget | None = None
) -> bytes:
    """One member, decompressed, refused in one line past ``cap`` bytes (declared or real), and
    counted against ``budget`` (declared size before, real size after)."""
    where = f"{where}: {printable(info.filename[:80])}"  # a name may hold a newline or ESC
    if info.file_size > cap or info.compress_size > cap + 4096:
        raise TraceError(f"{where}: {info.file_size:,} bytes, over the limit of {cap:,} for one member")
    if budget is not None:
        budget.check(info.file_size, "a member")
    try:
        if info.compress_type == ZSTD:
            data = _zstd(_raw_member(z.fp, info, where), cap, where)
        else:
            with z.open(info) as m:
                data = m.read(cap + 1)  # stops at the cap, whatever the header claimed
    except (zipfile.BadZipFile, NotImplementedError, OSError, EOFError, ValueError) as exc:
        raise TraceError(f"{where}: cannot read it ({one_line(exc, 120)})") from None
    if len(data) > cap:
        raise TraceError(f"{where}: decompresses to more than the limit of {cap:,} bytes")
    if budget is not None:
        budget.take(len(data))
    return data
