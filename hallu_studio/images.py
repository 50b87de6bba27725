"""Reading benchmark images safely, and encoding generated ones.

An image file is untrusted input: it may point outside its dataset folder (a
``../../etc/passwd`` path or a symlink), be huge, be a decompression bomb (a few
kilobytes that decode to gigapixels) or simply be corrupt. ``read_image`` refuses
each of those with an :class:`ImageRejected` whose message says why, and
otherwise returns a :class:`StoredImage` keyed by the sha256 of its bytes.

>>> from PIL import Image
>>> buf = io.BytesIO(); Image.new("RGB", (4, 3), "red").save(buf, format="PNG")
>>> img = image_from_bytes(buf.getvalue(), "red.png")
>>> (img.mime, img.width, img.height, len(img.sha256))
('image/png', 4, 3, 64)
"""

from __future__ import annotations

import hashlib
import io
import os
import warnings
from pathlib import Path

from dataclasses import dataclass

from PIL import Image, UnidentifiedImageError

MAX_IMAGE_BYTES = 50 * 1024 * 1024
# 100 megapixels: larger than any benchmark photo, far below what would exhaust memory when decoded.
MAX_IMAGE_PIXELS = 100_000_000
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".webp", ".bmp", ".gif")


@dataclass
class StoredImage:
    """An image as the store keeps it: its bytes, validated, under their sha256."""

    sha256: str
    mime: str
    width: int
    height: int
    data: bytes


class ImageRejected(ValueError):
    """An image that cannot be stored; the message names the file and the reason."""


def resolve_inside(root: str | os.PathLike[str], relative: str | os.PathLike[str]) -> Path:
    """``root / relative`` with symlinks resolved, refusing anything that lands outside ``root``.

    >>> resolve_inside("/data", "../../etc/passwd")
    Traceback (most recent call last):
    ...
    hallu_studio.images.ImageRejected: ../../etc/passwd: path escapes the dataset folder /data
    """
    base = Path(root).resolve()
    target = (base / relative).resolve()
    if target != base and base not in target.parents:
        raise ImageRejected(f"{relative}: path escapes the dataset folder {base}")
    return target


def image_from_bytes(data: bytes, name: str, *, max_pixels: int = MAX_IMAGE_PIXELS) -> StoredImage:
    """Validate encoded image bytes (size header, integrity, full decode) and wrap them."""
    try:
        with warnings.catch_warnings():
            # PIL only warns between MAX_IMAGE_PIXELS and twice that; treat the warning as a refusal.
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as probe:
                width, height = probe.size  # read from the header, nothing decoded yet
                fmt = probe.format
                if width * height > max_pixels:
                    raise ImageRejected(f"{name}: {width}x{height} pixels is over the limit of {max_pixels} "
                                        "(a decompression bomb?)")
                probe.verify()
            with Image.open(io.BytesIO(data)) as full:
                full.load()
    except ImageRejected:
        raise
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise ImageRejected(f"{name}: refused as a decompression bomb ({exc})") from exc
    except UnidentifiedImageError as exc:
        raise ImageRejected(f"{name}: not a readable image") from exc
    except (OSError, SyntaxError, ValueError, EOFError) as exc:
        raise ImageRejected(f"{name}: corrupt image ({exc})") from exc
    mime = Image.MIME.get(fmt or "", "application/octet-stream")
    return StoredImage(hashlib.sha256(data).hexdigest(), mime, int(width), int(height), data)


def read_image(path: str | os.PathLike[str], root: str | os.PathLike[str] | None = None, *,
               max_bytes: int = MAX_IMAGE_BYTES, max_pixels: int = MAX_IMAGE_PIXELS) -> StoredImage:
    """Read and validate one image file, refusing paths that escape ``root`` (when given)."""
    p = resolve_inside(root, path) if root is not None else Path(path)
    if not p.is_file():
        raise ImageRejected(f"{path}: no such image file")
    size = p.stat().st_size
    if size > max_bytes:
        raise ImageRejected(f"{path}: {size} bytes is over the limit of {max_bytes}")
    return image_from_bytes(p.read_bytes(), str(path), max_pixels=max_pixels)


def extension_for(mime: str) -> str:
    """The file extension used when an image is written out (export)."""
    return {"image/jpeg": ".jpg", "image/png": ".png", "image/webp": ".webp", "image/bmp": ".bmp",
            "image/gif": ".gif"}.get(mime, ".bin")


class ImageFolder:
    """A dataset's image folder, listed ONCE: image id (file stem) -> path.

    Listing once and looking ids up in a dict keeps a 20,000-question import from
    touching the disk per question. ``depth`` 1 also lists the immediate
    subfolders (Visual Genome's ``VG_100K`` / ``VG_100K_2`` layout).
    """

    def __init__(self, root: str | os.PathLike[str], depth: int = 1) -> None:
        self.root = Path(root)
        if not self.root.is_dir():
            raise FileNotFoundError(f"image folder {self.root} does not exist")
        self._by_stem: dict[str, str] = {}
        self._by_name: dict[str, str] = {}
        self._scan(self.root, depth)
        self._cache: dict[str, StoredImage | ImageRejected] = {}

    def _scan(self, folder: Path, depth: int) -> None:
        with os.scandir(folder) as entries:
            subfolders = []
            for e in entries:
                if e.is_dir():
                    subfolders.append(Path(e.path))
                elif e.name.lower().endswith(IMAGE_SUFFIXES):
                    rel = os.path.relpath(e.path, self.root)
                    self._by_stem.setdefault(os.path.splitext(e.name)[0], rel)
                    self._by_name.setdefault(e.name, rel)
        if depth > 0:
            for sub in sorted(subfolders):
                self._scan(sub, depth - 1)

    def __len__(self) -> int:
        return len(self._by_name)

    def locate(self, key: str) -> str | None:
        """The path (relative to the folder) of image ``key``: a file name or an id without extension."""
        return self._by_name.get(key) or self._by_stem.get(key) or self._by_stem.get(os.path.splitext(key)[0])

    def load(self, key: str) -> StoredImage:
        """The validated image ``key``; raises :class:`ImageRejected` (missing, unsafe, corrupt)."""
        if key not in self._cache:
            rel = self.locate(key)
            try:
                if rel is None:
                    raise ImageRejected(f"image {key!r} is not in {self.root}")
                self._cache[key] = read_image(rel, self.root)
            except ImageRejected as exc:
                self._cache[key] = exc
        found = self._cache[key]
        if isinstance(found, ImageRejected):
            raise found
        return found
