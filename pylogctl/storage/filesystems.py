"""Log dirs in object storage and remote file systems: one layer over ``pyarrow.fs``.

A path given to a reading command may be a URL: ``s3://bucket/prefix``, ``gs://``
(``gcs://``), ``abfs://`` (``abfss://``), ``hdfs://`` (``viewfs://``), or ``file://`` (a local
path, read as any other). Everything remote goes through :func:`list_tree` (recursive
listings of a few prefixes at once, not one request per file) and :func:`read_range` /
:func:`read_whole` (ranged GETs), so the rest of pylogctl never touches a store's client.

Credentials and endpoints come only from each store's standard environment and config files,
never from pylogctl options: for S3 the AWS SDK's chain (``AWS_ACCESS_KEY_ID``,
``AWS_PROFILE``, ``~/.aws/credentials``, instance roles) and, for S3-compatible stores, the
endpoint of ``AWS_ENDPOINT_URL_S3`` or ``AWS_ENDPOINT_URL`` or the profile's ``endpoint_url``
in ``~/.aws/config`` (``AWS_CONFIG_FILE``), as the AWS CLI reads them; for GCS Google's
default credentials (``GOOGLE_APPLICATION_CREDENTIALS``...) or the emulator of
``STORAGE_EMULATOR_HOST``; for Azure the Azure CLI's ``AZURE_STORAGE_CONNECTION_STRING`` or
``AZURE_STORAGE_ACCOUNT`` with ``AZURE_STORAGE_KEY``/``AZURE_STORAGE_SAS_TOKEN``, else Azure's
default credential chain; for HDFS what pyarrow reads (``HADOOP_HOME``, ``CLASSPATH``).

Why pyarrow and not fsspec, measured against s3proxy on loopback (tests/s3_server.py; best of
3, 2-core machine): listing 5,000 keys under one prefix, 5 list requests either way, took
1.40 s with ``pyarrow.fs`` and 2.06 s with ``s3fs``; 16 ranged reads at random positions of a
64 MiB object took 12 / 14 / 29 / 122 ms with pyarrow for 4 KiB / 64 KiB / 1 MiB / 8 MiB each,
and 27 / 30 / 42 / 146 ms with s3fs (``cat_file`` or an unbuffered ``open``): pyarrow's C++
client costs half as much a request, and it is already the Spark engine's dependency where
s3fs would add aiobotocore's stack. ``bench/scan.py`` measures whole scans from the store.
"""

from __future__ import annotations

import configparser
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import unquote, urlparse

from ..errors import FileUnreadableError, UsageError

REMOTE_SCHEMES = ("s3", "gs", "gcs", "abfs", "abfss", "hdfs", "viewfs")
_fs_cache: dict[tuple[str, str], object] = {}
_lock = threading.Lock()
SPLIT_PREFIXES = 256  # at most this many top-level folders are listed one by one
PARALLEL_LISTINGS = 8
# seconds for a reply (the AWS SDK's default, 3 s, fails pages of a large prefix from a busy
# S3-compatible server, which reads every key under it for each page)
REQUEST_TIMEOUT = 60.0


def is_url(path: object) -> bool:
    """Whether ``path`` is a URL of a remote store (``file://`` URLs are local paths)."""
    return isinstance(path, str) and path.split("://", 1)[0].lower() in REMOTE_SCHEMES \
        and "://" in path


def local_path(path: str | os.PathLike[str]) -> str:
    """A ``file://`` URL as the local path it names; any other path unchanged."""
    path = os.fspath(path)
    if path.lower().startswith("file://"):
        parsed = urlparse(path)
        if parsed.netloc not in ("", "localhost"):
            raise UsageError(f"{path}: a file:// URL names a local path (file:///dir)")
        return unquote(parsed.path)
    return path


def join(url: str, *parts: str) -> str:
    return "/".join([url.rstrip("/"), *(p.strip("/") for p in parts)])


def _s3_endpoint() -> str | None:
    """The endpoint the AWS CLI would use: the S3 variable, the global one, then the
    profile's ``endpoint_url`` in the AWS config file."""
    for var in ("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"):
        if os.environ.get(var):
            return os.environ[var]
    config = os.environ.get("AWS_CONFIG_FILE", os.path.expanduser("~/.aws/config"))
    parser = configparser.ConfigParser()
    try:
        parser.read(config)
    except configparser.Error:
        return None
    profile = os.environ.get("AWS_PROFILE", "default")
    section = profile if profile == "default" else f"profile {profile}"
    return parser.get(section, "endpoint_url", fallback=None)


def _filesystem(url: str):
    """``(pyarrow file system, path inside it)`` for ``url``; one client per store."""
    try:
        import pyarrow.fs as pafs
    except ImportError:
        raise UsageError(f"{url}: reading URLs needs pyarrow "
                         f"(pip install 'pylogctl[remote]')") from None
    parsed = urlparse(url)
    scheme, bucket = parsed.scheme.lower(), parsed.netloc
    if not bucket:
        raise UsageError(f"{url}: the URL names no bucket or host ({scheme}://BUCKET/PREFIX)")
    key = (scheme, bucket)
    with _lock:
        fs = _fs_cache.get(key)
        if fs is None:
            try:
                if scheme == "s3":
                    region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
                    fs = pafs.S3FileSystem(endpoint_override=_s3_endpoint(), region=region,
                                           request_timeout=REQUEST_TIMEOUT)
                elif scheme in ("gs", "gcs"):
                    fs = _gcs(pafs)
                elif scheme in ("abfs", "abfss"):
                    fs = _azure(pafs, url, bucket)
                else:
                    fs = pafs.FileSystem.from_uri(f"{scheme}://{bucket}/")[0]
            except (OSError, ValueError, ImportError) as exc:
                raise FileUnreadableError(f"Cannot open {url}: {_reason(exc)}",
                                          path=url) from None
            _fs_cache[key] = fs
    inner = parsed.path.strip("/")
    if scheme in ("abfs", "abfss"):
        return fs, f"{bucket.split('@', 1)[0]}/{inner}"
    return fs, (f"{bucket}/{inner}" if scheme in ("s3", "gs", "gcs") else f"/{inner}")


def _gcs(pafs):
    """GCS with Google's default credentials, or the emulator ``STORAGE_EMULATOR_HOST`` names
    (as Google's client libraries read it: no credentials)."""
    emulator = os.environ.get("STORAGE_EMULATOR_HOST")
    if not emulator:
        return pafs.GcsFileSystem()
    endpoint = urlparse(emulator if "://" in emulator else f"http://{emulator}")
    return pafs.GcsFileSystem(anonymous=True, scheme=endpoint.scheme,
                              endpoint_override=endpoint.netloc)


def _azure(pafs, url: str, netloc: str):
    """Azure Blob Storage / ADLS Gen2 for ``abfs[s]://CONTAINER@ACCOUNT.dfs.core.windows.net``
    (Hadoop's form) or ``abfs://CONTAINER`` (the account from the environment), with the
    Azure CLI's variables: ``AZURE_STORAGE_CONNECTION_STRING`` (its ``BlobEndpoint`` points
    at an emulator such as Azurite), or ``AZURE_STORAGE_ACCOUNT`` with ``AZURE_STORAGE_KEY``
    or ``AZURE_STORAGE_SAS_TOKEN``; else Azure's default credential chain."""
    settings = dict(part.split("=", 1) for part in
                    os.environ.get("AZURE_STORAGE_CONNECTION_STRING", "").split(";") if "=" in part)
    host = netloc.partition("@")[2]
    account = host.split(".", 1)[0] if host else (settings.get("AccountName")
                                                  or os.environ.get("AZURE_STORAGE_ACCOUNT"))
    if not account:
        raise UsageError(f"{url}: name the storage account (abfs://CONTAINER@ACCOUNT.dfs.core."
                         f"windows.net/PATH) or set AZURE_STORAGE_ACCOUNT or "
                         f"AZURE_STORAGE_CONNECTION_STRING")
    if settings.get("AccountName", account) != account:
        settings = {}  # a connection string of another account
    options: dict[str, str] = {}
    key = settings.get("AccountKey") or os.environ.get("AZURE_STORAGE_KEY")
    sas = settings.get("SharedAccessSignature") or os.environ.get("AZURE_STORAGE_SAS_TOKEN")
    if key:
        options["account_key"] = key
    elif sas:
        options["sas_token"] = sas
    if settings.get("BlobEndpoint"):
        endpoint = urlparse(settings["BlobEndpoint"])
        options.update(blob_storage_authority=endpoint.netloc, blob_storage_scheme=endpoint.scheme,
                       dfs_storage_authority=endpoint.netloc, dfs_storage_scheme=endpoint.scheme)
    return pafs.AzureFileSystem(account, **options)


_NO_HDFS = ("HDFS needs a Java runtime and Hadoop's libhdfs (JAVA_HOME, HADOOP_HOME or "
            "ARROW_LIBHDFS_DIR, and Hadoop's jars in CLASSPATH)")


def _reason(exc: BaseException) -> str:
    """The one line worth showing of a store client's error."""
    text = " ".join(str(exc).split())
    for marker, say in (("NO_SUCH_BUCKET", "no such bucket"),
                        ("NoSuchBucket", "no such bucket"),
                        ("ACCESS_DENIED", "access denied (check the store's credentials)"),
                        ("AccessDenied", "access denied (check the store's credentials)"),
                        ("InvalidAccessKeyId", "the access key is not known to the store"),
                        ("SignatureDoesNotMatch", "the secret key does not match"),
                        ("SIGNATURE_DOES_NOT_MATCH", "the secret key does not match"),
                        ("NETWORK_CONNECTION", "cannot connect to the store's endpoint"),
                        ("Couldn't connect", "cannot connect to the store's endpoint"),
                        ("Could not resolve", "cannot resolve the store's endpoint"),
                        ("ContainerNotFound", "no such container"),
                        ("AuthenticationFailed", "the store refused the credentials"),
                        ("Unable to load libjvm", _NO_HDFS), ("Unable to load libhdfs", _NO_HDFS)):
        if marker in text:
            return say
    return text[:200]


def list_tree(url: str) -> dict[str, int]:
    """Every file below ``url``: relative path -> size.

    One listing of the top level, then, when it holds only folders, at most
    :data:`SPLIT_PREFIXES` of them (a copied cluster: one per broker's log dir), one
    recursive listing per folder, in parallel; else (a log dir: its own files and its
    partition dirs) one recursive listing of ``url``. A
    recursive listing costs a request per 1,000 keys; a store's listing of a prefix also
    takes time that grows with the keys under it (s3proxy reads them all for each page), so
    several smaller prefixes listed at once beat one large one."""
    import pyarrow.fs as pafs

    fs, root = _filesystem(url)
    prefix = root.rstrip("/") + "/"

    def listing(path: str, recursive: bool) -> list:
        try:
            return fs.get_file_info(pafs.FileSelector(path, recursive=recursive,
                                                      allow_not_found=True))
        except (OSError, ValueError) as exc:
            raise FileUnreadableError(f"Cannot list {url}: {_reason(exc)}",
                                      path=url) from None

    top = listing(root, False)
    folders = [i.path for i in top if i.type == pafs.FileType.Directory]
    if len(folders) > SPLIT_PREFIXES or len(folders) < len(top):
        infos = listing(root, True)
    else:
        infos = [i for i in top if i.type == pafs.FileType.File]
        with ThreadPoolExecutor(min(PARALLEL_LISTINGS, len(folders)) or 1) as pool:
            for found in pool.map(lambda path: listing(path, True), folders):
                infos += found
    files = {i.path[len(prefix):]: i.size for i in infos
             if i.type == pafs.FileType.File and i.path.startswith(prefix)}
    if not files:
        try:
            info = fs.get_file_info(root)
            store = fs.get_file_info(root.split("/", 1)[0]) if "/" in root else info
        except (OSError, ValueError) as exc:
            raise FileUnreadableError(f"Cannot list {url}: {_reason(exc)}", path=url) from None
        if info.type == pafs.FileType.File:
            return {"": info.size}
        if store.type == pafs.FileType.NotFound:
            what = "container" if url.lower().startswith("abfs") else "bucket"
            raise FileUnreadableError(f"Cannot list {url}: no such {what}", path=url)
        raise FileUnreadableError(f"No such file or directory: {url}", path=url)
    return files


def read_range(url: str, start: int, length: int) -> bytes:
    """``length`` bytes from ``start`` (fewer at the end of the object): a HEAD (pyarrow
    opens a file by asking its size) and one ranged GET."""
    return _read(url, lambda fs, path: _read_at(fs, path, start, length))


def read_whole(url: str) -> bytes:
    return _read(url, lambda fs, path: _read_stream(fs, path))


def _read_at(fs, path: str, start: int, length: int) -> bytes:
    with fs.open_input_file(path) as f:
        return f.read_at(length, start) if length > 0 else b""


def _read_stream(fs, path: str) -> bytes:
    with fs.open_input_stream(path) as f:
        return f.read()


def _read(url: str, read) -> bytes:
    """``read(file system, path)``, its errors as one line naming ``url``."""
    fs, path = _filesystem(url)
    try:
        return read(fs, path)
    except FileNotFoundError:
        raise FileUnreadableError(f"No such file: {url}", path=url) from None
    except (OSError, ValueError) as exc:
        raise FileUnreadableError(f"Cannot read {url}: {_reason(exc)}", path=url) from None


def size(url: str) -> int:
    import pyarrow.fs as pafs

    fs, path = _filesystem(url)
    try:
        info = fs.get_file_info(path)
    except (OSError, ValueError) as exc:
        raise FileUnreadableError(f"Cannot read {url}: {_reason(exc)}", path=url) from None
    if info.type != pafs.FileType.File:
        raise FileUnreadableError(f"No such file: {url}", path=url)
    return info.size
