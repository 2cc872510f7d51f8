"""Every ``st.session_state`` key the app uses, in one place: nothing else may spell a key as a string.

Plain keys are constants; keys of widgets that belong to one item (a pair, a release, a user) are built by the
functions below, so a fresh item gets fresh widgets and typed text survives a validation error.

>>> reason(42), grade(42, "a")
('q_reason_42', 'a_grade_42')
"""

from __future__ import annotations

# ---------------------------------------------------------------------------------------- login and session
ACTOR = "actor"  # the logged-in services.auth.Actor
LOGIN_TOKEN = "login_token"  # the signed cookie value to (re)write in the browser
LOGIN_METHOD = "login_method"  # "password", "cookie" or "sso"
IGNORED_TOKEN = "ignored_token"  # a cookie from the initial request that a log out cancelled
EXPIRE_COOKIE = "expire_cookie"  # True: the next run tells the browser to delete the login cookie
LOGOUT_NOTICE = "logout_notice"  # why the user was logged out (shown on the login page)
PROJECT = "project"  # the project the page acts on (the sidebar picker; None: none chosen or refused)
PROJECT_LAST = "project_last"  # the last project chosen in this session (used when the URL names none)
PROJECT_CHOICE = "project_choice"  # this run's ui.nav.ProjectChoice (how the project was resolved)
PAGE_HEADING = "page_heading"  # the container of a page's title and project badge
LOGOUT_BUTTON = "logout_button"

# -------------------------------------------------------------------------------------------- login form
LOGIN_USERNAME = "login_username"
LOGIN_PASSWORD = "login_password"
LOGIN_FORM = "login_form"

# ------------------------------------------------------------------------------------------- annotate
CURRENT_PAIR = "current_pair"  # the PairView on the annotate card (None: nothing left)
CARD_FLASH = "card_flash"  # (kind, message) shown once on the annotate card
GOLD_FEEDBACK = "gold_feedback"  # (expected grade's label, explanation) of the gold pair just saved
EDIT_PAIR = "edit_pair"  # the PairView being edited on the My labels page
EDIT_FLASH = "edit_flash"
EDIT_CHOICE = "edit_choice"
ADJ_FLASH = "adj_flash"

# ------------------------------------------------------------------------------------------------ score
SCORE_EXTRA_RUNS = "score_extra_runs"  # {name: metrics.Run} built or uploaded in this session
SCORE_FLASH = "score_flash"
SCORE_RELEASE = "score_release"
SCORE_RUNS = "score_runs"
SCORE_K = "score_k"
SCORE_TAB = "score_tab"  # the Score page's open tab (kept across reruns)
SCORE_UPLOADS = "score_uploads"
SCORE_PAIR_A = "score_pair_a"
SCORE_PAIR_B = "score_pair_b"
SCORE_BASELINE = "score_baseline"
SCORE_PERMUTATIONS = "score_permutations"
SCORE_BM25_K = "score_bm25_k"
SCORE_FUSE_RUNS = "score_fuse_runs"
SCORE_FUSE_METHOD = "score_fuse_method"
SCORE_FUSE_NAME = "score_fuse_name"
SCORE_SENSITIVITY = "score_sensitivity"
SCORE_MEASURE = "score_measure"
SCORE_SLICE_BY = "score_slice_by"  # the Score page's slicing: "" (all queries), "tag" or "tag:KEY"
SCORE_SLICE = "score_slice"  # the slice shown (a tag, a tag's value, or metrics.slices.UNTAGGED)
SCORE_HEATMAP_MEASURE = "score_heatmap_measure"
SCORE_UNJUDGED_PAGE = "score_unjudged_page"  # per run: the page of its unjudged documents

# --------------------------------------------------------------------------------------------- reviewer
AGREE_A = "agree_a"
AGREE_B = "agree_b"
ADJ_ORDER = "adj_order"  # the Adjudicate page's queue order (gate.DisagreementOrder)
ANNOTATORS_TABLE = "annotators_table"  # the Annotators page's table (its row selection)
ANNOTATORS_RESUME = "annotators_resume"  # the Annotators page's pick of a paused annotator to resume
ANNOTATORS_FLASH = "annotators_flash"
AGREE_JUDGE = "agree_judge"  # the machine judge shown in the Agreement page's Judges section
SCORE_PPI_JUDGE = "score_ppi_judge"  # the machine judge of the Score page's PPI tab
SCORE_PPI_MEASURE = "score_ppi_measure"
SCORE_PPI_CALIBRATE = "score_ppi_calibrate"  # "none" or a metrics.stats.isotonic.Calibration
RELEASE_JUSTIFICATION = "release_justification"
RELEASE_NOTE = "release_note"
RELEASE_AGGREGATE = "release_aggregate"
RELEASE_FLASH = "release_flash"

# ------------------------------------------------------------------------------------------------ admin
ADMIN_FLASH = "admin_flash"
NEW_USER_FORM = "new_user_form"
NEW_USER_NAME = "new_user_name"
NEW_USER_DISPLAY = "new_user_display"
NEW_USER_PASSWORD = "new_user_password"
NEW_USER_ROLE = "new_user_role"
USER_PICK = "user_pick"
USER_ROLE = "user_role"
USER_PASSWORD = "user_password"
NEW_PROJECT_FORM = "new_project_form"
NEW_PROJECT_NAME = "new_project_name"
NEW_PROJECT_TITLE = "new_project_title"
SETTINGS_FORM = "settings_form"
GUIDELINES_FORM = "guidelines_form"
MEMBERS_FORM = "members_form"
MEMBERS_PICK = "members_pick"
MEMBERS_QUOTA = "members_quota"
MEMBER_REMOVE = "member_remove"
IMPORT_KIND = "import_kind"
IMPORT_FILE = "import_file"
IMPORT_NAME = "import_name"
IMPORT_CHUNKS = "import_chunks"
IMPORT_LABEL_FORMAT = "import_label_format"  # labels from another tool: the tool's format
IMPORT_LABEL_ANNOTATOR = "import_label_annotator"
IMPORT_GRADE_MAP = "import_grade_map"
IMPORT_ANNOTATOR_MAP = "import_annotator_map"
IMPORT_UNDO = "import_undo"  # per import: its Undo button (state.per_item)
IMPORT_UNDO_PICK = "import_undo_pick"  # the import whose undo awaits confirmation
IMPORT_UNDO_EXCLUDE = "import_undo_exclude"
IMPORT_UNDO_CONFIRM = "import_undo_confirm"
IMPORT_UNDO_CANCEL = "import_undo_cancel"
POOL_FORM = "pool_form"
POOL_DEPTH = "pool_depth"
POOL_RUNS = "pool_runs"
POOL_BUDGET = "pool_budget"
POOL_SKIP_PRIOR = "pool_skip_prior"
PAIR_FORM = "pair_form"
PAIR_QUERY = "pair_query"
PAIR_DOC = "pair_doc"
PAIR_ACTION = "pair_action"
PAIR_REASON = "pair_reason"
PAIRS_PAGE = "pairs_page"
AUDIT_ACTION = "audit_action"
AUDIT_SCOPE = "audit_scope"
AUDIT_LIMIT = "audit_limit"


# ------------------------------------------------------------------------------------- per-item widgets
# ``scope`` keeps the same pair's widgets apart on different cards: "q" (the annotate queue), "e" (editing
# one's own label), "a" (adjudication).
def grade(pair_id: int, scope: str = "q") -> str:
    """The grade chosen on a pair's card (not a widget: set by the grade buttons)."""
    return f"{scope}_grade_{pair_id}"


def grade_button(pair_id: int, value: int, scope: str = "q") -> str:
    return f"{scope}_grade_button_{pair_id}_{value}"


def reason(pair_id: int, scope: str = "q") -> str:
    return f"{scope}_reason_{pair_id}"


def unsure(pair_id: int, scope: str = "q") -> str:
    return f"{scope}_unsure_{pair_id}"


def shown_at(pair_id: int, scope: str = "q") -> str:
    """When a pair's card was first shown (time.monotonic()), for the seconds spent on it."""
    return f"{scope}_shown_at_{pair_id}"


def shown_version(pair_id: int, scope: str = "q") -> str:
    """The document version a pair's card showed last (`PairView.doc_version`), which its save sends."""
    return f"{scope}_shown_version_{pair_id}"


def submit(pair_id: int, scope: str = "q") -> str:
    return f"{scope}_submit_{pair_id}"


def gold_grade(pair_id: int) -> str:
    """The expected grade of the Adjudicate page's "Mark as gold" form."""
    return f"gold_grade_{pair_id}"


def gold_explanation(pair_id: int) -> str:
    return f"gold_explanation_{pair_id}"


def gold_submit(pair_id: int) -> str:
    return f"gold_submit_{pair_id}"


def skip(pair_id: int, scope: str = "q") -> str:
    return f"{scope}_skip_{pair_id}"


def evidence(pair_id: int, scope: str = "q") -> str:
    """The passages marked on a pair's card (not a widget: a sorted list of (start, end))."""
    return f"{scope}_evidence_{pair_id}"


def evidence_cursor(pair_id: int, scope: str = "q") -> str:
    """The index of the sentence under the evidence cursor on a pair's card."""
    return f"{scope}_evidence_cursor_{pair_id}"


def evidence_selection(pair_id: int, scope: str = "q") -> str:
    """The hidden text box a browser selection is written into (`ui.components.evidence`)."""
    return f"{scope}_evidence_selection_{pair_id}"


def evidence_note(pair_id: int, scope: str = "q") -> str:
    """A hint under the marking controls (the selection was not found ...)."""
    return f"{scope}_evidence_note_{pair_id}"


def window_at(pair_id: int, scope: str = "q") -> str:
    """The character an evidence-off card's long document is shown from: its window is the one holding it."""
    return f"{scope}_window_at_{pair_id}"


def per_item(prefix: str, item: object) -> str:
    """A key for a widget repeated per item (a download per release, a button per run, a setting ...)."""
    return f"{prefix}_{item}"


CARD_KEYS = (
    grade,
    reason,
    unsure,
    shown_at,
    shown_version,
    evidence,
    evidence_cursor,
    evidence_note,
    window_at,
)
