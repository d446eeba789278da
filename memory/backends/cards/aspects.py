"""Prototype statements of the aspects a fact about a function may set, for the cue-free
revision rules (``revise``): a statement's aspect is the one whose prototypes its MiniLM
vector is closest to. Our own words, generic: no benchmark's phrasing."""

from __future__ import annotations

ASPECTS: dict[str, tuple[str, ...]] = {
    "behaviour": (
        "The function computes the total of the given values and returns it.",
        "It converts the input text into a list of records.",
        "The function splits the items into groups and yields each group in turn.",
        "It reads the file and returns the parsed contents as a dictionary.",
        "The method removes the entry and returns what is left.",
        "It merges the two iterables into one sorted sequence.",
        "The function formats the amount as a string with a currency sign.",
    ),
    "constraint": (
        "It raises ValueError when the argument is negative.",
        "An empty input is rejected with an error.",
        "If the key is missing, the function raises KeyError.",
        "The argument must be a positive integer, otherwise raise TypeError.",
        "Invalid values are refused before anything is changed.",
        "It must never modify its arguments in place.",
    ),
    "convention": (
        "Add type hints to every parameter and to the return value.",
        "Write a docstring with a short example for each public function.",
        "Name private helpers with a leading underscore.",
        "Log through the module logger instead of calling print.",
        "Use f-strings in the code, not percent formatting.",
        "Keep each function under forty lines and avoid global variables.",
    ),
}
