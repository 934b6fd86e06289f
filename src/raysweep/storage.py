"""Where run directories live: a local directory, or a URI that Ray Tune's storage understands.

``--storage`` is a local path (a shared filesystem is a local path on every
node) or a URI: ``s3://bucket/prefix``, ``gs://bucket/prefix``, or any other
scheme pyarrow.fs or fsspec knows. A URI is opened the way Ray Tune opens its
``storage_path`` (``pyarrow.fs.FileSystem.from_uri``, so query options work:
``s3://bucket/runs?endpoint_override=127.0.0.1:9000&scheme=http``), and S3's
endpoint, region and credentials also come from the standard AWS variables
(``AWS_ENDPOINT_URL``, ``AWS_ACCESS_KEY_ID``, ...). Ray Tune gets the very same
filesystem object (``RunConfig(storage_filesystem=...)``).

Two stores with one interface, both used through ``RunDir``: :class:`LocalStore`
(temp file + rename) and :class:`FsStore` (a pyarrow filesystem; an object
store's PUT is atomic by itself). pyarrow is imported only for a URI, so the
read-only commands on local runs stay as fast as before.
"""

from __future__ import annotations

import hashlib
import json
import os
import posixpath
import socket
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from raysweep.errors import ConfigError, SweepError
from raysweep.jsonio import write_json_atomic

STAGING_ENV = "RAYSWEEP_STAGING_DIR"  # where remote runs keep their local files
MARKER = ".raysweep-storage-check"
OBJECT_STORES = ("s3", "gcs")  # pyarrow's type_name of filesystems whose writes need no parents


class StorageError(SweepError):
    """Remote storage failed while a command was reading or writing it."""

    def __init__(self, message: str, reason: str = "") -> None:
        super().__init__(message)
        self.reason = reason or message  # the storage's own words


def is_uri(text: str | os.PathLike[str]) -> bool:
    """Whether ``text`` names remote storage (``scheme://...``; ``file://`` is a local path)."""
    value = os.fspath(text)
    scheme = urlsplit(value).scheme if "://" in value else ""
    return len(scheme) > 1 and scheme != "file"


def local_path(text: str | os.PathLike[str]) -> Path:
    """A local path given plainly or as ``file:///...``."""
    value = os.fspath(text)
    return Path(urlsplit(value).path) if value.startswith("file://") else Path(value)


@dataclass(frozen=True)
class Location:
    """A place on remote storage: its URI (as shown and accepted back), filesystem and path."""

    uri: str
    fs: Any  # pyarrow.fs.FileSystem
    path: str  # the path on ``fs`` (no scheme): what Ray calls the stripped storage path

    @property
    def name(self) -> str:
        return posixpath.basename(self.path.rstrip("/"))

    def child(self, name: str) -> Location:
        """The location ``name`` below this one (the URI keeps its query options)."""
        parts = urlsplit(self.uri)
        path = posixpath.join(parts.path or "/", name)
        return Location(
            urlunsplit(parts._replace(path=path)), self.fs, posixpath.join(self.path, name)
        )

    def parent(self) -> Location:
        """The location this one is in (a bucket's root is its own parent)."""
        parts = urlsplit(self.uri)
        path = posixpath.dirname(parts.path.rstrip("/"))
        fs_path = posixpath.dirname(self.path) or self.path
        return Location(urlunsplit(parts._replace(path=path)), self.fs, fs_path)

    def endpoint(self) -> str:
        """Who answers for this location, for error messages."""
        parts = urlsplit(self.uri)
        query = dict(p.split("=", 1) for p in parts.query.split("&") if "=" in p)
        if parts.scheme in ("s3", "s3a"):
            found = (
                query.get("endpoint_override")
                or os.environ.get("AWS_ENDPOINT_URL_S3")
                or os.environ.get("AWS_ENDPOINT_URL")
            )
            return f"endpoint {found}" if found else "AWS's default S3 endpoint"
        return f"{parts.scheme} storage"


def open_location(uri: str) -> Location:
    """The filesystem and path of ``uri`` (ConfigError naming it when no filesystem fits)."""
    import pyarrow
    import pyarrow.fs

    parts = urlsplit(uri)
    uri = urlunsplit(parts._replace(path=parts.path.rstrip("/")))
    try:
        fs, path = pyarrow.fs.FileSystem.from_uri(uri)
    except (pyarrow.ArrowInvalid, ValueError) as first:
        try:
            import fsspec

            spec_fs, path = fsspec.core.url_to_fs(uri)
            fs = pyarrow.fs.PyFileSystem(pyarrow.fs.FSSpecHandler(spec_fs))
        except Exception:
            raise ConfigError(f"--storage {uri}: no filesystem for this URI ({first})") from None
    except OSError as exc:
        raise ConfigError(f"--storage {uri}: cannot open it ({exc})") from None
    return Location(uri, fs, str(path).rstrip("/"))


def staging_dir(location: Location) -> Path:
    """The local directory of a remote run: its lock, logs before upload, GPU probe.

    ``$RAYSWEEP_STAGING_DIR`` (default ``~/.cache/raysweep/staging``), then a key
    of the URI, then the run's name. Deleting it loses nothing the storage holds.
    """
    root = os.environ.get(STAGING_ENV)
    if not root:
        cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        root = str(Path(cache) / "raysweep" / "staging")
    key = hashlib.sha256(location.uri.encode("utf-8")).hexdigest()[:16]
    return Path(root) / key / location.name


class LocalStore:
    """A run directory on the local filesystem; every write is a temp file + rename."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def __str__(self) -> str:
        return str(self.root)

    def read_bytes(self, rel: str) -> bytes | None:
        try:
            return (self.root / rel).read_bytes()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            return None

    def write_bytes(self, rel: str, data: bytes) -> None:
        target = self.root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.{uuid.uuid4().hex[:8]}.tmp")
        try:
            tmp.write_bytes(data)
            os.replace(tmp, target)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise

    def write_json(self, rel: str, data: Any) -> None:
        write_json_atomic(self.root / rel, data)

    def kind(self, rel: str = "") -> str | None:
        """``"file"``, ``"dir"`` or None (absent)."""
        path = self.root / rel
        return "file" if path.is_file() else "dir" if path.is_dir() else None

    def names(self, rel: str = "") -> list[str]:
        """Names directly under ``rel`` (sorted; [] when absent)."""
        path = self.root / rel
        return sorted(p.name for p in path.iterdir()) if path.is_dir() else []

    def mtime(self, rel: str = "") -> float | None:
        path = self.root / rel
        return path.stat().st_mtime if path.exists() else None


class FsStore:
    """A run directory on a pyarrow filesystem (S3, GCS, ...), named by its URI."""

    def __init__(self, location: Location) -> None:
        self.location = location
        self._made: set[str] = set()

    def __str__(self) -> str:
        return self.location.uri

    def fs_path(self, rel: str = "") -> str:
        """The path of ``rel`` on the filesystem."""
        return posixpath.join(self.location.path, rel) if rel else self.location.path

    def _failed(self, action: str, rel: str, exc: Exception) -> StorageError:
        uri = self.location.child(rel).uri if rel else self.location.uri
        message = f"cannot {action} {uri} ({self.location.endpoint()}): {exc}"
        return StorageError(message, str(exc))

    def read_bytes(self, rel: str) -> bytes | None:
        try:
            with self.location.fs.open_input_stream(self.fs_path(rel)) as stream:
                return bytes(stream.read())
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise self._failed("read", rel, exc) from None

    def write_bytes(self, rel: str, data: bytes) -> None:
        path = self.fs_path(rel)
        try:
            parent = posixpath.dirname(path)
            if parent not in self._made and self.location.fs.type_name not in OBJECT_STORES:
                self.location.fs.create_dir(parent, recursive=True)  # no directories in a bucket
                self._made.add(parent)
            with self.location.fs.open_output_stream(path) as stream:
                stream.write(data)
        except OSError as exc:
            raise self._failed("write", rel, exc) from None

    def write_json(self, rel: str, data: Any) -> None:
        self.write_bytes(rel, (json.dumps(data, indent=2, default=str) + "\n").encode("utf-8"))

    def _info(self, rel: str) -> Any:
        try:
            return self.location.fs.get_file_info(self.fs_path(rel))
        except OSError as exc:
            raise self._failed("read", rel, exc) from None

    def kind(self, rel: str = "") -> str | None:
        """``"file"``, ``"dir"`` or None (absent)."""
        import pyarrow.fs

        kind = self._info(rel).type
        if kind == pyarrow.fs.FileType.File:
            return "file"
        return "dir" if kind == pyarrow.fs.FileType.Directory else None

    def names(self, rel: str = "") -> list[str]:
        """Names directly under ``rel`` (sorted; [] when absent)."""
        return sorted(posixpath.basename(info.path) for info in self.infos(rel, recursive=False))

    def infos(self, rel: str = "", recursive: bool = True) -> list[Any]:
        """pyarrow FileInfo of everything under ``rel`` ([] when absent)."""
        import pyarrow.fs

        selector = pyarrow.fs.FileSelector(
            self.fs_path(rel), allow_not_found=True, recursive=recursive
        )
        try:
            return list(self.location.fs.get_file_info(selector))
        except OSError as exc:
            raise self._failed("list", rel, exc) from None

    def size(self, rel: str) -> int | None:
        """Bytes in the file ``rel`` (None when it is not a file)."""
        import pyarrow.fs

        info = self._info(rel)
        return int(info.size) if info.type == pyarrow.fs.FileType.File else None

    def mtime(self, rel: str = "") -> float | None:
        info = self._info(rel)
        return info.mtime.timestamp() if info.mtime is not None else None

    def delete(self, rel: str) -> None:
        """Delete a file or a directory tree (absent: nothing to do)."""
        kind = self.kind(rel)
        try:
            if kind == "dir":
                self.location.fs.delete_dir(self.fs_path(rel))
            elif kind == "file":
                self.location.fs.delete_file(self.fs_path(rel))
        except FileNotFoundError:
            return
        except OSError as exc:
            raise self._failed("delete", rel, exc) from None


def check_storage(location: Location) -> None:
    """Write, read back and delete a marker at ``location``; ConfigError naming it on failure."""
    store = FsStore(location)
    name = f"{MARKER}-{socket.gethostname()}-{os.getpid()}"
    token = uuid.uuid4().hex.encode("ascii")
    try:
        store.write_bytes(name, token)
        back = store.read_bytes(name)
        store.delete(name)
    except StorageError as exc:
        raise ConfigError(
            f"--storage {location.uri}: the storage cannot be reached or written "
            f"({location.endpoint()}): {exc.reason}. Nothing was written; "
            "check the URI, the endpoint and the credentials"
        ) from None
    if back != token:
        raise ConfigError(
            f"--storage {location.uri}: a marker written there read back "
            f"{'nothing' if back is None else 'different bytes'} ({location.endpoint()}); "
            "the storage is not usable for runs"
        )
