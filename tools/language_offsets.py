"""Make e5's table of language offsets (calibration.py's `LanguageTable`) from CLDR's names.

A question embedded by multilingual-e5-small carries its language as well as its meaning: the
vector of a Chinese question lies, on average, a fixed step away from the vector of the same
question in English. Retrieval takes that step back before a question meets articles in another
language. The step of each language is measured here on parallel text that every language has:
the names CLDR (Unicode's locale data, Unicode licence, shipped by the `babel` package) gives
to the world's territories and languages, written in that language and in English, in runs of
eight names, embedded as questions; the offset is the mean of a language's vectors minus the
mean of the same runs in English. Beside each step the table keeps the language's centre, the
mean of its runs embedded as passages, which the relevance rule reads
(`Calibration.background`).

    python -m tools.language_offsets [--out FILE] [--languages de zh ...]

It prints each language's step (its length) as it goes and writes the table (by default the
one its calibration names, beside the model card).

It covers the languages the question identifier can name (py3langid) for which CLDR holds
names of most territories. The table belongs to the model it was made with: the file records
the export it was measured on, and a test measures two languages again with the running export.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from index.embedding.base import Embedder
from index.embedding.registry import MULTILINGUAL_E5_SMALL

__all__ = ["cldr_runs", "language_offset", "main"]

ENGLISH = "en"
RUN = 8  # names joined in one text: closer to a question's length than one name alone
# A locale with names for fewer territories than this has little of its own (it falls back on
# English or on nothing); its language gets no offset.
MIN_TERRITORIES = 200


def _names(code: str) -> dict[str, str]:
    """CLDR's names of territories and languages in language `code`, by kind and key."""
    from babel import Locale

    locale = Locale.parse(code)
    names = {f"t:{k}": v for k, v in locale.territories.items() if k.isalpha() and v}
    names.update({f"l:{k}": v for k, v in locale.languages.items() if v})
    return names


def cldr_runs(code: str) -> tuple[list[str], list[str]] | None:
    """Parallel texts in language `code` and in English: runs of names both have, in the same
    order; None where CLDR has too little for the language."""
    try:
        names = _names(code)
    except Exception:  # babel raises several kinds for a code it has no locale for
        return None
    if sum(k.startswith("t:") for k in names) < MIN_TERRITORIES:
        return None
    english = _names(ENGLISH)
    keys = sorted(k for k in names if k in english)
    runs = [keys[i : i + RUN] for i in range(0, len(keys), RUN)]
    return (
        [", ".join(names[k] for k in run) for run in runs],
        [", ".join(english[k] for k in run) for run in runs],
    )


def language_offset(embedder: Embedder, code: str) -> np.ndarray | None:
    """The mean step from English to language `code` of the embedder's question vectors."""
    texts = cldr_runs(code)
    if texts is None:
        return None
    own, english = texts
    vectors = embedder._start(own + english, query=True).result()
    return vectors[: len(own)].mean(0) - vectors[len(own) :].mean(0)


def language_centre(embedder: Embedder, code: str) -> np.ndarray | None:
    """The mean of the embedder's passage vectors of text in language `code` on no subject in
    particular (its names of things): what any question in the language meets by chance."""
    texts = cldr_runs(code if code != ENGLISH else "fr")  # English: the English side of a pair
    if texts is None:
        return None
    return embedder.encode_documents(texts[0] if code != ENGLISH else texts[1]).mean(0)


def identifier_languages() -> list[str]:
    """Every language py3langid can name."""
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    return sorted(set(LanguageIdentifier.from_model_file(MODEL_FILE).nb_classes) - {ENGLISH})


def main(argv: list[str] | None = None) -> int:
    from index.embedding.embedder import load_embedder
    from index.settings import Settings

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    table = MULTILINGUAL_E5_SMALL.calibration.languages
    assert table is not None
    parser.add_argument("--out", type=Path, default=table.path)
    parser.add_argument(
        "--data-dir", type=Path, help="data folder (default: $ARTICLEBOT_DATA_DIR or ./data)"
    )
    parser.add_argument(
        "--languages", nargs="+", metavar="CODE", help="only these (default: all py3langid names)"
    )
    args = parser.parse_args(argv)
    data_dir = args.data_dir or Settings.from_env().data_dir
    embedder = load_embedder(MULTILINGUAL_E5_SMALL.id, "onnx", data_dir / "models")
    english = language_centre(embedder, ENGLISH)
    assert english is not None
    languages, offsets, centres = [ENGLISH], [np.zeros_like(english)], [english]
    for code in args.languages or identifier_languages():
        offset = language_offset(embedder, code)
        centre = language_centre(embedder, code)
        if offset is None or centre is None:
            print(f"{code}: too few CLDR names, no offset", file=sys.stderr)
            continue
        languages.append(code)
        offsets.append(offset)
        centres.append(centre)
        print(f"{code}: step {np.linalg.norm(offset):.3f}", file=sys.stderr, flush=True)
    np.savez_compressed(
        args.out,
        languages=np.array(languages),
        offsets=np.stack(offsets).astype(np.float16),
        centres=np.stack(centres).astype(np.float16),
        model=np.array(Path(getattr(embedder, "folder", embedder.name)).name),
    )
    print(f"{len(languages)} languages -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
