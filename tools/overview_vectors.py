"""`python -m tools.overview_vectors`: the questions of fact that overview questions are told
apart from, and their vectors for the default model.

Writes index/summaries/overview-specific.json (1,500 questions drawn with a fixed seed from
SQuAD v1.1's training set, which a shipped model may be fitted on: ../shared/train) and
index/summaries/multilingual-e5-small-overview.npy (their query vectors and those of the
phrasings in overview-phrasings.json, float16), so that a process reads them rather than
embedding 1,600 questions at its first one. Another model embeds them at its first question.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

import numpy as np

from index.settings import Settings
from index.summaries.overview import SPECIFIC, digest, phrasings, vectors_file

TRAIN = Path("../shared/train/squad-v1.1-train.json")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1500)
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args()
    data = json.loads(TRAIN.read_text(encoding="utf-8"))["data"]
    questions = [qa["question"] for a in data for p in a["paragraphs"] for qa in p["qas"]]
    sample = random.Random(args.seed).sample(questions, args.count)
    SPECIFIC.write_text(
        json.dumps(
            {
                "about": f"{args.count} questions of SQuAD v1.1 train, seed {args.seed}",
                "questions": sample,
            },
            ensure_ascii=False,
            indent=0,
        ),
        encoding="utf-8",
    )
    library = Settings.from_env().library(Path("data/overview-vectors"))
    model = library.embedder
    overview, specific = phrasings()
    vectors = model.encode_queries(overview + specific).astype(np.float16)
    out = vectors_file(model.name)
    np.save(out, vectors)
    out.with_suffix(".digest").write_text(digest(overview + specific), encoding="utf-8")
    print(f"{len(overview)} overview and {len(specific)} specific phrasings -> {out}")


if __name__ == "__main__":
    main()
