"""Vectorized helpers over columns of string IDs (Arrow string arrays, plain or chunked).

They keep the hot paths free of Python loops per row: duplicate detection hashes every ID in a few numpy
passes over the Arrow buffers, block by block, and builds Python strings only for the rows it reports.

- `_columns`: the columns (`Strings`, `Packed`), conversions, gathers, codes, exact comparisons;
- `_hashing`: 64-bit hashes of IDs and of (group, document) pairs;
- `_pairs`: repeated (group, document) pairs, and the stretches of whole groups the sorts work on;
- `_rules`: which strings can be IDs;
- `_order`: trec_eval's row order.
"""

from metrics._ids._columns import (
    Packed,
    Strings,
    _chunks,
    as_string_array,
    as_strings,
    bincount,
    encode,
    equal_at,
    indices,
    lookup,
    strings_at,
    take,
    to_numpy,
)
from metrics._ids._hashing import _TAIL_MASK, hash_strings, hash_words, pair_hashes
from metrics._ids._order import Order, _descending_key, position_within, trec_order, trec_order_sparse
from metrics._ids._pairs import _group_cuts, duplicate_rows, first_row_of, hash_matches, may_repeat_pairs
from metrics._ids._rules import BAD_ID_CHARS, MAX_ID_BYTES, id_problem, invalid_id_rows, longest

__all__ = [
    "BAD_ID_CHARS",
    "MAX_ID_BYTES",
    "Order",
    "Packed",
    "Strings",
    "_TAIL_MASK",
    "_chunks",
    "_descending_key",
    "_group_cuts",
    "as_string_array",
    "as_strings",
    "bincount",
    "duplicate_rows",
    "encode",
    "equal_at",
    "first_row_of",
    "hash_matches",
    "hash_strings",
    "hash_words",
    "id_problem",
    "indices",
    "invalid_id_rows",
    "lookup",
    "longest",
    "may_repeat_pairs",
    "pair_hashes",
    "position_within",
    "strings_at",
    "take",
    "to_numpy",
    "trec_order",
    "trec_order_sparse",
]
