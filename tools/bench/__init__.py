"""The developers' benchmarks of the core: each prints its figures, none asserts a time.

Run from a checkout (`.venv/bin/python -m tools.bench.NAME`); not in the wheel. The
`articlebot bench` command ships with the package, so what it runs lives there:
index/ops/index_bench.py (`--passages N`, one collection's dense search on either backend)
and index/ops/servers_bench.py (`--collections N`, many servers in one process). Some
read ../shared (squad_data.py) or the pages in tests/data:
- add_vs_plain: `articlebot add` as a whole process against plain sentence-transformers;
- backup: `articlebot backup` and `restore` of a data folder, and its indexes rebuilt instead;
- end_to_end: adding and asking SQuAD articles on each backend, stage by stage;
- extraction_quality: the article text taken from saved pages, against what a reader sees;
- int8_across_cpus: each int8 export on this CPU and under an emulated AVX2-only one (qemu);
- int8_kernels: int8 and float32 matrix products on this CPU;
- losses: where each answer of an evaluation file is lost (the quote, the ranking or the
  judgement), and what answering the declined ones would bring;
- models: the two embedding models side by side (`articlebot add` time, a question's memory);
- near_duplicates: near-duplicate lookups among 10,000 articles;
- overview: how often questions read as asking what an article is about (overview phrasings
  in languages the data does not hold, and every evaluation file's questions of fact);
- quotes: the quote rules on a grid, fitted on half of each file's articles, checked on the rest;
- segmenters: keyword search of Chinese in pairs of characters against jieba's words;
- summaries: the summaries in ROUGE against people's, beside lead-3 and LexRank, on the report
  part of ../shared/eval/summaries;
- summary_cost: `add` with and without its summary, and a stored summary shown (p50, p95);
- text_shapes: adversarial text (runs of marks, quotes, markup, unspaced scripts) against
  prose, in process, through `articlebot add -` and as questions;
- writer: what the writer's meaning floors let through (SQuAD train), and a real server's
  answers: the share written, why the rest fell back, the seconds added, its memory.

Drills that need the test harness (SimCord, the fault tools) live in tests/drills/: the kill
drill (`kill -9` during adds and rebuilds, concurrent adds, hostile files) and the bot's event
loop lag while it adds a large article.
"""
