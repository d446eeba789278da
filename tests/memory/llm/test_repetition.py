"""The repetition detector: loops are flagged as they stream, ordinary answers are not."""

from __future__ import annotations

import pytest

from memory.llm.repetition import RepetitionDetector, find_repetition, kept

TWO_SENTENCES = ("The price parsing logic is in the `parse_price` function of money.py. "
                 "It strips the currency and turns the text into a Decimal. ")
PARAGRAPH = ("The `quantize_cents` function is a simplified version of the `round` function "
             "that can be used to round a number to two decimal places.\n\n")


def streamed(text: str, size: int = 3) -> tuple[RepetitionDetector, int]:
    """A detector fed ``text`` in pieces of ``size`` characters (then the last line's
    end); the characters fed when it fired."""
    detector = RepetitionDetector()
    for start in range(0, len(text), size):
        if detector.feed(text[start:start + size]) is not None:
            return detector, start + size
    detector.feed("\n")
    return detector, len(text)


def test_the_reported_loop_two_sentences_on_one_line_is_stopped_early():
    text = "Here is where it lives. " + TWO_SENTENCES * 12
    detector, fed = streamed(text)
    found = detector.found
    assert found is not None and found.times == 3
    assert fed < len("Here is where it lives. " + TWO_SENTENCES * 3) + 3  # at the third copy
    assert kept(detector.text, found) == ("Here is where it lives. " + TWO_SENTENCES).rstrip()


def test_a_paragraph_said_again_and_again_is_flagged_and_kept_once():
    intro = "The rounding happens in two places.\n\n"
    detector, _ = streamed(intro + PARAGRAPH * 8)
    assert detector.found is not None
    assert kept(detector.text, detector.found) == (intro + PARAGRAPH).rstrip()
    assert detector.found.as_meta()["reason"] == "repetition"


def test_a_cycle_of_short_sentences_is_flagged_once_it_adds_up():
    text = "I am not sure. It depends. " * 10
    detector, fed = streamed(text, size=1)
    assert detector.found is not None and detector.found.rule == "cycle"
    assert kept(detector.text, detector.found) == "I am not sure. It depends."
    assert fed < len(text)


def test_numbered_lines_with_the_same_text_are_a_loop():
    text = "".join(f"{i}. Call parse_price on the text before you add it to the order.\n"
               for i in range(1, 9))
    found = find_repetition(text)
    assert found is not None
    assert kept(text, found) == "1. Call parse_price on the text before you add it to the order."


def test_the_same_code_block_three_times_is_a_loop():
    block = "```python\ndef total(prices):\n    return sum(prices)\n```\n\n"
    assert find_repetition(("Here:\n\n" + block) * 2) is None
    found = find_repetition(("Here:\n\n" + block) * 3)
    assert found is not None and "return sum(prices)" in found.unit


def test_a_run_without_any_punctuation_or_line_break_is_caught_by_its_period():
    text = "the price of the item " * 60
    detector, fed = streamed(text, size=5)
    assert detector.found is not None and fed < len(text)


NORMAL = """The price parsing logic is in `inventory/money.py`, in `parse_price(text)`.

It works in three steps:

1. It strips the currency code (`EUR`) and surrounding spaces.
2. It replaces a decimal comma with a point, so `12,50` reads as `12.50`.
3. It converts the text to a `Decimal` and rounds it with `quantize_cents`.

A text that is not a number raises `InventoryError`. A negative price raises
`InventoryError` too. For example:

```python
from inventory.money import parse_price

parse_price("EUR 12,50")  # Decimal('12.50')
```

| input | result |
| --- | --- |
| `12.50` | `Decimal('12.50')` |
| `-1` | `InventoryError` |

It is used by `order_total` in `inventory/orders.py`. It is used by `stock_report` too.
"""

CODE = """Here is the class:

```python
class Stock:
    def __init__(self):
        self.levels = {}

    def add(self, sku, qty):
        if qty <= 0:
            raise InventoryError("quantity must be positive")
        return self.levels[sku]

    def remove(self, sku, qty):
        if qty <= 0:
            raise InventoryError("quantity must be positive")
        return self.levels[sku]

    def take(self, sku, qty):
        if qty <= 0:
            raise InventoryError("quantity must be positive")
        return self.levels[sku]


def test_prices():
    assert parse_price("12.50") == Decimal("12.50")
    assert parse_price("12.50") == Decimal("12.50")
    assert parse_price("12.50") == Decimal("12.50")
    assert parse_price("12.50") == Decimal("12.50")


def main():
    for sku in skus:
        if sku:
            pass
        else:
            pass
        }
    }
}
```

```js
function a() {
  if (x) {
    return 1;
  }
}
```
"""

LIST = """The module defines:

- `quantize_cents(amount)`: rounds a Decimal to cents.
- `parse_price(text)`: parses a price into a Decimal.
- `format_price(amount)`: formats a Decimal as a price.
- `order_total(lines, prices)`: adds up the lines of an order.
- `split_batches(items, size)`: cuts a list into batches.
- `stock_report(stock, prices)`: one line per SKU.

Methods:
- `add(sku, qty)`: adds units. Raises `InventoryError` when qty is not a positive number.
- `remove(sku, qty)`: takes units out. Raises `InventoryError` when qty is not a positive number.
- `reserve(sku, qty)`: holds units. Raises `InventoryError` when qty is not a positive number.
- `release(sku, qty)`: frees units. Raises `InventoryError` when qty is not a positive number.

Next steps:
- Run the tests.
- Run the tests again after the change.
- Commit.
"""


@pytest.mark.parametrize("text", [NORMAL, CODE, LIST, "\n\n\n\n" * 20 + "Done.",
                                  "Yes. Yes. Yes.",
                                  # the same long sentence twice is emphasis, not a loop
                                  TWO_SENTENCES * 2],
                         ids=["prose", "code", "list", "blank-lines", "short", "twice"])
def test_ordinary_answers_are_not_flagged(text):
    assert streamed(text, size=1)[0].found is None
    assert streamed(text, size=7)[0].found is None


def test_a_loop_whose_last_copy_ends_the_stream_is_found_when_it_ends():
    line = "- `PYTHONPATH` - This is where the Python interpreter lives, as said.\n"
    text = "Values:\n" + line * 2 + line.rstrip("\n")  # no line break after the last copy
    detector = RepetitionDetector()
    assert detector.feed(text) is None
    found = detector.finish()
    assert found is not None and kept(text, found) == ("Values:\n" + line).rstrip()


def test_pieces_of_any_size_give_the_same_verdict():
    text = "Intro line here.\n" + PARAGRAPH * 5
    verdicts = {streamed(text, size)[0].found for size in (1, 2, 5, 16, 200)}
    assert len(verdicts) == 1 and None not in verdicts


def test_pieces_cut_anywhere_give_the_verdict_of_the_characters_one_by_one():
    """Sentence ends split from their space, list markers, fences and tabs, cut at
    random places: the verdict (and where it fired) is the one the text gets fed a
    character at a time."""
    import random

    atoms = ["The price is parsed. ", "It strips the sign! ", "Why? ", "1. item one\n",
             "- a bullet.\n", "```python\nx = 1\n```\n", "```\n}\n}\n```\n", "no stop ",
             "\n", "a.b.c ", "end.\t", "...  ", "```", "? ", "2) x. y\n",
             "A long line with many words in it for the count rule.\n"]
    rng = random.Random(7)
    fired = 0
    for _ in range(400):
        text = "".join(rng.choice(atoms) for _ in range(rng.randint(1, 60)))
        text *= rng.choice((1, 1, 2, 3))
        cuts = sorted(rng.sample(range(1, len(text)), min(len(text) - 1, rng.randint(1, 25))))
        pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
        verdicts = []
        for feed in (list(text), pieces, [text]):
            detector = RepetitionDetector()
            for piece in feed:
                if detector.feed(piece) is not None:
                    break
            verdicts.append(detector.finish())
        assert verdicts[1] == verdicts[0] and verdicts[2] == verdicts[0], text
        fired += verdicts[0] is not None
    assert 50 < fired < 350  # loops and ordinary texts both


def test_once_found_it_stays_found_and_reads_no_more():
    detector, _ = streamed(TWO_SENTENCES * 4)
    found, size = detector.found, len(detector.text)
    assert detector.feed("Something new entirely, and quite long. ") is found
    assert len(detector.text) == size


def test_a_repetition_needs_at_least_two_copies():
    with pytest.raises(ValueError, match="times >= 2"):
        RepetitionDetector(times=1)
