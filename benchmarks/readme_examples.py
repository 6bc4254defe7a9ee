"""Regenerate the printed output of the README's and the method pages' examples: run each on the
embedded model (SmolLM2-135M, the default) with a fresh cache and write what it prints into its page.

    python benchmarks/readme_examples.py                 # rewrite every page's output blocks
    python benchmarks/readme_examples.py --only README.md  # one page's
    python benchmarks/readme_examples.py --check         # print the outputs, change nothing

An output block in a page is a ```text block right after ``<!-- output: NAME -->``; its
first line is ``$ COMMAND`` (one of :data:`EXAMPLES`) and the rest is the command's stdout,
then ``(exit status N)`` where it is not 0. A page's commands run in one scratch folder, in
order, so an example may use what an earlier one built (the HotpotQA index).
tests/test_docs.py checks that every block shows the lines the command prints today.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

_LETTERS = ("'Take the letters at position 3 of the words in \"Seyyed Nayak Joseph\" and concatenate them "
            "using a semi-colon.'")
_INDEX = 'thoughtloom index build --corpus "$(thoughtloom data path hotpotqa)" --format hotpotqa --out idx/hotpot'

#: page -> {name: the command, as the page shows it}.
EXAMPLES = {
    "README.md": {
        "demo": "thoughtloom demo",
        "decomp": f"thoughtloom run decomp --task letter_cat {_LETTERS}",
        "index": _INDEX,
        "hgot": ('thoughtloom run hgot "Which sport has been played at the BayArena in Leverkusen, Germany, since '
                 '1958?" --task hotpotqa --index idx/hotpot --set samples=3 --gold football'),
        "sculpt": 'thoughtloom run sculpt-mcts --task game24 "4 9 10 13" --set rollouts=2',
    },
    "docs/decomp.md": {
        "decomp-controller": (f"thoughtloom run decomp --task letter_cat --set decomposer=reference "
                              f"--set handlers=symbolic {_LETTERS}"),
        "decomp-model": f"thoughtloom run decomp --task letter_cat {_LETTERS}",
        "decomp-eval": "thoughtloom eval --strategy decomp --task gsm8k --limit 2",
    },
    "docs/hgot.md": {
        "hgot-index": _INDEX,
        "hgot-run": ('thoughtloom run hgot "What sport is played by both Justin Gimelstob and Angelique Kerber?" '
                     "--task hotpotqa --index idx/hotpot --entail lexical --gold tennis"),
    },
    "docs/sculpt.md": {
        "sculpt-run": 'thoughtloom run sculpt-mcts --task game24 "4 9 10 13" --set rollouts=2',
    },
}

BLOCK = re.compile(r"(<!-- output: (\S+) -->\n```text\n)(.*?)(```)", re.S)


def run(command: str, folder: Path, env: dict[str, str]) -> str:
    """What ``command`` prints on stdout, with its exit status when it is not 0; ``thoughtloom`` is
    this checkout's, run as the installed script would run it."""
    here = command.replace("thoughtloom ", f"{shlex.quote(sys.executable)} -m thoughtloom ")
    done = subprocess.run(here, shell=True, cwd=folder, env=env, capture_output=True, text=True, timeout=1800)
    shown = f"$ {command}\n{done.stdout}"
    if done.returncode:
        shown += f"(exit status {done.returncode})\n"
    return shown


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="print the outputs; leave the pages as they are")
    parser.add_argument("--only", help="one page (e.g. README.md or docs/sculpt.md)")
    args = parser.parse_args()
    for page, examples in EXAMPLES.items():
        if args.only and page != args.only:
            continue
        outputs = {}
        with tempfile.TemporaryDirectory() as scratch:
            env = {**os.environ, "THOUGHTLOOM_CACHE": str(Path(scratch) / "cache.sqlite"),
                   "PYTHONPATH": str(REPO / "src")}
            for name, command in examples.items():
                outputs[name] = run(command, Path(scratch), env)
                print(outputs[name], flush=True)
        if args.check:
            continue
        path = REPO / page
        text = BLOCK.sub(lambda m: m.group(1) + outputs.get(m.group(2), m.group(3)) + m.group(4),
                         path.read_text(encoding="utf-8"))
        path.write_text(text, encoding="utf-8")
        print(f"wrote {len(outputs)} outputs into {page}", flush=True)


if __name__ == "__main__":
    main()
