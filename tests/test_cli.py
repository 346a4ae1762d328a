"""The `articlebot` command line: help texts, JSON contracts, exit codes, clean errors."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

from index import Library
from index.cli import build_parser, main


def run(library: Library, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv), library=library)
    out, err = capsys.readouterr()
    return code, out, err


def test_every_command_and_option_has_help_text() -> None:
    parser = build_parser()
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    helps = {c.dest: c.help for c in subparsers._choices_actions}
    for name, sub in subparsers.choices.items():
        assert helps.get(name), f"{name} has no help text"
        for action in sub._actions:
            assert action.help, f"{name} {action.option_strings or action.dest} has no help"


def test_add_ask_list_stats_remove_in_json(
    sample_path: Path, library: Library, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(library, capsys, "add", str(sample_path), "--json")
    assert code == 0
    added = json.loads(out)
    assert added["added"] is True and added["paragraphs"] == 14 and added["skipped_lines"] == 6

    code, out, _ = run(library, capsys, "add", str(sample_path), "--json")
    assert json.loads(out)["added"] is False

    code, out, _ = run(library, capsys, "ask", "Which judge awarded the damages?", "--json")
    answer = json.loads(out)
    assert set(answer) == {
        "question",
        "answer",
        "abstained",
        "citations",
        "written_by",
        "writer_fallback",
    }
    assert answer["abstained"] is False and "Kuntz" in answer["answer"]
    # No writer configured: the extractive answer, saying so.
    assert (answer["written_by"], answer["writer_fallback"]) == (None, "not configured")
    citation = answer["citations"][0]
    assert {"n", "article_id", "title", "url", "paragraph", "text", "quote", "score"} <= set(
        citation
    )
    assert citation["n"] == 1 and citation["paragraph"] == 10

    code, out, _ = run(
        library, capsys, "ask", "Which judge awarded the damages?", "--top-k", "2", "--json"
    )
    assert len(json.loads(out)["citations"]) == 2

    code, out, _ = run(library, capsys, "list", "--json")
    articles = json.loads(out)
    assert len(articles) == 1 and articles[0]["title"].startswith("Border czar")

    code, out, _ = run(library, capsys, "stats", "--json")
    stats = json.loads(out)
    assert (stats["articles"], stats["passages"], stats["indexed"]) == (1, 14, 14)
    assert stats["model"] == library.embedder.name  # the default model, e5 where it runs

    code, out, _ = run(library, capsys, "remove", str(articles[0]["id"]), "--json")
    assert code == 0
    code, out, _ = run(library, capsys, "stats", "--json")
    assert json.loads(out)["articles"] == 0


def test_human_answer_shows_numbered_sources(
    sample_path: Path, library: Library, capsys: pytest.CaptureFixture[str]
) -> None:
    run(library, capsys, "add", str(sample_path))
    code, out, _ = run(library, capsys, "ask", "What did Hochul call the lawsuits?")
    assert code == 0
    assert "publicity stunt" in out
    assert "Sources:" in out and "[1] Border czar Tom Homan" in out and "¶13" in out


def test_ask_batch_answers_one_json_line_per_question(
    sample_path: Path, library: Library, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    run(library, capsys, "add", str(sample_path))
    batch = tmp_path / "questions.jsonl"
    batch.write_text(
        json.dumps({"question": "Who announced the lawsuits?", "collection": "default"})
        + "\n"
        + json.dumps({"question": "Who announced the lawsuits?", "collection": "elsewhere"})
        + "\n"
    )
    code, out, _ = run(library, capsys, "ask", "--batch", str(batch), "--json")
    assert code == 0
    lines = [json.loads(line) for line in out.splitlines()]
    assert len(lines) == 2
    assert "Bondi" in lines[0]["answer"]
    assert lines[1]["abstained"] is True  # that collection has no articles


def test_stdin_article_takes_its_first_line_as_title(
    library: Library, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    monkeypatch.setattr(
        sys, "stdin", io.StringIO("Pasted headline\n\nThe first paragraph of the pasted text.\n")
    )
    code, out, _ = run(library, capsys, "add", "-", "--json")
    assert code == 0 and json.loads(out)["title"] == "Pasted headline"


def test_errors_are_one_line_with_nonzero_exit(
    sample_path: Path, library: Library, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    run(library, capsys, "add", str(sample_path))
    (tmp_path / "empty.txt").write_text("")
    (tmp_path / "blob.txt").write_bytes(b"\x00\x01\x02\xff" * 500)
    for argv in (
        ["add", str(tmp_path / "empty.txt")],
        ["add", str(tmp_path / "blob.txt")],
        ["add", str(tmp_path / "nope.txt")],
        ["remove", "999"],
        ["ask", "   "],
    ):
        code, out, err = run(library, capsys, *argv)
        assert code == 1, argv
        assert err.startswith("error: ") and err.count("\n") == 1, err
    code, out, _ = run(library, capsys, "list", "--json")
    assert len(json.loads(out)) == 1


def test_adding_several_files_reports_each_in_order_and_keeps_them_apart(
    sample_path: Path, library: Library, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """One command, several inputs: the next article is read while the one before embeds."""
    demo = Path(__file__).resolve().parents[1] / "index" / "demo" / "tool-library.md"
    inputs = [str(sample_path), str(tmp_path / "missing.txt"), str(demo), str(sample_path)]
    code, out, _ = run(library, capsys, "add", *inputs, "--json")
    lines = [json.loads(line) for line in out.splitlines()]
    assert code == 1, "one input failed"
    assert [line["input"] for line in lines] == inputs
    assert lines[0]["added"] is True and lines[2]["added"] is True
    assert "error" in lines[1] and "missing.txt" in lines[1]["error"]
    assert lines[3]["added"] is False and lines[3]["article_id"] == lines[0]["article_id"]

    # Each article's vectors stayed with its own passages: each question finds its article.
    for question, article in (
        ("Which judge awarded the damages?", lines[0]),
        ("How much did the council approve for the renovation?", lines[2]),
    ):
        code, out, _ = run(library, capsys, "ask", question, "--json")
        cited = json.loads(out)["citations"][0]
        assert cited["article_id"] == article["article_id"], question
    code, out, _ = run(library, capsys, "stats", "--json")
    stats = json.loads(out)
    assert stats["articles"] == 2 and stats["indexed"] == stats["passages"]


@pytest.mark.slow  # another process
def test_installed_command_fails_without_traceback(tmp_path: Path) -> None:
    """The real process, as a user runs it: bad input ends with one line and exit code 1."""
    exe = Path(sys.executable).with_name("articlebot")
    result = subprocess.run(
        [str(exe), "add", str(tmp_path / "missing.txt"), "--data-dir", str(tmp_path / "d")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert (
        result.stderr.strip()
        == f"error: {tmp_path / 'missing.txt'}: No such file: "
        + str(tmp_path / "missing.txt")
        + "; check the path."
    )


def test_chat_answers_question_after_question(
    sample_path: Path,
    library: Library,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import io

    run(library, capsys, "add", str(sample_path))
    monkeypatch.setattr(
        sys, "stdin", io.StringIO("Which judge awarded the damages?\nWho announced the lawsuits?\n")
    )
    code, out, _ = run(library, capsys, "chat")
    assert code == 0
    assert "Kuntz" in out and "Bondi" in out
    assert out.count("Sources:") == 2


def test_chat_carries_a_follow_up_on_from_the_question_before(
    library: Library, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    from test_conversations import LYON, WARSAW

    collection = library.collection()
    collection.add_text(WARSAW, title="Scholz in Poland")
    collection.add_text(LYON, title="Lyon mayor at the climate summit")
    monkeypatch.setattr(sys, "stdin", io.StringIO("who visited Warsaw?\nwhy did he go there?\n"))
    code, out, _ = run(library, capsys, "chat")
    assert code == 0
    answers = out.split("? ")[1:]  # each answer follows its prompt
    assert "Scholz" in answers[0]
    assert "energy agreement" in answers[1] and "Scholz in Poland, ¶2" in answers[1]
    assert "Lyon" not in answers[1]
