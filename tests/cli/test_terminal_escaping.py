"""Issue 38, finding 14: text from files (an ``.eval`` member's name, model, dataset and labeller
names) reaches the terminal with its control characters escaped: no ESC or OSC sequence, and no
newline that forges a line of output."""

from __future__ import annotations

import json
import zipfile

from o3viz.cli.main import main
from o3viz.store.labels import Label, add_labels
from o3viz.store.store import Store
from o3viz.testing.synthetic import make_trace

ESC = "\x1b[31mRED\x1b]0;pwned\x07"


def _clean(text: str) -> None:
    assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text, repr(text[-400:])


def test_an_eval_member_name_cannot_forge_a_line_or_colour_it(tmp_path, capsys):
    path = tmp_path / "evil.eval"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("header.json", json.dumps({"eval": {"task": "t", "model": "m"}}))
        z.writestr(
            "samples/1_epoch_1.json",
            json.dumps({"id": 1, "epoch": 1, "input": "2+2?", "output": {"completion": "2+2 = 4. So 4."}}),
        )
        z.writestr(
            f"samples/x\nFORGED line {ESC}_epoch_1.json", b"[1, 2]"
        )  # a bad sample: its name is printed
    main(["import", str(path), "--all", "--workers", "0", "--dataset", "evil"])
    out, err = capsys.readouterr()
    _clean(out + err)
    assert not any(
        line.startswith("FORGED") for line in (out + err).splitlines()
    )  # before: a line of its own
    assert "\\u000aFORGED" in err


def test_library_list_and_show_escape_names_from_files(capsys):
    trace = make_trace(4, seed=1)
    trace.provenance.model_id = f"m{ESC}\u202eevil"
    key = Store().add(trace, source="import", dataset=f"d{ESC}", name=f"n{ESC}")
    assert main(["library", "list"]) == 0
    assert main(["library", "show", key]) == 0
    out, err = capsys.readouterr()
    _clean(out + err)  # before: the ESC and OSC sequences went out raw
    assert "\\u001b" in out


def test_labels_agreement_escapes_labeller_names(capsys):
    store = Store()
    key = store.add(make_trace(6, seed=2), source="import", dataset="d")
    labs = [
        Label(key, 0, s, who, v)
        for s in range(4)
        for who, v in ((f"ann{ESC}", "wrong"), ("bob\u202e", "correct"))
    ]
    add_labels(store, labs)
    assert main(["labels", "agreement", "--dataset", "d"]) == 0
    out, err = capsys.readouterr()
    _clean(out + err)
    assert "ann\\u001b" in out
