"""BENCHMARKS.md's search-quality section, from the result's per-problem blocks only.

Each problem: its per-budget ratio table (the best peer at each point, the medians, the
ratio, the Wilcoxon p, the seeds raysweep is lower / equal / higher), every optimizer's
median at the whole budget in one line, and a link to its curves; every optimizer's table
of quartiles stays in the kept JSON. The targets and notes follow (harness/markdown.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

PROTOCOL_NOTE = (
    "Scored by [PROTOCOL.md](PROTOCOL.md): at each budget point the regret of the "
    "configuration each optimizer returns (raysweep: `sweep best` under the sweep's "
    "`rank_by`; a peer: its own incumbent; before it names one, the best value observed), "
    "the best peer chosen per point, the plain ratio of medians (raysweep's default over "
    "that peer's), the two-sided Wilcoxon signed-rank p of the paired seeds "
    '(`zero_method="zsplit"`) and the seeds where raysweep is lower / equal / higher. '
    "Peers run on a simulated clock, raysweep through `sweep run` on a real one: they are "
    "compared on the budget spent (fidelity steps), never on wall time."
)


def ratio_table(cells: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """One row per budget point of raysweep's default against the best peer there."""
    lines = ["| budget | best peer | its median | default's median | ratio | Wilcoxon p "
             "| lower / equal / higher | seeds |", "|---" * 8 + "|"]  # fmt: skip
    for point, c in cells.items():
        lines.append(f"| {point} | {c['best_peer'].removeprefix('peer: ')} "
                     f"| {c['peer_median']:.3g} | {c['median']:.3g} | {c['ratio']:.3g}x "
                     f"| {c['p']:.2g} | {c['lower']} / {c['equal']} / {c['higher']} "
                     f"| {c['seeds']} |")  # fmt: skip
    return lines


def problem_lines(problems: Mapping[str, Mapping[str, Any]], quick: bool) -> list[str]:
    """The section's body: the protocol in a sentence, then each problem's block."""
    lines = [PROTOCOL_NOTE, ""]
    for problem, block in problems.items():
        taken = f"; figures of {block['taken']}" if block.get("taken") else ""
        lines += [f"**{problem}** ({len(block['seeds'])} seeds, {block['full_evals']} "
                  f"full-fidelity evaluations' budget, {block['fidelity_steps']} fidelity "
                  f"steps each; scored default `{block['default']}`{taken}):", ""]  # fmt: skip
        if block["cells"]:
            lines += [*block["ratio_table"], ""]
        if block.get("final"):
            medians = sorted(block["final"].items(), key=lambda kv: (kv[1] is None, kv[1]))
            lines += ["Median regret at 100%, every optimizer: " + "; ".join(
                f"{k.split(': ', 1)[-1]} {'—' if v is None else format(v, '.3g')}"
                for k, v in medians) + ".", ""]  # fmt: skip
        if not quick:
            name = f"search_quality-{problem}.png"
            lines += [f"Curves (every optimizer's median and quartiles): "
                      f"[figures/{name}](figures/{name})", ""]  # fmt: skip
        lines += [f"> {note}" for note in block["notes"]]
        lines += [""] if block["notes"] else []
    return lines
