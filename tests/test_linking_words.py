"""What the linker learns of a KG's names, without a database: which words people type the initials of."""

from __future__ import annotations

from kgqa.training.linking_words import initialled


def test_a_name_is_initialled_whole_and_before_its_first_small_word() -> None:
    assert initialled(["united", "states", "of", "america"]) == [
        ["united", "states", "of", "america"],
        ["united", "states"],
    ]
    # one word before the small one gives no initials of its own ("University of Oxford" is not "u")
    assert initialled(["university", "of", "oxford"]) == [["university", "of", "oxford"]]
    assert initialled(["new", "york", "city"]) == [["new", "york", "city"]]
