"""Near-duplicate articles: MinHash signatures over word shingles (datasketch, imported here only).

The same story from another address, a wire copy under another outlet's name, or a version with
a line changed shares most of its runs of five words with the stored one; the share of runs two
texts have in common (their Jaccard similarity) is what a MinHash signature estimates. Each
article's signature is stored with it, cut into bands (locality-sensitive hashing), so that a new
article is compared only with the few stored ones that agree with it on a whole band: looked up
in SQLite, at the same cost with ten articles or ten thousand.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

import numpy as np

__all__ = ["BANDS", "PERMUTATIONS", "ROWS", "SIMILAR", "Fingerprint", "fingerprint"]

PERMUTATIONS = 128
SHINGLE_WORDS = 5
# Texts sharing this much of their shingles are the same article. A one-line update of a
# 300-word story shares about 0.85 (128 permutations estimate it within about 0.03); two
# reports of one event by different reporters share under 0.1.
SIMILAR = 0.75
# 21 bands of 6 rows: an article that shares 0.75 with a stored one shares a whole band with
# it 99% of the times (1 - (1 - 0.75**6)**21), one that shares 0.3 only 2%; every candidate is
# then compared on its whole signature. (datasketch's MinHashLSH would choose 9 bands of 13
# rows for 0.8, which weighs missed pairs like false candidates and missed 38 of 100 updates.)
BANDS, ROWS = 21, 6

_WORD = re.compile(r"[^\W_]+")


@dataclass(frozen=True)
class Fingerprint:
    """An article's MinHash signature and the bucket of each of its bands."""

    signature: np.ndarray  # PERMUTATIONS uint32 values
    buckets: list[int]  # BANDS signed 64-bit keys, as SQLite stores integers

    def similarity(self, other: np.ndarray) -> float:
        """Estimated Jaccard similarity of the two articles' shingles."""
        return float(np.mean(self.signature == other))


def _shingles(paragraphs: list[str]) -> set[bytes]:
    words = [w.casefold() for p in paragraphs for w in _WORD.findall(p)]
    if len(words) <= SHINGLE_WORDS:
        return {" ".join(words).encode()}
    return {
        " ".join(words[i : i + SHINGLE_WORDS]).encode()
        for i in range(len(words) - SHINGLE_WORDS + 1)
    }


def fingerprint(paragraphs: list[str]) -> Fingerprint:
    """The article's signature: its words, in order, regardless of case, punctuation or breaks."""
    # Imported here: datasketch (through scipy) adds half a second to every command's start.
    from datasketch import MinHash

    minhash = MinHash(num_perm=PERMUTATIONS)
    minhash.update_batch(sorted(_shingles(paragraphs)))
    signature = np.asarray(minhash.hashvalues, dtype=np.uint32)
    buckets = [
        int.from_bytes(
            hashlib.blake2b(signature[b * ROWS : (b + 1) * ROWS].tobytes(), digest_size=8).digest(),
            "big",
            signed=True,
        )
        for b in range(BANDS)
    ]
    return Fingerprint(signature, buckets)
