"""`gpu-advisor recommend` (one turn, JSON or rich) and `gpu-advisor chat` (interactive, threads, streaming)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich import box
from rich.table import Table

from cli.output import UserError, console, print_json

if TYPE_CHECKING:
    from agent.service import Advisor

EXIT_WORDS = frozenset({"exit", "quit", "esci", "keluar", ":q"})
TABLE_ROWS = 5


BREAK_AFTER = re.compile(r"[^-_./ ]*(?:[-_./]| +)|[^-_./ ]+")
MARK = "▶ "
MARK_PAD = " " * len(MARK)


def wrap_name(text: str, width: int) -> list[str]:
    """Lines of at most `width` cells, broken only after `_ - . /` or a space (a longer run is folded as a last resort)."""
    lines: list[str] = []
    line = ""
    for piece in BREAK_AFTER.findall(text):
        if line and len((line + piece).rstrip()) > width:
            lines.append(line.rstrip())
            line = ""
        line += piece
        while len(line.rstrip()) > width:
            lines.append(line[:width])
            line = line[width:]
    if line.strip() or not lines:
        lines.append(line.rstrip())
    return lines


def _region(offer: dict[str, Any]) -> str:
    """The offer's region, "-" when the catalog does not name one."""
    return offer.get("region") or "-"


def _where(offer: dict[str, Any]) -> str:
    """ "provider · region"."""
    return f"{offer['provider']} · {_region(offer)}"


def _place_lines(offer: dict[str, Any], width: int) -> list[str]:
    """ "provider · region" then the full instance name, each wrapped to `width` without breaking a word."""
    where = _where(offer)
    head = (
        [where]
        if len(where) <= width
        else wrap_name(offer["provider"], width) + wrap_name(f"· {_region(offer)}", width)
    )
    return head + wrap_name(offer["instance_type"], width)


def _recommended(result: dict[str, Any], offer: dict[str, Any]) -> bool:
    """Whether this offer is the one the verdict recommends."""
    verdict = result.get("verdict") or {}
    return (
        verdict.get("provider"),
        verdict.get("instance"),
        verdict.get("region"),
        verdict.get("spot"),
        verdict.get("count"),
    ) == (
        offer.get("provider"),
        offer.get("instance_type"),
        offer.get("region"),
        offer.get("spot"),
        offer.get("total_gpus"),
    )


def _recommendation_word(language: str) -> str:
    """The localised word the headline opens with ("Consiglio", "Rekomendasi", "Recommendation")."""
    from agent.writing import templates

    found = re.match(r"\*\*(.+?):\*\*", templates(language).get("headline", ""))
    return found.group(1) if found else ""


def _table(title: str, headers: list[str], labels: dict[str, str], rows: list[tuple[str, ...]]) -> Table:
    """A rich table: the place column(s) (provider · region, instance) then GPUs, $/h, hours, total and spot."""
    table = Table(
        title=title,
        title_justify="left",
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
        leading=1 if any("\n" in cell for row in rows for cell in row) else 0,
    )
    for header in headers:
        table.add_column(header, no_wrap=True)
    table.add_column(labels["gpus"], no_wrap=True)
    for key in ("price", "hours", "total"):
        table.add_column(labels[key], justify="right", no_wrap=True)
    table.add_column(labels["spot"], no_wrap=True)
    for row in rows:
        table.add_row(*row[1:], style="bold" if row[0] else None)
    return table


def _offers_table(result: dict[str, Any], width: int) -> Table | None:
    """The ranked offers in the answer's language: provider · region, full instance name, recommended row marked.

    One line per offer when the terminal is wide enough; otherwise the instance goes under "provider · region" in
    the same cell, wrapped only after `_ - . /`, so no name is ever broken mid-word or clipped.
    """
    from agent.writing import number, same_rental, templates

    offers = result.get("offers") or []
    if not offers:
        return None
    language = result.get("language") or "en"
    labels = templates(language)["table"]
    shown: list[dict[str, Any]] = []
    for offer in offers:
        if not any(same_rental(offer, seen) for seen in shown):
            shown.append(offer)
        if len(shown) == TABLE_ROWS:
            break
    marks = [MARK if _recommended(result, offer) else MARK_PAD for offer in shown]
    figures = [
        (
            f"{offer['total_gpus']}× {offer['gpu']}",
            number(offer["price_per_hour"], language, 2),
            number(offer["est_hours"], language, 1),
            number(offer["est_cost"], language, 2),
            labels["yes"] if offer["spot"] else labels["no"],
        )
        for offer in shown
    ]
    word = _recommendation_word(language)
    title = f"{labels['title']}   ({MARK}{word})" if MARK in marks and word else labels["title"]
    wheres = [_where(offer) for offer in shown]
    instances = [offer["instance_type"] for offer in shown]
    # the other columns measured with one-cell place columns: what is left of the width is for the places
    wide = _table(title, ["", ""], labels, [("", "x", "x", *cells) for cells in figures])
    where_header = f"{labels['provider']} · {labels['region']}"
    if (
        console.measure(wide).maximum
        - 2
        + len(MARK)
        + max(map(len, [*wheres, where_header]))
        + max(map(len, [*instances, labels["instance"]]))
        <= width
    ):
        rows = [
            (mark.strip(), mark + where, instance, *cells)
            for mark, where, instance, cells in zip(marks, wheres, instances, figures, strict=True)
        ]
        return _table(title, [MARK_PAD + where_header, labels["instance"]], labels, rows)
    bare = _table(title, [""], labels, [("", "x", *cells) for cells in figures])
    room = max(width - console.measure(bare).maximum + 1 - len(MARK), 12)
    header = wrap_name(where_header, room) + wrap_name(labels["instance"], room)
    rows = []
    for mark, offer, cells in zip(marks, shown, figures, strict=True):
        first, *rest = _place_lines(offer, room)
        rows.append((mark.strip(), "\n".join([mark + first] + [MARK_PAD + line for line in rest]), *cells))
    return _table(title, ["\n".join(MARK_PAD + line for line in header)], labels, rows)


def render_turn(result: dict[str, Any]) -> None:
    """Print one turn for people: the verdict, the offers table right after it (recommendations), details, notes."""
    from rich.markdown import (
        Markdown,  # imported on use: pygments costs ~0.3 s, --json never needs it
    )

    answer = result["answer"]
    kind = (result.get("verdict") or {}).get("answer_kind")
    table = _offers_table(result, console.width) if kind in (None, "recommendation") else None
    verdict, _, details = answer.partition("\n\n") if table is not None else (answer, "", "")
    console.print(Markdown(verdict.replace("\n", "\n\n")))
    if table is not None:
        console.print()
        console.print(table)
        console.print()
    if details:
        console.print(Markdown(details))
    for note in result.get("notes") or []:
        console.print(f"[dim]{note}[/dim]")


def _known_thread(advisor: Advisor, thread: str | None) -> bool:
    """Whether a --thread id names a stored conversation (None: no id given, nothing to say)."""
    if thread is None:
        return True
    try:
        return any(known == thread for known, _ in advisor.store.last_activity())
    except Exception:
        return True


def _new_thread_notice(thread: str, language: str) -> None:
    """Say that an unknown --thread starts a new conversation (in the answer's language)."""
    from agent.writing import templates

    console.print(f"[yellow]{templates(language)['new_thread'].format(thread=thread)}[/yellow]")


def write_skypilot_task(result: dict[str, Any], path: Path, *, force: bool) -> None:
    """Write the turn's SkyPilot task (one-line error when it cannot be exported; never over a file without --force)."""
    from agent.export import ExportError, build_task
    from cli.commands.export import write_new_file

    try:
        task = build_task(result)
    except ExportError as error:
        raise UserError(str(error)) from error
    write_new_file(path, task.yaml, force=force)
    if task.note:
        sys.stderr.write(task.note + "\n")
    sys.stderr.write(
        f"SkyPilot task written to {path}; launch: {task.launch_command.replace('task.yaml', str(path))}\n"
    )


def _check_language(lang: str | None) -> None:
    """An unsupported --lang stops the command before any turn: one line on stderr, exit 2."""
    from agent.language import SUPPORTED

    if lang is not None and lang.strip().lower() not in SUPPORTED:
        raise UserError(f"unsupported language '{lang}'; choose {', '.join(SUPPORTED[:-1])} or {SUPPORTED[-1]}")


def recommend_command(
    text: str = typer.Argument(..., help="The request, e.g. 'QLoRA su Llama 3 70B, budget 300 euro'."),
    thread: str | None = typer.Option(None, "--thread", help="Continue this conversation."),
    lang: str | None = typer.Option(None, "--lang", help="Answer in it, id or en."),
    prefer: str | None = typer.Option(None, "--prefer", help="cost or speed: which offer to recommend first."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document."),
    skypilot: Path | None = typer.Option(
        None, "--skypilot", help="Also write the recommendation as a SkyPilot task to this new file."
    ),
    force: bool = typer.Option(False, "--force", help="With --skypilot: replace the file if it exists."),
) -> None:
    """One turn: parse the request, size it, rank real offers and answer with sources."""
    _check_language(lang)
    from agent.service import (
        Advisor,  # imported on use: keeps `gpu-advisor --help` fast
    )

    advisor = Advisor()
    try:
        known = _known_thread(advisor, thread)
        result = advisor.respond(text, thread_id=thread, language=lang, prefer=prefer)
    finally:
        advisor.close()
    if skypilot is not None:
        write_skypilot_task(result, skypilot, force=force)
    if as_json:
        print_json(result)
    else:
        if not known and thread:
            _new_thread_notice(thread, result.get("language") or "en")
        render_turn(result)
        console.print(f"[dim]thread {result['thread_id']}[/dim]")


def _chat_turn(advisor: Advisor, text: str, thread: str | None, lang: str | None) -> dict[str, Any] | None:
    """Run one streamed turn with a progress line; returns the result or None after an error."""
    streamed: list[str] = []
    with console.status("…") as status:
        for event in advisor.stream(text, thread_id=thread, language=lang):
            if event["type"] == "progress":
                status.update(event["label"])
            elif event["type"] == "delta":
                streamed.append(event["text"])
            elif event["type"] == "error":
                console.print(f"[red]{event['message']} (error id {event['error_id']})[/red]")
                return None
            elif event["type"] == "final":
                return event["result"]
    return None


def chat_command(
    thread: str | None = typer.Option(None, "--thread", help="Resume this conversation."),
    lang: str | None = typer.Option(None, "--lang", help="Answer in it, id or en."),
    as_json: bool = typer.Option(False, "--json", help="Print each turn's result as one JSON line (JSON Lines)."),
) -> None:
    """Chat with the advisor; the conversation is kept and can be resumed with --thread."""
    _check_language(lang)
    from agent.gc_tuning import for_long_running
    from agent.service import (
        Advisor,  # imported on use: keeps `gpu-advisor --help` fast
    )

    advisor = for_long_running(Advisor())
    interactive = sys.stdin.isatty() and not as_json
    unknown = None if _known_thread(advisor, thread) else thread
    if interactive:
        console.print("[bold]gpu-advisor[/bold] — describe your training job (it / id / en). 'exit' to leave.")
    try:
        while True:
            try:
                text = console.input("[bold cyan]> [/bold cyan]") if interactive else sys.stdin.readline()
            except (EOFError, KeyboardInterrupt):
                break
            if not interactive and text == "":
                break
            text = text.strip()
            if not text:
                continue
            if text.lower() in EXIT_WORDS:
                break
            if as_json:
                try:
                    result = advisor.respond(text, thread_id=thread, language=lang)
                except ValueError as error:
                    sys.stdout.write(json.dumps({"error": str(error)}, ensure_ascii=False) + "\n")
                    continue
                thread = result["thread_id"]
                sys.stdout.write(json.dumps(result, ensure_ascii=False) + "\n")
                sys.stdout.flush()
                continue
            result = _chat_turn(advisor, text, thread, lang)
            if result is None:
                continue
            thread = result["thread_id"]
            if unknown:
                _new_thread_notice(unknown, result.get("language") or "en")
                unknown = None
            render_turn(result)
    finally:
        advisor.close()
    if thread and not as_json:
        console.print(f"[dim]resume with: gpu-advisor chat --thread {thread}[/dim]")


def register(app: typer.Typer) -> None:
    """Add the `recommend` and `chat` commands."""
    app.command("recommend")(recommend_command)
    app.command("chat")(chat_command)
