"""BENCHMARKS.md's search-quality section, from the result's per-problem blocks only.

One table of every problem's ratio at each budget point (the ratio of medians, the best
peer there, the Wilcoxon p, the seeds raysweep is lower / equal / higher), then a line
per problem: every optimizer's median at the whole budget and a link to its curves. Each
problem's own ratio table (with both medians) and every optimizer's table of quartiles
stay in the kept JSON. The targets follow in BENCHMARKS.md's Targets table.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

PROTOCOL_NOTE = (
    "Scored by [PROTOCOL.md](PROTOCOL.md): at each budget point the regret of the "
    "configuration each optimizer returns (raysweep: `sweep best` under the sweep's "
    "`rank_by`; a peer: its own incumbent), the best peer chosen per point, the plain ratio "
    "of medians (raysweep's default over that peer's), the two-sided Wilcoxon signed-rank p "
    "of the paired seeds and the seeds where raysweep is lower / equal / higher. Peers run "
    "on a simulated clock, raysweep through `sweep run` on a real one: they are compared on "
    "the budget spent (fidelity steps), never on wall time."
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


def ratio_cell(c: Mapping[str, Any]) -> str:
    """One budget point in the section's table: the ratio, the best peer there, the p-value
    and the seeds raysweep is lower / equal / higher."""
    return (f"{c['ratio']:.3g}x {c['best_peer'].removeprefix('peer: ')}, p {c['p']:.2g}, "
            f"{c['lower']}/{c['equal']}/{c['higher']}")  # fmt: skip


def problem_lines(problems: Mapping[str, Mapping[str, Any]], quick: bool) -> list[str]:
    """The section's body: the protocol in a sentence, one table of every problem's ratio
    at each budget point, then a list item per problem (its budget, every optimizer's
    median at the whole budget, its curves; when and how a carried-over one was taken) and
    its notes."""
    lines = [PROTOCOL_NOTE, ""]
    points = next((list(b["cells"]) for b in problems.values() if b["cells"]), [])
    if points:
        lines += ["| problem | seeds | scored default | " + " | ".join(points) + " |",
                  "|---" * (3 + len(points)) + "|"]  # fmt: skip
        for problem, block in problems.items():
            cells = [ratio_cell(block["cells"][p]) if p in block["cells"] else "—" for p in points]
            lines.append(f"| {problem} | {len(block['seeds'])} | `{block['default']}` | "
                         + " | ".join(cells) + " |")  # fmt: skip
        lines.append("")
    for problem, block in problems.items():
        taken = ""
        if block.get("taken"):  # carried over from an earlier result, not run again
            command = f", `{block['command']}`" if block.get("command") else ""
            taken = f"; figures of {block['taken']}{command}"
        line = (f"- **{problem}** ({block['full_evals']} full-fidelity evaluations' budget, "
                f"{block['fidelity_steps']} fidelity steps each{taken})")  # fmt: skip
        if block.get("final"):
            medians = sorted(block["final"].items(), key=lambda kv: (kv[1] is None, kv[1]))
            line += ": median regret at 100%, " + "; ".join(
                f"{k.split(': ', 1)[-1]} {'—' if v is None else format(v, '.3g')}"
                for k, v in medians)  # fmt: skip
        if not quick:
            name = f"search_quality-{problem}.png"
            line += f". Curves: [figures/{name}](figures/{name})"
        lines.append(line + ".")
        lines += [f"  > {note}" for note in block["notes"]]
    return [*lines, ""]
