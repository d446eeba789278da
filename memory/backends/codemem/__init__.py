"""The CodeMem backend (``backend.CodeMemBackend``): its Code Context Memory
(``context``), Code Session Memory (``session``) and the tree-sitter code analysis they
share (``syntax``)."""
