"""Encode a PIL image as the JPEG bytes the store keeps (deterministic: same pixels, same bytes)."""

from __future__ import annotations

import hashlib
import io

from PIL import Image

from ..images import StoredImage

MAX_SIDE = 640
JPEG_QUALITY = 90


def fit_within(img: Image.Image, max_side: int = MAX_SIDE) -> Image.Image:
    """Shrink ``img`` so that its longest side is at most ``max_side`` (never enlarges)."""
    longest = max(img.size)
    if longest <= max_side:
        return img
    scale = max_side / longest
    return img.resize((round(img.width * scale), round(img.height * scale)), Image.Resampling.LANCZOS)


def encode_jpeg(img: Image.Image, quality: int = JPEG_QUALITY) -> StoredImage:
    """RGB JPEG bytes with no metadata, so the sha256 depends on the pixels only."""
    buf = io.BytesIO()
    img.convert("RGB").save(buf, format="JPEG", quality=quality, optimize=False, progressive=False)
    data = buf.getvalue()
    return StoredImage(sha256=hashlib.sha256(data).hexdigest(), mime="image/jpeg",
                       width=img.width, height=img.height, data=data)
