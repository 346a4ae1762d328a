"""The training's steps, from the mined pairs (reader_pack.Packed): which groups each step
takes, and their pairs as tensors on the device."""

from __future__ import annotations

from typing import Any

import numpy as np

from tools.reader_pack import PAD, Packed
from tools.reader_start import rows_of

__all__ = ["SEED", "Batches"]

SEED = 13


class Batches:
    """Groups into steps: shuffled each pass, sorted by length within windows of 32 steps so a
    step pads little, the steps of a window shuffled again."""

    def __init__(self, packed: Packed, per_step: int, rows: np.ndarray) -> None:
        self.packed, self.per_step, self.rows = packed, per_step, rows
        self.lengths = np.array(
            [
                len(packed.questions[int(q)]) + len(packed.passages[int(p)])
                for q, p in zip(packed.group_question, packed.group_positive, strict=True)
            ]
        )

    def steps(self, epoch: int) -> list[np.ndarray]:
        rng = np.random.default_rng(SEED + epoch)
        order = rng.permutation(len(self.packed))
        window = 32 * self.per_step
        out: list[np.ndarray] = []
        for start in range(0, len(order), window):
            part = order[start : start + window]
            part = part[np.argsort(self.lengths[part], kind="stable")]
            chunk = [part[i : i + self.per_step] for i in range(0, len(part), self.per_step)]
            out += [chunk[i] for i in rng.permutation(len(chunk))]
        return out

    def tensors(self, groups: np.ndarray, device: Any) -> tuple[Any, Any, Any, Any, Any]:
        """Input ids (rows of the cut token table), mask, labels; for the ordering, each
        group's own pool (its positive and hard negatives) as places among the pairs, and
        which of those places are real (a group may have fewer negatives)."""
        import torch

        pairs: list[tuple[np.ndarray, float]] = []
        own = np.zeros((len(groups), 1 + self.packed.group_negatives.shape[1]), np.int64)
        real = np.zeros(own.shape, bool)
        for n, g in enumerate(groups):
            size = 1 + self.packed.negatives(int(g))
            own[n, :size] = len(pairs) + np.arange(size)
            real[n, :size] = True
            pairs += self.packed.group(int(g))
        width = max(len(ids) for ids, _ in pairs)
        ids = np.full((len(pairs), width), PAD, np.int64)
        mask = np.zeros((len(pairs), width), np.int64)
        for i, (row, _) in enumerate(pairs):
            ids[i, : len(row)] = rows_of(self.rows, row)
            mask[i, : len(row)] = 1
        labels = torch.tensor([y for _, y in pairs], dtype=torch.float32)
        ranked = real[:, 1:].any(1)
        return (
            torch.from_numpy(ids).to(device, non_blocking=True),
            torch.from_numpy(mask).to(device, non_blocking=True),
            labels.to(device),
            # Questions with no hard negative have no ordering to learn: left out here.
            torch.from_numpy(own[ranked]).to(device) if ranked.any() else None,
            torch.from_numpy(real[ranked]).to(device),
        )
