"""`gpu-advisor catalog build|query|update` through the real CLI, and `update` against local HTTP servers on
127.0.0.1 (one that serves ../shared/data, one that dies mid-file, one that answers 500, one that truncates)."""

from __future__ import annotations

import functools
import hashlib
import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from cli.app import main
from tests.shared_data import SHARED, needs_shared_catalog
from tools.catalog.query import build_from_snapshot, read_meta
from tools.catalog.update import UpdateError, update_catalog

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = SHARED / "data"
SKY = SHARED_DATA / "skypilot-catalog-v7"
needs_shared = needs_shared_catalog


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# ------------------------------------------------------------------------------------------------ HTTP servers


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


class _DiesMidFile(_Quiet):
    """Serves files, but for `victim` sends the full Content-Length and closes after half of the body."""

    victim = "lambda.csv"

    def do_GET(self) -> None:
        if not self.path.endswith("/" + self.victim):
            return super().do_GET()
        body = (SKY / self.victim).read_bytes()
        self.send_response(200)
        self.send_header("Content-Type", "text/csv")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body[: len(body) // 2])
        self.wfile.flush()
        self.close_connection = True
        self.connection.shutdown(2)  # the server dies mid-file


class _ServerError(_Quiet):
    def do_GET(self) -> None:
        if self.path.endswith("/vast.csv"):
            self.send_error(500, "boom")
            return
        super().do_GET()


class _TruncatedNoLength(_Quiet):
    """HTTP/1.0 body delimited by closing the connection, cut mid-line: no Content-Length to compare against."""

    def do_GET(self) -> None:
        if not self.path.endswith("/lambda.csv"):
            return super().do_GET()
        body = (SKY / "lambda.csv").read_bytes()
        self.send_response(200)
        self.send_header("Content-Type", "text/csv")
        self.end_headers()
        self.wfile.write(body[: len(body) // 3 + 7])
        self.close_connection = True


class _NotCsv(_Quiet):
    def do_GET(self) -> None:
        body = b"<html><body>rate limited</body></html>\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def serve() -> Iterator:
    servers: list[http.server.ThreadingHTTPServer] = []

    def start(handler: type[http.server.SimpleHTTPRequestHandler]) -> str:
        server = http.server.ThreadingHTTPServer(
            ("127.0.0.1", 0), functools.partial(handler, directory=str(SHARED_DATA))
        )
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}/skypilot-catalog-v7"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("GPU_ADVISOR_DB", raising=False)
    monkeypatch.delenv("GPU_ADVISOR_CATALOG_URL", raising=False)
    monkeypatch.setenv("GPU_ADVISOR_HOME", str(tmp_path))
    return tmp_path


# ------------------------------------------------------------------------------------------------ build / query


def test_build_and_query_json(capsys, home: Path) -> None:
    code, out, err = run_cli(capsys, "catalog", "build", "--json")
    assert code == 0, err
    built = json.loads(out)
    assert built["built_from"] == "snapshot" and built["offers"] > 5000 and built["snapshot_date"] == "2026-11-29"
    assert Path(built["db_path"]) == home / "catalog.sqlite"

    code, out, err = run_cli(
        capsys,
        "catalog",
        "query",
        "--gpu",
        "H100",
        "--gpu-count",
        "8",
        "--min-vram",
        "70",
        "--interconnect",
        "nvlink",
        "--sort",
        "price_per_gpu",
        "--limit",
        "5",
        "--json",
    )
    assert code == 0, err
    result = json.loads(out)
    assert result["count"] == len(result["offers"]) == 5
    first = result["offers"][0]
    for key in (
        "provider",
        "instance_type",
        "region",
        "zone",
        "gpu",
        "gpu_form_factor",
        "gpu_count",
        "vram_gib_per_gpu",
        "vcpus",
        "host_ram_gib",
        "price_per_hour",
        "spot_price_per_hour",
        "interconnect",
        "nvlink_gbs",
        "inter_node_fabric",
        "source",
        "snapshot_date",
    ):
        assert key in first
    assert all(o["gpu"] == "H100" and o["gpu_count"] == 8 and o["interconnect"] == "nvlink" for o in result["offers"])

    code, out, _ = run_cli(
        capsys,
        "catalog",
        "query",
        "--spot-only",
        "--max-price",
        "0.5",
        "--provider",
        "runpod",
        "--provider",
        "aws",
        "--region",
        "us-east-1",
        "--region",
        "CA",
        "--limit",
        "0",
        "--json",
    )
    offers = json.loads(out)["offers"]
    assert code == 0 and offers
    assert all(o["spot_price_per_hour"] <= 0.5 and o["provider"] in {"runpod", "aws"} for o in offers)
    assert all(o["region"] in {"us-east-1", "CA"} for o in offers)


def test_query_builds_on_first_use_and_prints_a_table(capsys, home: Path) -> None:
    code, out, err = run_cli(capsys, "catalog", "query", "--gpu", "4090", "--limit", "3")
    assert code == 0, err
    assert "RTX4090" in out and (home / "catalog.sqlite").is_file()


@pytest.mark.parametrize(
    "argv",
    [
        ("catalog", "query", "--sort", "cheapest"),
        ("catalog", "query", "--interconnect", "infiniband"),
        ("catalog", "query", "--min-vram", "-1"),
        ("catalog", "query", "--gpu-count", "0"),
        ("catalog", "build", "--from", "/no/such/folder"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(capsys, home: Path, argv) -> None:
    code, out, err = run_cli(capsys, *argv)
    assert code == 2 and out == ""
    assert err.startswith("error: ") and err.count("\n") == 1


@needs_shared
def test_build_from_folder_json(capsys, home: Path) -> None:
    code, out, err = run_cli(capsys, "catalog", "build", "--from", str(SKY), "--json")
    assert code == 0, err
    built = json.loads(out)
    assert built["counts"]["runpod"] == 1986 and built["offers"] == sum(built["counts"].values())
    assert len(built["issues"]) == 3 and all("aws.csv:" in i for i in built["issues"])
    code, out, _ = run_cli(capsys, "catalog", "info", "--json")
    assert code == 0 and json.loads(out)["meta"]["built_from"] == str(SKY)


# ------------------------------------------------------------------------------------------------ update


@needs_shared
def test_update_from_local_server(capsys, home: Path, serve) -> None:
    base = serve(_Quiet)
    code, out, err = run_cli(capsys, "catalog", "update", "--base-url", base, "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["counts"]["aws"] == 1377 and report["counts"]["gcp"] == 620 and report["counts"]["vast"] == 61
    assert report["files"]["lambda"].endswith("/skypilot-catalog-v7/lambda.csv")
    meta = read_meta(home / "catalog.sqlite")
    assert meta["built_from"] == base and meta["offer_count"] == report["offers"]


@needs_shared
def test_update_base_url_from_env(home: Path, serve, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPU_ADVISOR_CATALOG_URL", serve(_Quiet))
    report = update_catalog(clouds=["lambda", "vast"])
    assert report.counts == {"lambda": 306, "vast": 61}


@needs_shared
@pytest.mark.parametrize(
    ("handler", "expected"),
    [
        (_DiesMidFile, "lambda.csv"),
        (_ServerError, "HTTP 500"),
        (_TruncatedNoLength, "truncated"),
        (_NotCsv, "missing column"),
    ],
)
def test_failed_update_keeps_old_catalog(capsys, home: Path, serve, handler, expected: str) -> None:
    db = build_from_snapshot(home / "catalog.sqlite")
    before = digest(db)
    base = serve(handler)
    code, out, err = run_cli(
        capsys,
        "catalog",
        "update",
        "--base-url",
        base,
        "--cloud",
        "vast",
        "--cloud",
        "lambda",
        "--timeout",
        "10",
        "--json",
    )
    assert code == 2 and out == ""
    assert err.startswith("error: catalog update failed, old catalog kept:") and expected in err
    assert digest(db) == before
    assert read_meta(db)["built_from"] == "snapshot"
    assert sorted(p.name for p in home.iterdir()) == ["catalog.sqlite"]  # no temp files left


@needs_shared
def test_dies_mid_file_is_an_update_error(home: Path, serve) -> None:
    with pytest.raises(UpdateError, match=r"lambda\.csv.*(closed|truncated|interrupted|Content-Length)"):
        update_catalog(home / "c.sqlite", base_url=serve(_DiesMidFile), clouds=["lambda"], timeout=10)
    assert not (home / "c.sqlite").exists()


def test_unreachable_server_is_a_clear_error(home: Path) -> None:
    import socket

    with socket.socket() as sock:  # a port with nothing listening on it
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(UpdateError, match=r"127\.0\.0\.1"):
        update_catalog(home / "c.sqlite", base_url=f"http://127.0.0.1:{port}/x", clouds=["lambda"], timeout=5)
    with pytest.raises(UpdateError, match="http"):
        update_catalog(home / "c.sqlite", base_url="file:///etc", clouds=["lambda"])


# ------------------------------------------------------------------------------------------------ update: checks


class _CutAtLineBreak(_Quiet):
    """lambda.csv cut right after its second line: a well-formed but partial file (306 offers -> 1)."""

    def do_GET(self) -> None:
        if not self.path.endswith("/lambda.csv"):
            return super().do_GET()
        body = b"".join((SKY / "lambda.csv").read_bytes().splitlines(keepends=True)[:2])
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class _TinyPrices(_Quiet):
    """lambda.csv with every price divided by 10,000 (a feed in the wrong unit: $0.0001/h)."""

    def do_GET(self) -> None:
        if not self.path.endswith("/lambda.csv"):
            return super().do_GET()
        import csv
        import io

        rows = list(csv.reader(io.StringIO((SKY / "lambda.csv").read_text())))
        price = rows[0].index("Price")
        for row in rows[1:]:
            row[price] = f"{float(row[price]) / 10_000:.6f}"
        out = io.StringIO()
        csv.writer(out, lineterminator="\n").writerows(rows)
        body = out.getvalue().encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class _Trickle(_Quiet):
    """Sends lambda.csv one byte every 0.5 s (after honest headers)."""

    def do_GET(self) -> None:
        import time

        body = (SKY / "lambda.csv").read_bytes()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            for i in range(len(body)):
                self.wfile.write(body[i : i + 1])
                self.wfile.flush()
                time.sleep(0.5)
        except OSError:
            pass


class _TrickleHeaders(_Quiet):
    """Never finishes its headers: one header line every 0.5 s."""

    def do_GET(self) -> None:
        import time

        try:
            self.wfile.write(b"HTTP/1.1 200 OK\r\n")
            for i in range(1000):
                self.wfile.write(f"X-Slow-{i}: y\r\n".encode())
                self.wfile.flush()
                time.sleep(0.5)
        except OSError:
            pass


@needs_shared
def test_update_refuses_a_file_cut_at_a_line_break(capsys, home: Path, serve) -> None:
    db = build_from_snapshot(home / "catalog.sqlite")
    before = digest(db)
    code, out, err = run_cli(
        capsys, "catalog", "update", "--base-url", serve(_CutAtLineBreak), "--cloud", "lambda", "--json"
    )
    assert code == 2 and "lambda: 1 offer(s) where the current catalog has 306" in err and "--allow-shrink" in err
    assert digest(db) == before
    code, out, err = run_cli(
        capsys,
        "catalog",
        "update",
        "--base-url",
        serve(_CutAtLineBreak),
        "--cloud",
        "lambda",
        "--allow-shrink",
        "--json",
    )
    assert code == 0, err
    assert json.loads(out)["counts"] == {"lambda": 1}


@needs_shared
def test_update_refuses_implausible_prices(capsys, home: Path, serve) -> None:
    db = build_from_snapshot(home / "catalog.sqlite")
    before = digest(db)
    code, _out, err = run_cli(
        capsys, "catalog", "update", "--base-url", serve(_TinyPrices), "--cloud", "lambda", "--json"
    )
    assert code == 2 and "implausible prices" in err and "per GPU-hour" in err, err
    assert digest(db) == before


@needs_shared
@pytest.mark.parametrize("handler", [_Trickle, _TrickleHeaders])
def test_update_gives_up_at_its_overall_deadline(capsys, home: Path, serve, handler) -> None:
    import time

    db = build_from_snapshot(home / "catalog.sqlite")
    before = digest(db)
    started = time.monotonic()
    code, _out, err = run_cli(
        capsys, "catalog", "update", "--base-url", serve(handler), "--cloud", "lambda", "--timeout", "2", "--json"
    )
    elapsed = time.monotonic() - started
    assert code == 2 and "gave up after 2 s (--timeout)" in err, err
    assert elapsed < 15  # the trickle alone would take hours
    assert digest(db) == before


@needs_shared
def test_update_never_writes_over_a_foreign_file(capsys, home: Path, tmp_path: Path, serve) -> None:
    target = tmp_path / "notes.txt"
    target.write_text("notes\n")
    code, _out, err = run_cli(
        capsys, "catalog", "update", "--base-url", serve(_Quiet), "--cloud", "lambda", "--db", str(target)
    )
    assert code == 2 and "not a gpu-advisor catalog" in err
    assert target.read_text() == "notes\n"
    code, _out, err = run_cli(
        capsys,
        "catalog",
        "update",
        "--base-url",
        serve(_Quiet),
        "--cloud",
        "lambda",
        "--db",
        str(tmp_path / "no" / "x.sqlite"),
    )
    assert code == 2 and "does not exist" in err and not (tmp_path / "no").exists()


@needs_shared
def test_update_of_one_cloud_keeps_the_others(capsys, home: Path, serve) -> None:
    """`catalog update --cloud lambda` on the shipped 13-provider catalog refreshes lambda and keeps every other
    provider's offers (it used to leave 306 lambda offers and nothing else, exit 0)."""
    build_from_snapshot(home / "catalog.sqlite")
    before = read_meta(home / "catalog.sqlite")["counts"]
    assert len(before) >= 10
    code, _out, err = run_cli(capsys, "catalog", "update", "--base-url", serve(_Quiet), "--cloud", "lambda", "--json")
    assert code == 0, err
    after = read_meta(home / "catalog.sqlite")
    assert after["counts"]["lambda"] == 306
    assert {k: v for k, v in after["counts"].items() if k != "lambda"} == {
        k: v for k, v in before.items() if k != "lambda"
    }
    assert after["offer_count"] == sum(after["counts"].values())


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (("--cloud", "../../etc"), "unknown cloud '../../etc'"),
        (("--cloud", "nosuchcloud"), "unknown cloud 'nosuchcloud'"),
        (("--timeout", "inf"), "--timeout"),
        (("--timeout", "nan"), "--timeout"),
    ],
)
def test_update_refuses_bad_clouds_and_timeouts_in_one_line(capsys, home: Path, argv, words) -> None:
    """A provider name that is no known cloud (or tries to leave the temp folder) and a timeout that is not a
    finite number of seconds are one line, exit 2, before anything is downloaded."""
    code, out, err = run_cli(capsys, "catalog", "update", "--base-url", "http://127.0.0.1:9", *argv)
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert words in err and "Traceback" not in err


class _RedirectsElsewhere(_Quiet):
    """Answers every file with a redirect to another host name (localhost instead of 127.0.0.1) or to ftp://."""

    target = "localhost"

    def do_GET(self) -> None:
        port = self.server.server_address[1]
        where = (
            f"ftp://127.0.0.1:{port}{self.path}"
            if self.target == "ftp"
            else f"http://localhost:{port}{self.path}?moved=1"
        )
        if "moved=1" in self.path:
            return super().do_GET()
        self.send_response(302)
        self.send_header("Location", where)
        self.end_headers()


class _RedirectsToFtp(_RedirectsElsewhere):
    target = "ftp"


@needs_shared
@pytest.mark.parametrize("handler", [_RedirectsElsewhere, _RedirectsToFtp])
def test_update_does_not_follow_a_redirect_to_another_host_or_scheme(capsys, home: Path, serve, handler) -> None:
    """A redirect off the catalog's own scheme and host is refused (one line, old catalog kept)."""
    code, out, err = run_cli(capsys, "catalog", "update", "--base-url", serve(handler), "--cloud", "lambda")
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert "redirect" in err


def test_build_prepares_the_comparison_table_so_the_first_page_does_not_wait(capsys, home: Path) -> None:
    """`catalog build` leaves the /compare listings of the new catalog version ready (issue 27: at 1M offers the first
    request otherwise waited 37-60 s for them), with every offer's listing in it."""
    import sqlite3

    from web.compare import store_path

    code, out, err = run_cli(capsys, "catalog", "build", "--json")
    assert code == 0, err
    catalog = Path(json.loads(out)["db_path"])
    listings = store_path(catalog)
    assert listings.is_file()
    with sqlite3.connect(listings) as conn:
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert tables


def _replacing_watched(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, bool]]:
    """Watch every catalog file replacing another: (its temp name, whether its /compare store existed then)."""
    import os

    from web.compare import store_path

    seen: list[tuple[str, bool]] = []
    real = os.replace

    def replacing(src, dst):  # type: ignore[no-untyped-def]
        if Path(src).name.startswith(".catalog-"):
            seen.append((Path(src).name, store_path(Path(src)).is_file()))
        return real(src, dst)

    monkeypatch.setattr(os, "replace", replacing)
    return seen


def test_a_built_catalog_appears_with_its_comparison_table_ready(capsys, home: Path, monkeypatch) -> None:
    """`catalog build` prepares the /compare store before the new catalog replaces the old one: a server reading
    the catalog never meets the new version without it (at 1M offers, ~12 s of first pages waiting)."""
    from web.compare import store_path

    seen = _replacing_watched(monkeypatch)
    code, out, err = run_cli(capsys, "catalog", "build", "--json")
    assert code == 0, err
    assert len(seen) == 1 and seen[0][1], seen
    assert store_path(Path(json.loads(out)["db_path"])).is_file()


@needs_shared
def test_an_updated_catalog_appears_with_its_comparison_table_ready(capsys, home: Path, serve, monkeypatch) -> None:
    from web.compare import store_path

    build_from_snapshot(home / "catalog.sqlite")
    seen = _replacing_watched(monkeypatch)
    code, _out, err = run_cli(capsys, "catalog", "update", "--base-url", serve(_Quiet), "--cloud", "lambda", "--json")
    assert code == 0, err
    assert len(seen) == 1 and seen[0][1], seen
    assert store_path(home / "catalog.sqlite").is_file()
