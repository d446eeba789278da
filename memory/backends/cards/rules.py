"""Every rule of ``cards`` as data: the word lists, patterns and thresholds by which it reads
statements, docstrings, tracebacks and test output, revises facts and selects cards, each
with a line on what it is for. No other module of the package compiles a pattern, defines
a word list or sets a float threshold (``tests/memory/test_cards_rules_home.py``). A change
here is measured on every outline set (the demo, the other repositories, the template and
varied voices, another writer's phrasings) and kept only when it loses on none
(docs/results.md, issue 40's sections).

What a statement is about is read from the names it holds (resolved against the
repository and the conversation) and from its meaning (MiniLM, against the prototypes
below); the lists of the first part only say which words mark a question, a request, a
negation, where a name comes from, and which words are no names. The patterns of the
second part that still hold a phrasing are named as such (the alarm's, ``OBJECT_FIRST``);
the others read structure: code spans, paths, argument lists, tracebacks, test output.
"""

from __future__ import annotations

import re

# -- questions and requests (``said.asks``) -----------------------------------------------
# a sentence ending in "?" led by one of these asks something and states nothing ...
QUESTION_WORDS = ("what", "which", "how", "why", "where", "who", "when", "whose", "is",
                  "are", "does", "do", "did", "was", "were", "has", "have")
# ... but one led by a modal, or by these openers, asks for something: it states what is
# wanted, when a verb other than "be"/"have" follows its subject ("can f reuse g?",
# "could f take (a, b)?", "how about putting f in m.py?"; not "could f be simpler?")
MODAL_WORDS = ("can", "could", "should", "would", "will", "shall", "may", "might",
               "how about", "what about", "why not", "wouldn't it be better if")
# after a modal's subject, these ask for a change as a verb does ("would f be able to
# reuse g?")
ABLE_PHRASES = ("be able to", "be allowed to")
# a line led by these, with no clause after it, is a heading worded as a question ("Where
# `f` should live.")
HEADING_WORDS = ("what", "which", "how", "where")
# the verbs after a modal's subject that ask about a state, not for a change
STATE_VERBS = frozenset({"be", "is", "are", "been", "have", "has", "had", "do", "does"})
# ... unless "be" comes with a participle: a passive request ("can f be declared with
# (a, b)?", "could f be moved to m.py?"), not a state ("could f be simpler?")
# (and a place, a list or a role after it: "be called twice?" asks; nor after a modal
# of prediction: "will f be called often?")
PASSIVE_TARGETS = ("to", "into", "in", "with", "as", "under", "inside")
PREDICTING = ("will", "would", "may", "might")
PARTICIPLE = re.compile(r"^(?:[a-z]{2,}(?:ed|[^e]en)|put|set|kept|made|built|split|left|held"
                        r"|run|done|shown|known|told|bound|found|taken|given)$")
# subjects a modal question may have beside a code name
PRONOUNS = frozenset({"i", "we", "you", "it", "they", "he", "she", "this", "that", "one",
                      "the", "our", "my", "your", "function", "method", "helper"})

# -- where a dependency comes from (``reading``) ----------------------------------------
# words before a bare module name that make it a place ("in orders", "into the text module")
PLACE_WORDS = ("in", "into", "to", "under", "inside", "within")
# words between a method and its class when said apart ("remove on Stock", "the remove
# method of the class Stock"): at most three of them
METHOD_LINKS = frozenset({"on", "of", "method", "the", "class"})
# words between a name and the module or file it comes from ("g from m", "g in m.py",
# "g out of m", "g of the m module"); "in" only pairs a name that is not the subject
SOURCE_WORDS = ("from", "in", "inside", "out of", "of", "within")
# those of them that say where a name is taken from, not where it lives: a lower-case word
# after them is a module even when nothing calls it one ("g out of itertools")
TAKEN_FROM = ("from", "out of")
# words a module may be called by after its name ("the decimal module")
MODULE_WORDS = ("module", "package", "library", "lib", "file", "stdlib", "standard library")
# words by which a place or a name is said as the one not wanted ("in m.py, not n.py",
# "rather than in n.py", "instead of g"): it is no value of the statement
REJECTING_WORDS = ("not", "rather than", "instead of")
# a place its clause negates within this many words before it ("must not go in n.py",
# "doesn't belong in n.py", "should never live in n.py") is no place of the statement
NEGATING_WORDS = ("not", "never", "cannot", "n't")
NEGATED_REACH = 3
# words before a common noun: a module's name after one is the noun ("open a socket")
DETERMINERS = ("a", "an", "the", "this", "that", "each", "every", "some", "any", "one")
# the word a passive statement names its subject after ("g should be used by f")
AGENT_WORDS = ("by",)
# words after which a name is the function a statement is about, when no name is a
# subject of the conversation yet ("for f, reuse g", "in f, use g", "g is there for f")
# (in this order: "bring in g for f" is about f)
SCOPE_WORDS = (("for",), ("in", "inside", "within", "into"), ("of",))
# the words after the name that does what a statement says ("f should reuse g", "g is
# there; f can call it"), when no name is a subject of the conversation yet
ACTING_WORDS = ("should", "must", "can", "could", "will", "would", "shall", "may",
                "has to", "needs to", "is supposed to", "ought to")
# standard modules whose names are also English words: a name only when quoted, after
# "import" / "from", or followed by "module" ("the time module")
WORD_MODULES = frozenset({
    "abc", "array", "code", "copy", "calendar", "decimal", "email", "enum", "glob", "html",
    "http", "io", "keyword", "locale", "numbers", "operator", "platform", "queue",
    "random", "resource", "sched", "secrets", "select", "signal", "site", "string",
    "struct", "symbol", "test", "this", "time", "token", "trace", "types", "wave",
    "collections", "statistics", "fractions", "inspect", "logging", "math", "os", "sys",
})

# -- negation (``uses``) -----------------------------------------------------------------
# "not ... anything but g", "never ... nothing except g": a negation that says to use g
ALL_WORDS = ("anything", "nothing")
EXCEPT_WORDS = ("but", "except", "other than")
# verbs that say a name is used, beside "use"/"reuse"/"call"/"import"/"depend on"/"rely on"
USE_VERBS = ("use", "reuse", "call", "import", "depend on", "rely on", "lean on",
             "build on", "go through", "delegate to", "pull in", "bring in", "wrap")

# -- words that are never names, even when a repository defines a function of that name
# (a bare word resolves as a name only when it is a symbol or a subject of the
# conversation, or spelled like code: snake_case, dotted, CamelCase, a call "f()")
PLAIN_WORDS = frozenset({
    "a", "an", "the", "and", "or", "not", "no", "it", "its", "is", "be", "to", "of", "in",
    "on", "by", "for", "from", "with", "as", "at", "if", "then", "else", "return", "list",
    "set", "dict", "str", "int", "float", "bool", "none", "true", "false", "type", "file",
    "module", "function", "method", "class", "value", "values", "name", "names", "text",
    "get", "put", "use", "take", "make", "run", "call", "add", "remove", "sort", "split",
    "join", "map", "filter", "open", "read", "write", "parse", "format", "count", "sum",
    "max", "min", "all", "any", "len", "range", "next", "iter", "first", "last", "one",
    "this", "that", "these", "those", "should", "must", "can", "could", "would", "will",
    "anything", "nothing", "something", "everything", "i", "we", "you",
})

# -- aspects by meaning (``reading.Reader.aspect``) -------------------------------------------
# statements are embedded with their names masked ("the function", "the helper", "that
# file", "(a, b)"), and read as the aspect whose prototypes they are closest to, among
# the aspects whose values they hold (a place, a parameter list, a second name)
MASK_SUBJECT = "the function"
MASK_CLASS = "the class"  # the class of a method said with it ("`C`'s `f`")
MASK_NAME = "the helper"
MASKS = {"function": "the helper", "class": "the class", "exception": "an error",
         "constant": "the constant", "module": "the module"}  # by what a name is
MASK_PLACE = "that file"
MASK_ARGS = "(a, b)"
VALUE_ASPECTS = ("location", "parameters", "dependency")
PROTOTYPES: dict[str, tuple[str, ...]] = {
    "location": (
        "the function belongs in that file.",
        "put the function in that file.",
        "the function should live in that file.",
        "the function goes into that file.",
        "I want the function defined in that file.",
        "that file is where the function should be written.",
        "move the function to that file.",
    ),
    "parameters": (
        "the function takes (a, b).",
        "the function should accept (a, b).",
        "the signature of the function is (a, b).",
        "I'd have the function take (a, b) as its arguments.",
        "the parameters of the function are (a, b).",
        "the function is called with (a, b).",
        "let the function receive (a, b).",
    ),
    "dependency": (
        "the function should reuse the helper from that file.",
        "the function needs the class from the module.",
        "the helper should be used by the function.",
        "the function can rely on the helper instead of its own code.",
        "the function should call the helper.",
        "import the module in the function.",
        "have the function lean on the class.",
        "the function depends on the constant.",
        "the function should reuse an error defined in that file.",
        "use an error from the module in the function.",
    ),
    "behaviour": (
        "the function computes the total of the given values and returns it.",
        "it converts the input text into a list of records.",
        "the function splits the items into groups and yields each group in turn.",
        "it reads the file and returns the parsed contents as a dictionary.",
        "the function returns the remaining items sorted by quantity.",
        "the function formats the amount as a string with a currency sign.",
        "the function returns a list of (a, b) pairs, one per line of the input.",
        "it rounds the class to two places and returns it.",
        # the masks in prose too, so that they weigh the same on every side
        "the function in that file opens the resource and returns it.",
        "the function should: sort the items and return the first one.",
    ),
    "constraint": (
        "it raises an error when the argument is negative.",
        "an empty input is rejected with an error.",
        "if the key is missing, the function raises an error.",
        "the argument must be a positive integer, otherwise raise an error.",
        "invalid values are refused before anything is changed.",
        "anything that is not a number makes the function raise an error.",
        "the function never raises an error when the input is empty.",
        "the function in that file must refuse values above the limit.",
        "the function must give up after three attempts and use a delay of two seconds.",
        "for the function: at most three attempts are made.",
    ),
}
# a value aspect must beat behaviour and constraint by this much (cosine) to be read:
# below it, a statement holding a parameter list or a second name describes behaviour
VALUE_MARGIN = 0.05

# -- revision, with or without cue words (``graph``, ``revise``) ---------------------------
REVISE = 0.92  # cosine from which a same-subject fact revises the earlier one
REVISE_CUED = 0.55  # with a revision cue, this much similarity of its claim is enough
REVISE_AGAIN = 0.8  # a statement this close to what a cued one retracted revises it
SIMILAR = 0.75  # cosine for a ``similar`` edge
CLOSED_WORDS = 10  # a value-setting statement is short; a longer one is prose
SIMILAR_EDGES = 3  # per new node, at most
PROVISIONAL = 0.45  # cosine from which a later statement replaces a provisional one
# words by which a statement says it revises an earlier one (they help; none is needed)
CUE_WORDS = (
    "actually", "instead", "scratch that", r"forget (?:this|that|it|what)", "no longer",
    r"not any ?more", "rather than", "change of plan", "on second thought", "correction",
    r"revis\w*", r"replace[sd]? the", "the opposite holds", "from now on", "we changed",
    "changed my mind", r"(?:now |is )?outdated", "obsolete", "not:")
# the cues by which a statement quotes what it retracts ("Not: X", "forget this rule: X")
RETRACTING_CUES = ("not:", "forget", "(?:now |is )?outdated", "obsolete")
# a clause before a statement's first code span that sets a condition ("If empty, `f` ...")
# is part of its slot; any other is a remark ("Moving on, `f` ...") left out of its frame
CONDITION_WORDS = ("if", "when", "whenever", "unless", "while", "once", "after", "before",
                   "until", "since", "because", "although", "though", "where", "whereas")
# the verbs whose predicates hold several values: a function may need, reuse or call
# more than one thing, so a second such statement adds to the first (``graph.ADDITIVE``)
MANY_VALUED_VERBS = ("needs?", "uses?", "reuses?", "calls?", "imports?", "depends? on",
                     "relies on")
# words by which a statement says it holds only for a while: the next statement of the
# same predicate about its subject replaces it
PROVISIONAL_WORDS = (
    "for now", "for the moment", "for a first version", "as a first step", "to start with",
    "temporarily", "as a placeholder", r"(?:comes?|added|done|filled in) later")
RESTATE_WORDS = 0.7  # word-sequence similarity from which a statement restates another
RESTATE_COS = 0.7  # and the cosine it needs beside
RESTATE_MIN = 4  # words in common, at least (a three-word rule flips on one word)
NAME_CLOSE = 0.6  # name similarity from which a later dependency replaces an earlier one
NAME_NEAR = 0.4  # with the same module and kind, this much name similarity is enough
ROLE_CLOSE = 0.8  # or this much cosine between the two names' code in the repository
ASPECT_MARGIN = 0.1  # a statement's aspect must beat the runner-up by this much
CONVENTION = 0.45  # a convention must also be this close to one of its prototypes
CONSTRAINT_NEAR = 0.5  # two constraints this close (without their leads) set one rule
PARAPHRASE = 0.8  # two descriptions this close (without their leads) say one thing
BORROWED = 0.95  # a claim this close to another function's docstring describes that one
BORROW_SEARCH = 3  # functions of the repository a claim is compared with
JUDGED_AT_MOST = 2  # descriptions per new fact that the judge is asked about
# a statement describes what its function does when, its subject masked, it is closer to
# the behaviour prototypes (``PROTOTYPES``) than to those of these aspects by this much
# (a rule it keeps, a name it uses, said in prose); a later description replaces an
# earlier one (one account of what a function does: the latest), unless it says it adds
DESCRIBES = 0.05
DESCRIBED_APART = ("constraint", "dependency")
# an earlier claim about a function (what it does or must do, read by meaning) that lies
# this close to a sentence of another function's docstring, closer by ``LENT_MARGIN`` than
# a later claim about the function lies to any, and closer to that docstring than to the
# later claim, says what the other function does: the later claim replaces it (another
# writer's rewording of a sibling's docstring sits at 0.54-0.86 from it, below ``BORROWED``)
LENT = 0.75
LENT_MARGIN = 0.2
# words by which a statement says it adds to what was said, not replace it
ADDING_WORDS = ("also", "as well", "too", "in addition", "additionally", "besides",
                "another")
# words that keep a negation from negating a use ("not only uses g", "not just g")
NOT_NEGATING = ("only", "just", "merely")
# the words a line that only points at places may have beside its names ("(See `a.py`,
# `b.py::f`.)", "see also app/db.py")
POINTING_WORDS = frozenset({"see", "also", "cf", "eg", "ie", "and", "or", "in", "at", "the",
                            "here", "there"})

# the aspects a fact about a function may set, for the cue-free revision rules
# (``revise``): a statement's aspect is the one whose prototypes its MiniLM vector is
# closest to. Our own words, generic: no benchmark's phrasing.
REVISION_ASPECTS: dict[str, tuple[str, ...]] = {
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


# =========================================================================================
# The patterns and thresholds below were inside the modules that use them until issue 40's
# third session moved them here unchanged (every compiled pattern byte-identical, the
# graph-level bench the same on all 9 set x voice cells). Grouped by the module that reads
# with them; ``tests/memory/test_cards_rules_home.py`` keeps every other module of the
# package free of its own patterns, word lists and float thresholds.
# =========================================================================================

# -- the regression alarm (``alarm``): it reads the one phrasing per aspect that ``cards``
# writes itself (``Reading.form``), and "never raises `E`" as said -----------------------
# the parameter list of "`f` takes (a, b)"
ALARM_TAKES = re.compile(r"\btakes \(")  # its list: the balanced span from "("
# the name a dependency statement says the function must reference
ALARM_USES = re.compile(r"\b(?:needs|should reuse|reuses|uses|calls|should call) `([\w.]+)`")
# an exception the function must not raise
ALARM_NEVER = re.compile(r"\b(?:never|must not|should not|does not|doesn't) raises? `?([A-Z]\w*)`?")
# an exception the function must raise (at a clause start or after its subject / a modal)
ALARM_RAISES = re.compile(r"(?:^|[:;.]\s*|\bthat |\bit |\bmust |\bshould )"
                          r"[Rr]aises? `?([A-Z]\w*)`?")

# -- a card's audit (``card``): CICL's card fields must be filled and actionable ---------
# verbs an action hint must hold one of (else "use this when you act: ..." is put before it)
ACTION_VERBS = ("inspect", "read", "open", "search", "check", "update", "fix", "call", "run",
                "use", "compare", "look")
# a field holding only one of these is a placeholder, not a value
PLACEHOLDERS = frozenset({"todo", "tbd", "unknown", "not available", "n/a", "none", ""})
# a field led by one of them is a placeholder too ("TODO: fill in")
PLACEHOLDER_START = re.compile(r"^(todo|tbd|unknown|not available|n/a|none)\b", re.I)
# any of the action verbs, as a word
ACTION_VERB = re.compile(r"\b(?:" + "|".join(ACTION_VERBS) + r")\b")

# -- statements in the graph (``graph``): slots, cues, what is said of a function --------
# spaces left before punctuation once cue words are cut out ("X , Y" -> "X, Y")
SPACE_BEFORE_STOP = re.compile(r"\s+([,.;])")
# the separators of a qualified name ("m.py::C.f" -> C, f)
NAME_JOINS = re.compile(r"::|\.")
# an optional quote around a name said in prose (backtick, straight or curly quotes)
QUOTE = r"[`'\"\u2018\u2019\u201c\u201d]?"


def function_said(name: str) -> re.Pattern[str]:
    """A function's name however said: bare, quoted, dotted with its owners, called."""
    return re.compile(rf"{QUOTE}(?<![\w.])(?:[\w]+\.)*{re.escape(name)}(?:\(\))?(?![\w]){QUOTE}")


def class_said(owner: str) -> re.Pattern[str]:
    """A method's class said beside it ("`C`'s", "C's", "'C'")."""
    return re.compile(rf"{QUOTE}(?<![\w.]){re.escape(owner)}(?![\w.])(?:['\u2019]s\b|{QUOTE})")


# a revision cue anywhere in a statement (``CUE_WORDS``)
CUES = re.compile(r"\b(" + "|".join(CUE_WORDS) + ")", re.I)
# A statement that says it holds only for a while ("for now", "for a first version"): the
# next statement of the same predicate about its subject replaces it, cue or not.
PROVISIONAL_SAID = re.compile(r"\b(" + "|".join(PROVISIONAL_WORDS) + r")\b", re.I)
# the verb after a statement's first code span ("`f` should ..." -> "should")
PREDICATE = re.compile(r"`[^`\n]+`[\s,]*([A-Za-z]+)")
# the values a frame masks: code spans, numbers (and parenthesised lists, ``params``); and a
# lead of punctuation
CODE_SPAN = re.compile(r"`[^`\n]+`")
NUMBER = re.compile(r"\b\d+(?:\.\d+)?\b")
LEAD = re.compile(r"^[^\w`(]+")
# A remark the developer puts before naming the subject ("Actually, `f` ...", "Change of
# plan: for `f`: ...", "Scratch that. `f` ..."): a clause without code, set off by
# punctuation, shortly before the first code span. It says nothing about the slot; a
# condition ("If empty, `f` ...", "When ..., `f` ...") does, and is kept.
REMARK = re.compile(
    r"^(?!(?:" + "|".join(CONDITION_WORDS) + r")\b)"
    r"[^`\n]{1,80}[,:;.!?\u2013\u2014]\s+(?=[^`\n,:;.!?]{0,24}`)", re.I)
# Predicates that hold several values at once: a function may need, reuse or call more
# than one thing, so a second such statement adds to the first unless it names the same one.
# Searched in a frame: the verb names a thing of the code, quoted or written as an
# identifier ("needs `_`", "should reuse the `_`", "calls parse_price", "uses json.loads",
# "calls helper()", up to two words between: "imports from `_`", "needs both `_`"; what
# follows "imports" is always a module); prose that merely uses such a verb ("relies on
# introspection", "use a key function to ...") describes behaviour and is read as such.
ADDITIVE = re.compile(
    r"\bimports?\s+[a-z_]|\b(" + "|".join(MANY_VALUED_VERBS) + ")"
    r"\s+(?:[a-z]+\s+){0,2}(?!e\.g\b|i\.e\b)(?:`_`|[a-z_][\w.]*(?:_\w|\.\w|\(_\)))")
# a lead naming the subject before a colon ("For `f`: X", "`f` should: X")
LED = re.compile(r"^[^:`\n]{0,24}`[^`\n]+`[^:`\n]{0,24}:\s+(?=\S)")
# the words tying a statement's subject, masked, to what it says of it, left out of the
# claim compared with docstrings and other claims ("`f` should set X" -> "set X", "Have f
# return X" -> "return X", "I want f to raise" -> "raise", "For f, X" -> "X"): the
# template's "`f` should: X" loses its lead by ``LED``; other phrasings by this
CLAIM_LEAD = re.compile(
    r"^\W*(?:(?:for|about|regarding)\s+the function\s*[:,]\s*|(?:(?:i(?:\s+(?:want|need|"
    r"would like)|['\u2019]d like)|have|let|make|get)\s+)?(?:the class(?:['\u2019]s)?\s+)?"
    r"the function(?:\s+on the class)?"
    r"(?:['\u2019]?s\b)?\s*(?:(?:should|must|shall|will|needs? to|has to|have to|ought to|"
    r"is (?:meant|supposed|expected|there) to|is to|to)\b\s*)?[:,]?\s*"
    r"|(?:the\s+)?(?:job|purpose|role|point) of the function is to\s+)", re.I)
# the words a sentence, or a lead before a colon, may hold and still say nothing of the
# function but that a claim follows or came before ("Here is what `f` is for.", "That is
# what `f` should do.", "What `f` does: X", "Behaviour of `f`: X", "Can you make `f` do the
# following? X"): such a part is left out of the claim (its name masked, ``MASK_SUBJECT``)
# when it also holds a marker (``LEAD_MARKERS``, all of them lead words too): a part that
# only says what the function is or does ("f works.", "f should be on the class.") is a
# claim, not a lead
LEAD_MARKERS = frozenset({"what", "how", "here", "this", "that", "following", "behaviour",
                          "behavior", "job", "purpose", "role", "goal", "task", "description",
                          "summary"})
LEAD_ONLY_WORDS = LEAD_MARKERS | frozenset({
    "the", "function", "class", "a", "an", "it", "its", "these", "is", "are", "be", "should",
    "must", "shall", "will", "would", "can", "could", "do", "does", "did", "for", "of", "to",
    "on", "about", "regarding", "you", "please", "make", "i", "d", "s", "want", "need",
    "like", "so", "now", "next", "also", "then",
})
# a cue that quotes what it retracts (``RETRACTING_CUES``), at the cue's start
RETRACTING = re.compile(r"^(?:" + "|".join(RETRACTING_CUES) + ")", re.I)

# -- what the developer said (``said``): statements, questions, pointers ------------------
# the confidence of a fact the extractor chose / of a sentence kept when it failed / of a
# statement kept as said (``cards_facts=said``); from the first increment (331bd12)
EXTRACTED_CONFIDENCE = 0.9  # a fact the extractor chose
FALLBACK_CONFIDENCE = 0.6  # a developer sentence kept because the extractor failed
SAID_CONFIDENCE = EXTRACTED_CONFIDENCE  # a statement kept as said by choice (cards_facts)
# a sentence led by a question word or a modal (``QUESTION_WORDS``, ``MODAL_WORDS``)
QUESTION = re.compile(r"^(?:" + "|".join(QUESTION_WORDS + MODAL_WORDS) + r")\b",
                       re.I)
# a modal leading a question, with the space after it
MODAL = re.compile(r"^(?:" + "|".join(MODAL_WORDS) + r")\b\s*", re.I)
# a word of a question, quotes and a call's "()" left out
SAID_WORD = re.compile(r"[`'\"]?([\w.'/:-]+)(?:\(\))?[`'\"]?")
# the endings of an inflected English word and what it is inflected from ("cached" from
# "cache", "chunked" from "chunk"): a bare word so inflected is a word, not a name
INFLECTIONS = (("ies", "y"), ("ied", "y"), ("ing", ""), ("ing", "e"), ("ed", ""), ("ed", "e"),
               ("es", ""), ("s", ""))
# the last part of a dotted word that makes it a file's name, not a module's member
# ("report.txt", "filename.ext")
FILE_EXTENSIONS = frozenset({"txt", "json", "csv", "md", "log", "yaml", "yml", "toml",
                             "ini", "cfg", "ext", "py", "pyi", "html", "xml", "rst", "zip",
                             "gz", "tar", "pdf", "png"})
# the words before a plain word that put it in a verb's place ("it should wrap the lines"),
# and those after it that make it a verb with its object ("strip the padding"): such a word
# is no name even where the repository defines it in a file the statement names
VERB_BEFORE = frozenset({"to", "will", "would", "should", "can", "could", "must", "may",
                         "might", "shall", "and", "or", "it", "they", "we", "you", "i",
                         "also", "then", "not"})
NAMED_AFTER = ("for", "from", "in", "out", ",", ";", ".", ")")
# a word of a text, as names are compared whole ("`f`'s" says f)
WORD = re.compile(r"\w+")
# an opener before a question or heading, cut before reading it (4ab5737): before a
# question when it names no code or a question word follows ("For f, what should it
# return?"; not "Put f in m.py, is that fine?"), before a heading when it ends in a colon,
# or names no code and no relative clause follows ("Also, where f lives."; not "f uses g,
# which is in m.py.")
OPENER = re.compile(r"^[^,:?]{0,40}?[,:]\s+")  # "Also, ", "Moving on: ", "For `f`, "
WH_WORD = re.compile(r"^(?:what|which|how|why|where|who|when|whose)\b", re.I)
RELATIVE = re.compile(r"^which\b", re.I)
# a heading worded as a question: a question word and no clause after
# (a colon only at its end: "What `f` does: X" leads a claim)
HEADING = re.compile(r"^(?:" + "|".join(HEADING_WORDS) + r")\b[^,;:]*:?$",  # no clause after
                      re.I)
# where one sentence ends and the next starts (also in docstrings, ``ground``)
SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+")
NAMED_SPAN = re.compile(r"`[\w./:-]+`")  # a code span holding one name or path, no code
# a path said without backticks ("app/db.py", "app/db.py::f", "src/pkg/")
BARE_PATH = re.compile(r"(?<![\w`/])[\w.-]+(?:/[\w.-]+)*\.pyi?(?:::[\w.]+)?(?![\w`])"
                        r"|(?<![\w`/])[\w.-]+/[\w./-]*\w(?:::[\w.]+)?(?![\w`])")
# punctuation a pointing line may hold beside its names
PUNCTUATION = re.compile(r"[()\[\],.;!]")

# -- the names a statement holds (``spoken``) --------------------------------------------
# "import" in a sentence: a capitalised word there may be a class
IMPORT_WORD = re.compile(r"\bimport\b")
# the words before a name imported by "from m import g" / "import g" / "from g"
IMPORT_BEFORE = re.compile(r"\bimport\s+$")
FROM_IMPORT_BEFORE = re.compile(r"\bfrom\s+\S+\s+import\s+$", re.I)
IMPORT_OR_FROM_BEFORE = re.compile(r"\b(?:import|from)\s+$")
# a token: a code span, a quoted name, or a bare word, path or dotted name
TOKEN = re.compile(
    r"`([^`\n]+)`"  # a code span
    r"|(?<![\w'\"])['\"\u2018\u201c]([A-Za-z_][\w./:-]*(?:\(\))?)['\"\u2019\u201d](?![\w])"
    r"|(?<![\w./'\u2019-])([A-Za-z_][\w./:-]*(?:\(\))?)")  # a bare word, path or dotted name
# a code span that holds one name (not code)
NAME_LIKE = re.compile(r"^[A-Za-z_][\w.:/-]*$")
# a path ("a/b.py", "a/b")
PATH = re.compile(r"^[\w.-]+(?:/[\w.-]+)*\.pyi?$|^[\w.-]+(?:/[\w.-]+)+$")
# a word spelled like code: snake_case, camelCase, CamelCase with a second capital, dotted
CODE_SPELLING = re.compile(r"_|[a-z][A-Z]|^[A-Z][a-z0-9]+[A-Z]|\w\.\w")
# a determiner just before a word: the word is a noun ("a socket"), not a module
DETERMINED = re.compile(r"\b(?:" + "|".join(DETERMINERS) + r")\s+$", re.I)
# a word at a sentence's start (its capital says nothing)
SENTENCE_START = re.compile(r"(?:^|[.:;!?(]\s*)\W*$")
# "from m" (or "out of m": TAKEN_FROM's words) after a word: where it comes from ("Decimal
# from decimal"); the module's name ends on a letter or digit, not on the sentence's full
# stop ("from itertools.");
# ``the``: said with an article, ``quote``: in a code span or quotes, ``after``: the next word
FROM_WORD = re.compile(r"\s*,?\s*\(?\s*(?:"
                       + "|".join(w.replace(" ", r"\s+") for w in TAKEN_FROM)
                       + r")\s+(?P<the>the\s+)?(?P<quote>[`'\"])?"
                       r"(?P<source>[a-z_](?:[\w./]*\w)?)[`'\"]?(?P<after>\s+\w+)?")
# between a class and its method: "C's f"
OWNED = re.compile(r"^(?:'s|\u2019s)\s+(?:`|'|\")?$")
# between a method and its class: "f on C", "f method of the class C"
ON_CLASS = re.compile(r"^(?:`|'|\")?\s+(?:on|of|method of|method on)\s+(?:the\s+)?(?:class\s+)?"
                 r"(?:`|'|\")?$")
# the end of a source said in parentheses ("g (m module)")
CLOSED_SOURCE = re.compile(r"\s*(?:module|package)?\s*\)")
# the words between a name and its source said after it (``SOURCE_WORDS``)
SOURCE_AFTER = re.compile(r"\s*(?:\(\s*(?:from\s+)?(?:the\s+)?"  # "g (from m)", "g (m)"
                    r"|,?\s*(?:(?:which|that)\s+(?:lives|is|comes)\s+"  # "g, which lives in m"
                    r"|(?:defined|found|kept)\s+)?(?:"
                    + "|".join(w.replace(" ", r"\s+") for w in SOURCE_WORDS)
                    + r")\s+(?:the\s+)?)", re.I)
# a source said before its names ("from m, g", "from m import g")
FROM_BEFORE = re.compile(r"(?:^|[.;:!?]\s*)\W*from\s+(?:the\s+)?$", re.I)  # fronted
FRONTED = re.compile(  # "from m, g", "from m import g"
    r"[`'\"]?\s*(?:(?:" + "|".join(MODULE_WORDS) + r")\s*)?(?:,|\s+import\b)")

# -- negation and uses (``uses``) ---------------------------------------------------------
# a name in a code span (also ``ground``: docstring spans)
NAME_SPAN = re.compile(r"`([^`\n]+)`")
NEGATED = re.compile(  # a negation, up to three words, a verb of use in any form
    r"(?:\bnot|\bnever|n't|\bno longer)\s+(?:(?!" + r"\b|".join(NOT_NEGATING)
    + r"\b)[\w'`]+\s+){0,3}(?:" + "|".join(v.replace(" ", r"(?:s|d|ed|ing)?\s+")
                                        for v in USE_VERBS) + r")(?:s|d|ed|ing)?\b",
    re.I)
# "... anything but": the negation says to use what follows (``ALL_WORDS``, ``EXCEPT_WORDS``)
ANYTHING_BUT = re.compile(r"\s*(?:\w+\s+){0,2}?(?:" + "|".join(ALL_WORDS) + r")\s+(?:"
                  + "|".join(EXCEPT_WORDS) + r")\b", re.I)
# a negation said object-first ("Don't use `g` in `f`."): about the function named last
# (ad6d365; still a frame: a bare or quoted name is not read here)
OBJECT_FIRST = re.compile(
    r"^\W*(?:please\s+)?(?:don't|do not|never)\s+\w+\s+`[^`\n]+`(?:\s+\w+){0,4}?\s+"
    r"(?:in|inside|within|for)\s+`([^`\n]+)`", re.I)

# the characters a parenthesised list is looked for in after its opening (``params``): a
# pasted line of thousands of unclosed "(" costs a bounded scan each, not the whole line
LIST_CHARS = 2000
# how far the reading looks on each side of a word for its context ("from m import g",
# "a socket", "not in m.py"): a few words, never the whole statement again for each word
# (a pasted 32,000-character line took 15-30 s)
CONTEXT_CHARS = 200
LIST_MISSES = 50  # openings that close nowhere, after which a text holds no list (a log, code)

# -- reading a statement (``reading``) ---------------------------------------------------
# an article before a mask that has its own ("the the function")
DOUBLE_ARTICLE = re.compile(r"\b(?:a|an|the)\s+(?=(?:the|an)\b)", re.I)
# a place mask with the article or module word said around it ("the that file module")
MASKED_PLACES = tuple((re.compile(r"\b(?:the\s+)?" + re.escape(mask) + r"(?:\s+(?:"
                                  + "|".join(MODULE_WORDS) + r"))?\b"), mask)
                      for mask in (MASK_PLACE, MASKS["module"]))
# an acting word after a name (``ACTING_WORDS``): the name is the subject
ACTING = re.compile(r"[`'\"]?\s+(?:" + "|".join(ACTING_WORDS) + r")\b")

# -- revision rules (``revise``) ------------------------------------------------------------


def subject_said(key: str) -> re.Pattern[str]:
    """A subject's name in a statement, with its path or owners, to leave it out."""
    return re.compile(rf"`?[\w./:]*\b{re.escape(key)}\b(?:\(\))?`?", re.I)


SINGLE_OR_UNCLEAR = ("behaviour", "")  # what a later description may replace (judge)
# a word by which a statement adds (``ADDING_WORDS``)
ADDS = re.compile(r"\b(" + "|".join(ADDING_WORDS) + r")\b", re.I)
# the end of a statement's first sentence
FIRST_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z`(\"'])")
# a value a statement sets: a code span, a quoted string, a number, a code-spelled word
VALUE = re.compile(r"`[^`\n]+`|\"[^\"\n]*\"|'[^'\n]*'|\b\d+(?:\.\d+)?\b|"
                    r"\b[A-Z][a-z0-9]+(?:[A-Z][A-Za-z0-9]*)+\b|\b\w+_\w+\b")
# the words restatement compares
WORD_RUN = re.compile(r"[A-Za-z0-9_.]+")

# -- the repository's docstrings and code (``ground``) ------------------------------------
# a name as a comparison key: lower-case letters and digits only
NOT_ALNUM = re.compile(r"[^a-z0-9]")
# a Python file's path
PY_FILE = re.compile(r"^[\w./-]+\.pyi?$")
RST_ROLE = re.compile(r":[\w.:-]+:`~?([^`]+)`")  # :exc:`ValueError` -> `ValueError`
RST_LITERAL = re.compile(r"``([^`]+)``")  # ``False`` -> `False`
RST_EMPHASIS = re.compile(  # *text* -> text; not "*args and **kwargs", not "2 * 3"
    r"(?<![\w*])\*{1,2}([^*\s](?:[^*]*?[^*\s])?)\*{1,2}(?![\w*])")
# a definition line, with its indentation
DEF_LINE = re.compile(r"^([ \t]*)(?:async[ \t]+)?(?:def|class)\b", re.M)
# the plain words by which a docstring names its function (three letters or more) ...
PLAIN_WORD = re.compile(r"[A-Za-z]{3,}")
# ... outside any code span
ANY_SPAN = re.compile(r"`[^`]*`")

# -- building the graph from a turn (``build``) -------------------------------------------
# a fenced block (an unclosed one runs to the end)
FENCED = re.compile(r"```.*?(?:```|\Z)", re.S)
# a word of four letters or more that may name code
LONG_WORD = re.compile(r"\b[A-Za-z_]\w{3,}\b")

# -- what a name is (``names``) -----------------------------------------------------------
# an exception's name or base ends with one of these
EXCEPTION_WORD = re.compile(r"(Error|Exception|Warning)\b")
EXCEPTION_END = re.compile(r"(Error|Exception|Warning)$")
# the words of a name ("LRUCache" -> LRU, Cache)
NAME_PART = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")

# -- packing cards (``pack``) -------------------------------------------------------------
# the words near-duplicates are compared by
WORD_CHARS = re.compile(r"\w+")
MIN_FIRST, MIN_AFTER, STALE_FLOOR = 0.02, 0.06, 0.12  # CICL's BudgetPolicy
# from the first increment (331bd12)
REDUNDANT = 0.82  # word-set Jaccard from which a unit repeats a selected one
# (3b367d5)
BRIEF_NECESSITY = 0.4  # repository code less necessary than this shows its signature

# -- tracebacks and test output in the chat (``failures``) --------------------------------
# a traceback frame: file, line, function
TRACE_FRAME = re.compile(r'^\s*File "([^"]+)", line (\d+), in ([\w<>.]+)', re.M)
# an exception line ("ValueError: bad", or the name alone): not a sentence that starts with
# one ("InventoryError from errors.py should be used by f.")
ERROR_LINE = re.compile(
    r"^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Failure|Warning))(?::(.*)|\s*)$")
# pytest's short summary "FAILED id - message" and its "E   ..." lines
PYTEST_FAILED = re.compile(r"^FAILED (\S+?)(?:::(\w+))?(?: - (.+))?$", re.M)
PYTEST_E = re.compile(r"^E\s+(\S.*)$", re.M)
# a traceback's first line or a frame
TRACE_LINE = re.compile(r'^\s*(?:Traceback \(most recent call last\)|File "[^"]+", line \d+)')

# -- test runs among the tool calls (``testruns``): pytest's and unittest's output --------
# pytest's closing counts line ("2 failed, 40 passed in 1.20s")
PYTEST_COUNTS = re.compile(
    r"^=*[ \t]*(?P<body>(?:\d+ [a-z]+(?:, )?)+|no tests ran)[ \t]+in[ \t]+\d+(?:\.\d+)?[ \t]*s"
    r"\b[^\n]*$", re.M)
# one count of it
PYTEST_COUNT = re.compile(r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed|deselected|rerun)")
# the short summary's lines, verbose lines, section rules, E lines, an interrupted run
PYTEST_SUMMARY_LINE = re.compile(r"^(FAILED|ERROR|PASSED|XPASS) (\S+)(?: - (.*))?$", re.M)
PYTEST_VERBOSE = re.compile(r"^(\S+::\S+?) (PASSED|FAILED|ERROR)\b", re.M)
PYTEST_SECTION = re.compile(r"^_{3,} (.+?) _{3,}$", re.M)
PYTEST_RULE = re.compile(r"^={3,}.*$", re.M)
PYTEST_E_LINE = re.compile(r"^E +(\S.*)$", re.M)
PYTEST_STOPPED = re.compile(r"^(?:!{3,} .*(?:stopping after|Interrupted|KeyboardInterrupt).*"
                      r"|Interrupted: .*)$", re.M)
# unittest's "Ran N tests", "OK" / "FAILED (...)", failure headers, verbose lines, rules
UNITTEST_RAN = re.compile(r"^Ran (\d+) tests? in \d+(?:\.\d+)?s$", re.M)
UNITTEST_RESULT = re.compile(r"^(OK|FAILED)(?: \(([^)]*)\))?$", re.M)
UNITTEST_HEADER = re.compile(r"^(FAIL|ERROR|UNEXPECTED SUCCESS): (\w+) \(([\w.]+)\)", re.M)
UNITTEST_VERBOSE = re.compile(r"^(\w+) \(([\w.]+)\)(?:\n[^\n]*)? \.\.\. (ok|FAIL|ERROR)$", re.M)
UNITTEST_RULE = re.compile(r"^(?:={20,}|-{20,})$", re.M)
# an exception line of a test's output
EXCEPTION_LINE = re.compile(r"^[A-Za-z_][\w.]*(?:Error|Exception|Exit|Failure|Interrupt|"
                        r"Warning)\b.*$")
# the commands read as test runs
TEST_RUNNERS = ("pytest", "py.test", "unittest")
# pytest / unittest options that take a value (the value is no test id)
PYTEST_VALUED = frozenset({"-k", "-m", "-p", "-c", "-o", "-W", "-r", "-n", "--maxfail",
                     "--deselect", "--ignore", "--ignore-glob", "--rootdir", "--tb",
                     "--durations", "--confcutdir", "--basetemp", "--junitxml", "--log-level",
                     "--import-mode", "--cov", "--timeout", "--pattern", "--dist",
                     "--top-level-directory", "--start-directory"})
# options that run a selection of the tests, not all of them
PYTEST_SELECTING = frozenset({"-k", "-m", "--deselect", "--lf", "--last-failed", "--sw",
                        "--stepwise", "--ff"})
# options that stop at the first failure
PYTEST_STOPPING = re.compile(r"^(?:-x|--exitfirst|--maxfail(?:=.*)?|-f|--failfast|--sw|--stepwise|"
                       r"-\w*x\w*)$")
# shell operators that join commands
SHELL_JOINS = frozenset({"&&", "||", ";", "|", "&"})
SHELLS = frozenset({"sh", "bash", "zsh", "dash"})  # whose -c line is read as the command

# -- selection (``backend``, ``score``): CICL's utility and our boosts -------------------------
# (79c9443)
ALARM_BOOST = 2.0  # a fact the latest code breaks goes before everything, pins included
# CICL's utility weights and cost (``score``'s docstring gives the formula)
W_SHIFT, W_NECESSITY, W_UPLIFT, W_RISK, W_COST = 0.34, 0.26, 0.28, 0.22, 0.08
COST_TOKENS = 1000  # tokens at which the token part of the cost reaches 1
COST_RISK = 0.2  # share of the negative-transfer risk counted as cost
# Background: repository code that neither the query nor a fact about what it names
# points at, and, when the query names a subject, a unit about another subject. It may
# inform the answer; it rarely changes the next action (shift and necessity scaled; 7b4cbca).
BACKGROUND = 0.25
# a query that names no subject keeps the repository search's first SEARCH_LEAD hits (its
# own hybrid ranking, not the unit's cosine) in the foreground: a where-is question in the
# developer's words got one test card and never the function before (webcolors'
# normalize_hex, the index's first hit, at utility 0.04 under the floor); all hits in the
# foreground cost +9 % (demo) and +16 % (rfc3986, varied) prompt tokens for the same recall
# (79aaf6c)
SEARCH_LEAD = 1
# the proxy scorer's prior by unit type (first increment, 331bd12)
TYPE_PRIOR = {"fact": 0.15, "failure": 0.15, "tests": 0.15, "summary": 0.1, "code": 0.1,
              "symbol": 0.0, "file": 0.0}
