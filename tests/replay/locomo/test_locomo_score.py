"""LoCoMo's answer scores on worked examples, computed by hand with LoCoMo's formula:
normalise (lowercase, commas then punctuation removed, a/an/the/and dropped, whitespace
collapsed), Porter-stem each word, F1 over the common stems; category 1 averages each gold
part's best F1 over the answer's comma parts; category 3 scores against the gold before its
first ';'; category 5 is right when the answer says the information is not there."""

from __future__ import annotations

import pytest

from replay.locomo.score import normalize, partial_f1, score, stems, token_f1


def test_normalisation_and_stemming_follow_locomo():
    assert normalize("The 14th of May, 2023!") == "14th of may 2023"
    assert normalize("Cats and the dogs") == "cats dogs"  # "and" goes with the articles
    assert stems("She started pottery classes") == ["she", "start", "potteri", "class"]


@pytest.mark.parametrize(("prediction", "gold", "expected"), [
    # stems she/start/potteri/class vs potteri: P 1/4, R 1 -> 2·(1/4)/(5/4) = 0.4
    ("She started pottery classes", "pottery", 0.4),
    # 14th/of/may/2023 vs 14/may/2023: 2 common, P 1/2, R 2/3 -> 4/7
    ("The 14th of May, 2023", "14 May 2023", 4 / 7),
    # in/2019 vs 2019: P 1/2, R 1 -> 2/3
    ("In 2019.", "2019", 2 / 3),
    ("Lisbon", "Porto", 0.0),
    ("", "pottery", 0.0),
    # repeated words count as often as both sides have them: a/a/b vs a/b -> P 2/3, R 1
    ("apple apple banana", "apple banana", 0.8),
])
def test_token_f1_on_worked_examples(prediction, gold, expected):
    assert token_f1(prediction, gold) == pytest.approx(expected)


def test_category_1_gives_partial_credit_over_comma_parts():
    # one answer part "he plays guitar piano" (stems he/play/guitar/piano): guitar 0.4
    # (P 1/4, R 1), cello 0 -> mean 0.2
    assert partial_f1("He plays the guitar and the piano", "guitar, cello") == pytest.approx(0.2)
    assert partial_f1("cello, drums, guitar", "guitar, cello") == pytest.approx(1.0)
    # guitar 1 (its own part), cello 0 -> 0.5
    assert score(1, "guitar, drums", "guitar, cello") == pytest.approx(0.5)
    # the same answer unsplit scores the whole phrase: guitar/drum vs guitar/cello -> 0.5
    assert score(4, "guitar, drums", "guitar, cello") == pytest.approx(0.5)


def test_category_3_scores_against_the_gold_before_its_rationale():
    gold = "Likely yes; she loves pottery and glazes"
    assert score(3, "yes, likely", gold) == pytest.approx(1.0)
    assert score(2, "yes, likely", gold) < 1.0  # other categories keep the whole gold


@pytest.mark.parametrize(("answer", "right"), [
    ("Not mentioned in the conversation", 1.0),
    ("(a) not mentioned in the conversation", 1.0),
    ("There is no information available about a cat.", 1.0),
    ("Biscuit", 0.0),
    ("It was never mentioned", 0.0),  # LoCoMo checks two phrases, not the meaning
])
def test_category_5_is_right_when_the_answer_says_it_is_not_there(answer, right):
    assert score(5, answer, "Biscuit") == right
