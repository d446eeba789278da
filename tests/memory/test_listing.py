from memory.listing import listed


def test_a_list_names_three_items_then_counts_the_rest():
    assert listed(["a"]) == "a"
    assert listed(["a", "b", "c"]) == "a, b, c"
    assert listed(["a", "b", "c", "d", "e"]) == "a, b, c and 2 more"
    assert listed(["x (E)", "y (E)", "z (E)"], 2, "; ") == "x (E); y (E) and 1 more"
