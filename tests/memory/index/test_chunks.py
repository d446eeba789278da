from __future__ import annotations

from memory.index.chunks import chunk_file, markdown_chunks, python_chunks

from ...conftest import FORMS


def by_qualname(chunks):
    return {c.qualname: c for c in chunks}


def test_functions_methods_classes_with_spans():
    chunks = by_qualname(python_chunks("app/forms.py", FORMS.encode()))
    assert chunks[""].kind == "module"
    assert chunks["Form"].kind == "class"
    assert (chunks["Form"].start, chunks["Form"].end) == (7, 23)
    assert chunks["Form.validate_input"].kind == "method"
    assert (chunks["Form.validate_input"].start, chunks["Form.validate_input"].end) == (15, 19)
    # a decorated method's span starts at its decorator
    assert (chunks["Form.size"].start, chunks["Form.size"].end) == (21, 23)
    assert chunks["render_form"].kind == "function"
    assert (chunks["render_form"].start, chunks["render_form"].end) == (26, 28)
    assert chunks["render_form"].code.startswith("def render_form(form):")


def test_class_chunk_lists_attributes_and_methods():
    form = by_qualname(python_chunks("app/forms.py", FORMS.encode()))["Form"]
    assert "attributes: fields, data" in form.key
    assert "methods: __init__, validate_input, size" in form.key
    assert "def validate_input(self, value): ..." in form.code
    assert "raise ValueError" not in form.code  # a skeleton, not the bodies


def test_key_is_short_and_holds_signature_and_docstring():
    chunk = by_qualname(python_chunks("app/forms.py", FORMS.encode()))["Form.validate_input"]
    assert chunk.key.startswith("app/forms.py::Form.validate_input\ndef validate_input(self")
    assert "Reject an empty value" in chunk.key
    assert len(chunk.key) <= 400


def test_unparsable_file_is_indexed_as_far_as_tree_sitter_gets():
    source = b"def good():\n    return 1\n\ndef broken(:\n    pass\n\ndef later():\n    return 2\n"
    names = {c.qualname for c in python_chunks("x.py", source)}
    assert {"good", "later"} <= names


def test_definitions_under_if_and_try_are_found():
    source = b"import typing\nif typing.TYPE_CHECKING:\n    def hidden():\n        pass\n" \
             b"try:\n    def tried():\n        pass\nexcept ImportError:\n    pass\n"
    names = {c.qualname for c in python_chunks("x.py", source)}
    assert {"hidden", "tried"} <= names


def test_markdown_sections_by_heading_ignoring_fenced_code():
    text = "intro\n# A\ntext\n```\n# not a heading\n```\n## B\nmore\n# C\nend\n"
    chunks = markdown_chunks("doc.md", text)
    assert [(c.qualname, c.start, c.end) for c in chunks] == [
        ("", 1, 1), ("A", 2, 6), ("A/B", 7, 8), ("C", 9, 10)]


def test_unsupported_files_yield_nothing():
    assert chunk_file("image.png", b"\x89PNG") == []
