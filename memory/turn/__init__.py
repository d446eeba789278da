"""One turn of a conversation: the ``agent`` builds the context (the backend's, the
project's ``instructions``, the developer's pins and ``steering``), asks the model and
``answering`` streams and reviews the answer, every turn recorded.
"""
