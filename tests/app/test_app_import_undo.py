"""AppTest: the Undo button beside each import on the Data page (issue 12) — a confirm step naming the
project and the import, the undo itself, the refusal naming the labelled pairs, and the offer to exclude
them instead."""

from __future__ import annotations

from app_helpers import app_as, plain, texts

from annotate_app.services import imports, labels, queue
from annotate_app.services.auth import SYSTEM, authenticate
from annotate_app.ui import state


def _undo(at, import_id: int):
    return at.button(key=state.per_item(state.IMPORT_UNDO, import_id))


def test_undo_button_confirms_then_undoes_and_refuses_while_labels_depend(app_db):
    at = app_as(app_db, "admin", "views/admin/admin_data.py")
    _undo(at, 4).click().run()
    assert [plain(m.value) for m in at.markdown if "Undo import" in m.value] == [
        ":material/arrow_forward: Undo import 4 (run scheme_b) of demo: remove what it added, in one "
        "transaction."
    ]
    at.button(key=state.IMPORT_UNDO_CONFIRM).click().run()
    assert plain(at.success[0].value) == (
        "import 4 (run scheme_b) undone: 9 run entries removed, 3 unjudged pairs removed."
    )
    assert _undo(at, 4).disabled and not _undo(at, 3).disabled
    alice = authenticate(app_db, "alice", "alice-demo")
    view = queue.next_pair(app_db, alice, "demo")
    labels.save_label(app_db, alice, "demo", view.pair_id, grade=2, reason="partly answers it")
    _undo(at, 3).click().run()
    at.button(key=state.IMPORT_UNDO_CONFIRM).click().run()
    assert texts(at.error) == [
        f"import 3 cannot be undone: 1 labelled pair depends on it ({view.query_id} {view.doc_id}); "
        "use --exclude-dependent to exclude that pair instead"
    ]
    at.checkbox(key=state.IMPORT_UNDO_EXCLUDE).check().run()
    at.button(key=state.IMPORT_UNDO_CONFIRM).click().run()
    assert plain(at.success[0].value) == (
        "import 3 (run scheme_a) undone: 9 run entries removed, 8 unjudged pairs removed, "
        "1 judged pair excluded."
    )
    listed = imports.list_imports(app_db, SYSTEM, "demo")
    assert [i.undone_at is not None for i in listed] == [True, True, False, False]


def test_cancel_leaves_the_import(app_db):
    at = app_as(app_db, "admin", "views/admin/admin_data.py")
    _undo(at, 4).click().run()
    at.button(key=state.IMPORT_UNDO_CANCEL).click().run()
    assert not [m for m in at.markdown if "Undo import" in m.value]
    assert not at.success and not at.error
