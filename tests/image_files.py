"""Images the tests make: a PIL image encoded to PNG or JPEG bytes and wrapped as the store keeps an image
(``images.StoredImage``, keyed by the bytes' sha256). The package itself only reads images (``images.read_image``)."""

from __future__ import annotations

import hashlib
import io

from PIL import Image

from hallu_studio.images import StoredImage


def encode_image(image: Image.Image, fmt: str = "PNG", quality: int = 90) -> StoredImage:
    """Encode a PIL image (a generated sample, say) to PNG or JPEG bytes."""
    fmt = fmt.upper()
    if fmt not in ("PNG", "JPEG"):
        raise ValueError(f"encode_image writes PNG or JPEG, not {fmt}")
    buf = io.BytesIO()
    img = image.convert("RGB") if fmt == "JPEG" and image.mode not in ("RGB", "L") else image
    img.save(buf, format=fmt, **({"quality": quality} if fmt == "JPEG" else {}))
    data = buf.getvalue()
    return StoredImage(hashlib.sha256(data).hexdigest(), Image.MIME[fmt], image.width, image.height, data)
