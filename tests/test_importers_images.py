"""Reading images safely: escapes, size, decompression bombs, corrupt files."""

import hashlib
import io
import struct
import zlib

import pytest
from PIL import Image

from image_files import encode_image
from hallu_studio.images import (
    MAX_IMAGE_BYTES,
    ImageFolder,
    ImageRejected,
    image_from_bytes,
    read_image,
    resolve_inside,
)


def _jpeg(size=(32, 24), color="blue") -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", size, color).save(buf, format="JPEG")
    return buf.getvalue()


def _png_claiming(width: int, height: int) -> bytes:
    """A tiny PNG whose header claims ``width`` x ``height``: a decompression bomb's shape."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\0" * 64)) + chunk(b"IEND", b"")


def test_reads_a_good_image_with_hash_size_and_mime(tmp_path):
    data = _jpeg()
    (tmp_path / "a.jpg").write_bytes(data)
    img = read_image("a.jpg", tmp_path)
    assert (img.sha256, img.mime, img.width, img.height, img.data) == (
        hashlib.sha256(data).hexdigest(), "image/jpeg", 32, 24, data)


def test_path_traversal_is_refused(tmp_path):
    with pytest.raises(ImageRejected, match="escapes the dataset folder"):
        read_image("../../etc/passwd", tmp_path)
    with pytest.raises(ImageRejected, match="escapes"):
        resolve_inside(tmp_path, "/etc/passwd")


def test_symlink_out_of_the_folder_is_refused(tmp_path):
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    (tmp_path / "outside.jpg").write_bytes(_jpeg())
    (data_dir / "link.jpg").symlink_to(tmp_path / "outside.jpg")
    with pytest.raises(ImageRejected, match="escapes"):
        read_image("link.jpg", data_dir)
    folder = ImageFolder(data_dir)
    with pytest.raises(ImageRejected, match="escapes"):
        folder.load("link")


def test_file_over_the_size_limit_is_refused(tmp_path):
    (tmp_path / "big.jpg").write_bytes(_jpeg() + b"\0" * 2000)
    with pytest.raises(ImageRejected, match="over the limit"):
        read_image("big.jpg", tmp_path, max_bytes=1000)
    assert MAX_IMAGE_BYTES == 50 * 1024 * 1024


def test_decompression_bomb_is_refused_before_decoding(tmp_path):
    bomb = _png_claiming(200_000, 200_000)  # 40 gigapixels in a few dozen bytes
    assert len(bomb) < 200
    (tmp_path / "bomb.png").write_bytes(bomb)
    with pytest.raises(ImageRejected, match="decompression bomb"):
        read_image("bomb.png", tmp_path)
    with pytest.raises(ImageRejected, match="over the limit"):
        image_from_bytes(_jpeg((100, 100)), "small-limit.jpg", max_pixels=1000)


def test_pil_bomb_warning_is_a_refusal(monkeypatch):
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 100)  # PIL warns above this, errors above twice it
    with pytest.raises(ImageRejected, match="decompression bomb"):
        image_from_bytes(_jpeg((12, 12)), "warned.jpg")
    with pytest.raises(ImageRejected, match="decompression bomb"):
        image_from_bytes(_jpeg((40, 40)), "errored.jpg")


@pytest.mark.parametrize("payload, reason", [
    (b"this is not an image", "not a readable image"),
    (_jpeg((64, 64))[:300], "corrupt"),
    (_png_claiming(8, 8), "corrupt"),  # header fine, pixel data too short
])
def test_corrupt_or_unreadable_images_are_refused(payload, reason):
    with pytest.raises(ImageRejected, match=reason):
        image_from_bytes(payload, "x")


def test_image_folder_lists_once_and_finds_by_id_or_name_including_vg_subfolders(tmp_path):
    (tmp_path / "VG_100K").mkdir()
    (tmp_path / "VG_100K" / "17.jpg").write_bytes(_jpeg())
    (tmp_path / "18.png").write_bytes(encode_image(Image.new("RGB", (3, 3))).data)
    folder = ImageFolder(tmp_path)
    assert len(folder) == 2
    assert folder.load("17").width == 32 and folder.load("18.png").mime == "image/png"
    with pytest.raises(ImageRejected, match="not in"):
        folder.load("19")


def test_encode_image_png_and_jpeg():
    img = Image.new("RGBA", (5, 4), (255, 0, 0, 128))
    png, jpg = encode_image(img), encode_image(img, "jpeg")
    assert (png.mime, jpg.mime) == ("image/png", "image/jpeg")
    assert image_from_bytes(jpg.data, "j").sha256 == jpg.sha256
    with pytest.raises(ValueError, match="PNG or JPEG"):
        encode_image(img, "gif")
