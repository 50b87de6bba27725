"""Fréchet Inception Distance between image domains (VISCON §4.2, Table 2).

FID fits a Gaussian to each set's Inception-v3 pool features and measures
``|mu1 - mu2|^2 + Tr(S1 + S2 - 2 (S1 S2)^(1/2))``. The distance itself is pure
numpy / scipy; the features need an Inception network with its weights
(``pytorch-fid`` or ``torchmetrics`` with ``torch-fidelity``), which is looked for
offline and reported missing otherwise: no stand-in network is used, since a FID
from other features would not be comparable with the paper's.

Worked example in one dimension: N(0, 1) against N(3, 4):
(0 - 3)^2 + 1 + 4 - 2 * sqrt(1 * 4) = 9 + 5 - 4 = 10.

>>> round(frechet_distance([0.0], [[1.0]], [3.0], [[4.0]]), 6)
10.0
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np
from scipy import linalg

FeatureFn = Callable[[Sequence[bytes]], np.ndarray]


def frechet_distance(mu1: Sequence[float], sigma1: Any, mu2: Sequence[float], sigma2: Any) -> float:
    m1, m2 = np.atleast_1d(np.asarray(mu1, dtype=float)), np.atleast_1d(np.asarray(mu2, dtype=float))
    s1, s2 = np.atleast_2d(np.asarray(sigma1, dtype=float)), np.atleast_2d(np.asarray(sigma2, dtype=float))
    covmean = linalg.sqrtm(s1 @ s2)
    if not np.isfinite(covmean).all():
        # A singular product: nudge both covariances, as the reference implementation does.
        offset = np.eye(s1.shape[0]) * 1e-6
        covmean = linalg.sqrtm((s1 + offset) @ (s2 + offset))
    covmean = np.real(covmean)
    return float(np.sum((m1 - m2) ** 2) + np.trace(s1) + np.trace(s2) - 2 * np.trace(covmean))


def features_fid(a: np.ndarray, b: np.ndarray) -> float:
    """FID between two feature matrices (rows are images); each needs at least two rows."""
    if len(a) < 2 or len(b) < 2:
        raise ValueError(f"FID needs at least two images on each side, got {len(a)} and {len(b)}")
    return frechet_distance(a.mean(axis=0), np.cov(a, rowvar=False), b.mean(axis=0), np.cov(b, rowvar=False))


def inception_features() -> tuple[FeatureFn | None, str]:
    """An Inception-v3 feature function from ``pytorch-fid`` when it and its weights load offline, else a reason."""
    try:
        import torch
        from pytorch_fid.inception import InceptionV3  # type: ignore[import-not-found]
    except ImportError:
        return None, ("FID not computed: it needs an Inception-v3 network with its weights (pip install pytorch-fid, "
                      "weights cached for offline use); pytorch-fid is not installed here")
    try:
        model = InceptionV3([InceptionV3.BLOCK_INDEX_BY_DIM[2048]]).eval()
    except Exception as exc:  # noqa: BLE001 - a missing download is reported, not raised
        return None, f"FID not computed: the Inception-v3 weights could not be loaded offline ({exc})"

    def features(images: Sequence[bytes]) -> np.ndarray:
        import io

        from PIL import Image

        batch = []
        for data in images:
            img = Image.open(io.BytesIO(data)).convert("RGB").resize((299, 299))
            batch.append(torch.from_numpy(np.asarray(img, dtype=np.float32) / 255.0).permute(2, 0, 1))
        with torch.no_grad():
            return model(torch.stack(batch))[0].squeeze(-1).squeeze(-1).numpy()

    return features, "FID from pytorch-fid's Inception-v3 (2048-d pool features)"
