"""``gis-sw rules``: the table of every rule (id, citation, title), plain or Markdown."""

from __future__ import annotations

import click

from gis_sw.cli import options


def rule_rows(ruleset_name: str | None = None) -> list[tuple[str, str, str]]:
    """Return (id, citation, title) of every rule, citations from the ruleset.

    Raises
    ------
    RulesetError
        If the ruleset cannot be loaded or lacks a citation.
    """
    from gis_sw.analysis.registry import RULES, rule_title
    from gis_sw.ruleset import load_ruleset

    ruleset = load_ruleset(ruleset_name)
    rows = []
    for rule in RULES:
        title = rule_title(rule, ruleset)
        title = title if rule.town_law else f"{title} [not town law]"
        rows.append((rule.rule_id, ruleset.citation(rule.rule_id), title))
    return rows


def markdown_table(rows: list[tuple[str, str, str]]) -> str:
    """Return the rows as a Markdown table (the README's rule table)."""
    lines = ["| id | citation | title |", "|---|---|---|"]
    lines += [f"| {i} | {c} | {t.replace('|', '/')} |" for i, c, t in rows]
    return "\n".join(lines)


def plain_table(rows: list[tuple[str, str, str]]) -> str:
    """Return the rows as aligned plain text, under a header line."""
    header = ("ID", "CITATION", "TITLE")
    width_id = max(len(r[0]) for r in [header, *rows])
    width_cite = min(max(len(r[1]) for r in [header, *rows]), 40)
    return "\n".join(
        f"{i:<{width_id}}  {c:<{width_cite}}  {t}".rstrip() for i, c, t in [header, *rows]
    )


@click.command("rules")
@click.option("--markdown", is_flag=True, help="Print a Markdown table (for the docs).")
@options.ruleset_opt
def command(markdown: bool, ruleset_name: str | None) -> None:
    """List every rule: id, citation (from the ruleset), title."""
    rows = rule_rows(ruleset_name)
    click.echo(markdown_table(rows) if markdown else plain_table(rows))
