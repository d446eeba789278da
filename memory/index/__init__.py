"""A repository's code as searchable chunks: cut (``chunks``), embedded (``embed``, the
shipped MiniLM through ``_bert_onnx``), stored and searched in LanceDB (``repo``'s
``RepoIndex``, its tables and the manifest of its last refresh).
"""
