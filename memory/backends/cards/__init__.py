"""The cards backend (``backend.CardsBackend``), one module per job: the context graph
(``graph``, built by ``build``; revisions by ``revise``, confirmed by ``judge``), scoring
(``score``), the card and its audit (``card``), one card per subject (``group``),
assembly under the budget (``pack``), card text (``text``), staleness (``stale``),
alarms (``alarm``) and session summaries for later sessions (``experience``)."""
