"""e5's int8 runtime reads text with a SentencePiece model of the package's pieces (a few MB in
memory) rather than the `tokenizers` rebuild transformers loads (about 300 MB): the two must give
the same token ids, on a bundled sample in many scripts and on every XQuAD text (../shared)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from index.embedding import e5, e5_weights
from index.embedding.embedder import Embedder
from index.embedding.onnx_export import SENTENCEPIECE_FILE
from index.embedding.registry import MULTILINGUAL_E5_SMALL as E5
from index.embedding.runtimes import _Tokenizer

EVAL = Path(__file__).resolve().parents[3] / "shared" / "eval"  # ../shared beside the checkout

pytestmark = [
    pytest.mark.skipif(
        bool(E5.unavailable_reason()), reason=f"not on this machine: {E5.unavailable_reason()}"
    ),
    pytest.mark.slow,  # builds the 250,002-piece `tokenizers` tokenizer to compare with
]

# Scripts, marks and characters the package's normalisation map rewrites (full-width letters,
# ligatures, compatibility forms), as passages and questions reach the tokenizer: stripped.
SAMPLE = [
    "The council approved $18,000 for the renovation of the fire station in March.",
    "Der Stadtrat genehmigte im März 18.000 Dollar für die Renovierung der Feuerwache.",
    "市议会三月批准了一万八千美元用于翻修消防站。",
    "市議会は3月に消防署の改修費として1万8000ドルを承認した。",
    "시의회는 3월에 소방서 보수를 위해 18,000달러를 승인했다.",
    "وافق المجلس في مارس على 18 ألف دولار لتجديد محطة الإطفاء.",
    "מועצת העיר אישרה במרץ 18,000 דולר לשיפוץ תחנת הכיבוי.",
    "شورای شهر در اسفند ۱۸ هزار دلار برای نوسازی ایستگاه آتش‌نشانی تصویب کرد.",
    "В марте совет одобрил 18 000 долларов на ремонт пожарной части.",
    "Το συμβούλιο ενέκρινε τον Μάρτιο 18.000 δολάρια για την ανακαίνιση.",
    "नगर परिषद ने मार्च में दमकल केंद्र के नवीनीकरण के लिए 18,000 डॉलर मंजूर किए।",
    "நகர சபை மார்ச் மாதம் தீயணைப்பு நிலையத்தை புதுப்பிக்க 18,000 டாலர் ஒப்புதல் அளித்தது.",
    "สภาเมืองอนุมัติเงิน 18,000 ดอลลาร์เพื่อปรับปรุงสถานีดับเพลิงในเดือนมีนาคม",
    "Hội đồng đã phê duyệt 18.000 đô la vào tháng Ba để cải tạo trạm cứu hỏa.",
    "Ｆｕｌｌ－ｗｉｄｔｈ ＡＢＣ １２３, ﬁnance ﬂow, ½ cup, №5, Ⅻ, ㎏, ｶﾀｶﾅ, e\u0301te\u0301",
    "lol the council approved 18k 🎉🎉 for the reno!!! (edit: it was march)",
    "tabs\tand  double  spaces, a line\nbreak, and “curly” quotes — dashes…",
]


@pytest.fixture(scope="module")
def reference() -> Callable[[list[str]], list[list[int]]]:
    """The `tokenizers` Unigram tokenizer rebuilt from the package's file, as transformers
    loads it for the float32 model."""
    path = e5_weights.weights_file()
    assert path is not None
    packed = e5_weights._PackedModel(path)
    tokenizer = e5_weights._tokenizer(packed, e5_weights._charsmap(packed.normalization))
    return lambda texts: [e.ids for e in tokenizer.encode_batch(texts)]


@pytest.fixture(scope="module")
def scores() -> Any:
    path = e5_weights.weights_file()
    assert path is not None
    return e5_weights._PackedModel(path).scores


def _runtime(embedder: Embedder) -> Callable[[list[str]], list[list[int]]]:
    """The tokenizer the runtime reads the export's SentencePiece model with."""
    folder = getattr(embedder, "folder", None)
    if not isinstance(folder, Path) or embedder.name != e5.E5_MODEL_NAME:
        pytest.skip("the session's model is not e5's int8 export")
    return _Tokenizer(folder / SENTENCEPIECE_FILE)


def test_a_sample_in_many_scripts_gets_the_same_ids(
    embedder: Embedder, reference: Callable[[list[str]], list[list[int]]]
) -> None:
    assert _runtime(embedder)(SAMPLE) == reference(SAMPLE)


def _xquad_texts() -> list[str]:
    files = sorted(EVAL.glob("xquad.*.json"))
    if not files:
        pytest.skip("needs ../shared/eval/xquad.*.json, which is not beside this checkout")
    texts = []
    for path in files:
        for article in json.loads(path.read_text(encoding="utf-8"))["data"]:
            for paragraph in article["paragraphs"]:
                texts.append(paragraph["context"].strip())
                texts.extend(qa["question"].strip() for qa in paragraph["qas"])
    return texts


def test_every_xquad_text_gets_the_same_ids_but_for_exact_ties(
    embedder: Embedder, reference: Callable[[list[str]], list[list[int]]], scores: Any
) -> None:
    """11,440 texts in eight languages: all ids alike but where a word has two best
    segmentations of the very same score, either of which is the model's reading (one Arabic
    paragraph, measured: "تنحدر" as تن+حد+ر or as تن+ح+در)."""
    texts = _xquad_texts()
    ours, theirs = _runtime(embedder)(texts), reference(texts)
    differ = [i for i, (a, b) in enumerate(zip(ours, theirs, strict=True)) if a != b]
    for i in differ:
        assert len(ours[i]) == len(theirs[i]), texts[i][:80]
        assert sum(scores[ours[i][1:-1]]) == pytest.approx(
            sum(scores[theirs[i][1:-1]]), abs=1e-4
        ), texts[i][:80]
    assert len(differ) <= 1, [texts[i][:80] for i in differ]  # the one tie measured
